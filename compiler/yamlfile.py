"""Read YAML spec files with line numbers, so errors can point at the offending line.

PyYAML's `compose` keeps marks on every node; we load plain data for the compiler and keep the
node tree to map a data path (e.g. ``("conditions", 2, "shape")``) back to a line.

Spec files are user input, so the reader is defensive as well as precise:
  - aliases are bounded: at most `MAX_ALIASES` per file, and the document they expand to at
    most `MAX_EXPANDED_NODES` nodes, so a "billion laughs" file is refused in milliseconds
    instead of exhausting memory;
  - nesting is bounded (`MAX_DEPTH`), so a deeply nested file is a message, not a
    RecursionError;
  - a key given twice in one mapping is an error naming both lines (PyYAML would keep the
    last value silently);
  - a lone surrogate written as a `\\ud83d` escape is refused: it cannot be written as UTF-8;
  - the file must be a regular file of at most `MAX_BYTES`, and valid UTF-8 (the message
    names the line of the first bad byte).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kgbench.errors import Location, SpecError

from .paths import display_path, read_input_bytes

MAX_ALIASES = 64
MAX_EXPANDED_NODES = 200_000
MAX_DEPTH = 64
# Longer integers than any declaration needs; Python refuses past 4,300 digits with a
# ValueError the loader does not expect (a 5,000-digit `replicates` was a traceback).
MAX_INT_CHARS = 100
MAX_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class YamlDoc:
    path: Path
    data: Any
    root: yaml.Node | None

    def line_of(self, data_path: Sequence[str | int]) -> int | None:
        """1-based line of the node at `data_path`, or of its nearest existing ancestor."""
        node = self.root
        line = node.start_mark.line + 1 if node is not None else None
        for key in data_path:
            if isinstance(node, yaml.MappingNode):
                nxt = next((v for k, v in node.value if k.value == key), None)
                if nxt is None:
                    # point at the key's parent mapping; a missing key has no line of its own
                    break
                node = nxt
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
                if key >= len(node.value):
                    break
                node = node.value[key]
            else:
                break
            line = node.start_mark.line + 1
        return line

    def location(self, data_path: Sequence[str | int] = (), field: str | None = None) -> Location:
        return Location(display_path(self.path), self.line_of(data_path), field)


class _Refused(Exception):
    """A structural limit was hit while composing; carries the node that hit it."""

    def __init__(self, message: str, mark: yaml.Mark | None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark
        self.field = field


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts aliases and nesting depth while it composes the node tree."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _Refused(
                    f"more than {MAX_ALIASES} aliases (*name); expected a plain spec file",
                    self.peek_event().start_mark,
                )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(
                    f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _check_tree(root: yaml.Node) -> None:
    """Duplicate keys, lone surrogates, and the size the aliases expand to, in one walk.

    Each node is visited once (aliases share nodes), and the expanded size of every node is
    computed from its children's, so the check is linear in the file however the aliases
    multiply.
    """
    expanded: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            visiting.discard(key)
            children = _children(node)
            total = 1 + sum(expanded[id(c)] for c in children)
            if total > MAX_EXPANDED_NODES:
                raise _Refused(
                    f"the aliases expand this document beyond {MAX_EXPANDED_NODES:,} nodes; "
                    "expected a plain spec file",
                    node.start_mark,
                )
            expanded[key] = total
            continue
        if key in expanded:
            continue
        if key in visiting:
            raise _Refused("an alias refers to its own ancestor (a recursive document)", None)
        visiting.add(key)
        if isinstance(node, yaml.ScalarNode) and _has_surrogate(node.value):
            raise _Refused(
                "contains a lone surrogate escape (e.g. \\ud83d), which is not a character; "
                "expected valid Unicode text",
                node.start_mark,
            )
        if (
            isinstance(node, yaml.ScalarNode)
            and node.tag == "tag:yaml.org,2002:int"
            and len(node.value) > MAX_INT_CHARS
        ):
            raise _Refused(
                f"an integer of {len(node.value):,} characters; expected at most "
                f"{MAX_INT_CHARS} digits",
                node.start_mark,
            )
        if isinstance(node, yaml.MappingNode):
            _check_keys(node)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in expanded)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_keys(node: yaml.MappingNode) -> None:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = (key_node.tag, key_node.value)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise _Refused(
                f"key '{key_node.value}' appears twice in one mapping (first on line "
                f"{seen[key]}); expected each key once",
                key_node.start_mark,
                field=str(key_node.value),
            )
        seen[key] = line


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and any("\ud800" <= ch <= "\udfff" for ch in text)


def decode_utf8(data: bytes, shown: str) -> str:
    """Strict UTF-8; the error names the line and column of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError(
            f"not valid UTF-8: byte 0x{data[exc.start]:02x} at column {column} ({exc.reason}); "
            "expected UTF-8 text",
            Location(shown, line),
        ) from None


def read_yaml(path: Path) -> YamlDoc:
    """Parse one YAML file; malformed or hostile YAML becomes a SpecError naming the line."""
    return _parse(path, read_input_bytes(path, MAX_BYTES))


# The documents `read_yaml_once` parsed, by path as given: (the bytes parsed, the document).
_PARSED: dict[str, tuple[bytes, YamlDoc]] = {}
PARSED_KEPT = 8  # a few schema files a process reads; a test session reads many, so bounded


def read_yaml_once(path: Path) -> YamlDoc:
    """`read_yaml(path)`, parsed once per process while the file holds the same bytes, for
    callers that only read the document, never change it: the domain schema's pre-check
    (`schema.load_schema`) and the lines of its elements for Biolink's findings
    (`biolink._Locator`) read the same file one after the other, ~20 ms each of a
    100,000-assertion validation. The bytes are read (and refused) as `read_yaml` reads
    them and compared with those parsed before, so an edited file is parsed anew; a file
    that cannot be parsed raises as `read_yaml` raises, and is not kept."""
    data = read_input_bytes(path, MAX_BYTES)
    key = str(path)
    kept = _PARSED.get(key)
    if kept is not None and kept[0] == data:
        return kept[1]
    doc = _parse(path, data)
    _PARSED.pop(key, None)
    if len(_PARSED) >= PARSED_KEPT:
        del _PARSED[next(iter(_PARSED))]  # the oldest
    _PARSED[key] = (data, doc)
    return doc


def _parse(path: Path, data: bytes) -> YamlDoc:
    """The document of `data`, the bytes of the file at `path` (named in messages)."""
    shown = display_path(path)
    text = decode_utf8(data, shown).removeprefix("\ufeff")
    loader = None
    try:
        loader = _BoundedLoader(text)  # its reader already rejects non-printable characters
        root = loader.get_single_node()
        if root is not None:
            _check_tree(root)
        data = loader.construct_document(root) if root is not None else None
    except _Refused as exc:
        line = exc.mark.line + 1 if exc.mark is not None else None
        raise SpecError(exc.message, Location(shown, line, exc.field)) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise SpecError(
            f"character U+{exc.character:04X} is not allowed in YAML; expected printable text",
            Location(shown, line),
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line = mark.line + 1 if mark is not None else None
        raise SpecError(f"malformed YAML: {problem}", Location(shown, line)) from None
    finally:
        if loader is not None:
            loader.dispose()
    return YamlDoc(path, data, root)

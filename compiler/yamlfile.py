"""Read YAML spec files with line numbers, so errors can point at the offending line.

PyYAML's `compose` keeps marks on every node; we load plain data for the compiler and keep the
node tree to map a data path (e.g. ``("conditions", 2, "shape")``) back to a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kgbench.errors import Location, SpecError

from .paths import display_path


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


def read_yaml(path: Path) -> YamlDoc:
    """Parse one YAML file; malformed YAML becomes a SpecError naming the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("file not found", Location(display_path(path))) from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"not valid UTF-8 ({exc.reason})", Location(display_path(path))) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line = mark.line + 1 if mark is not None else None
        raise SpecError(f"malformed YAML: {problem}", Location(display_path(path), line)) from None
    return YamlDoc(path, data, root)

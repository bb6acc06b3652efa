"""The one reader of untrusted text, and one encoder per sink for text that goes back out.

Every byte kgbench did not just make itself (a model's answer, a user's file, a compiled or
published document that anyone could have edited) is read here. Python's parsers fail in
more ways than their documented error: `json.loads` raises `JSONDecodeError`, but also a
plain `ValueError` for an integer of more than 4,300 digits, `RecursionError` for text nested
about a thousand levels deep; reading a file raises `UnicodeDecodeError` and `OSError`; the
csv module raises `csv.Error` for a field over its 131,072-character limit. Readers that
caught only some of these crashed on the rest, one surface at a time. Here each failure
becomes one of two things:

- for a user's or a compiled file: a `UserError` naming the file and the line;
- for a model's answer: a recorded parse status (`parse_json_or_none` returns None), never
  an exception, because whatever a model sends is logged and scored.

Lines are split on `\\n` only: `str.splitlines()` also splits on U+2028, U+0085 and other
characters that JSON strings may hold raw, which turns one record into two bogus ones.

Text going out passes one encoder per sink: `for_terminal` (control characters, escape
sequences and lone surrogates escaped, so a message is one line that cannot repaint the
screen), `for_prompt` (lone surrogates escaped, which no HTTP client can encode),
`csv_cell` (spreadsheet formulas neutralised) and `tsv_field` (a field KGX's TSV reader,
pandas with its default quoting, reads back unchanged).

YAML has its own bounded reader in `compiler.yamlfile` (aliases, depth, duplicate keys),
which every declaration and study file already passes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from collections.abc import Iterator
from pathlib import Path

# Names for annotations only (PEP 563 keeps them unevaluated), imported only by a type
# checker: a no-op compile reads its manifest here, and `typing` plus `kgbench.errors`
# (dataclasses, hence inspect) cost a third of its budget, about twice a bare interpreter's
# start (compiler/freshness.py). The errors themselves are built by `_user_error`, on the
# first error.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kgbench.errors import Location, UserError

# Deeper than any document kgbench writes or any response contract needs (three levels);
# shallow enough that every recursive walk downstream (pydantic, jsonschema, our own
# code) stays far from the interpreter's recursion limit.
MAX_DEPTH = 64
# Python's own limit on integer string conversion: a longer integer is refused, not parsed.
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
# A csv field may be as long as the file it sits in; the csv module's default (131,072
# characters) turned a long note into a traceback. The size of a table is bounded elsewhere.
CSV_FIELD_LIMIT = 1 << 30


class ParseError(ValueError):
    """Text that is not the JSON it should be; `line` is 1-based where known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(message)


def _user_error(message: str, file: str, line: int | None = None) -> UserError:
    """The UserError of a failure at `file` (and `line`), kgbench.errors imported on first use."""
    from kgbench.errors import Location, UserError

    return UserError(message, Location(file, line))


def _no_constant(name: str) -> Any:
    raise ParseError(f"{name} is not a JSON number")


def parse_json(text: str, *, max_depth: int | None = MAX_DEPTH, allow_nan: bool = False) -> Any:
    """The JSON value of `text`, or a ParseError saying why not (never another exception).

    NaN and Infinity are refused unless `allow_nan` (they are not JSON, and a NaN that
    passes a range check silently means something else). `max_depth` None skips the depth
    walk for large compiled documents (their own depth is fixed; RecursionError still caught).
    """
    try:
        constant = None if allow_nan else _no_constant
        value = json.loads(text, parse_constant=constant)
    except ParseError:
        raise
    except json.JSONDecodeError as exc:
        raise ParseError(f"not valid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from None
    except RecursionError:
        raise ParseError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # an integer longer than Python converts
        if "integer string conversion" in str(exc):
            raise ParseError(f"a number longer than {MAX_INT_DIGITS} digits") from None
        raise ParseError(f"not valid JSON: {exc}") from None
    deep = max_depth is not None and _may_nest_deeper(text, max_depth)
    if deep and depth_of(value, max_depth) > max_depth:
        raise ParseError(f"JSON nested deeper than {max_depth} levels")
    return value


def _may_nest_deeper(text: str | bytes, limit: int) -> bool:
    """False when `text` holds at most `limit` opening brackets, so no parse of it can nest
    deeper (brackets inside strings only over-count): the depth walk is then skipped, which
    spares most answers and records a second pass over their parsed value."""
    if isinstance(text, str):
        return text.count("{") + text.count("[") > limit
    return text.count(b"{") + text.count(b"[") > limit


def parse_json_or_none(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """A model's text as JSON, or None when it is not (the caller records a parse status).

    NaN and Infinity are read as Python reads them: a model's answer is evidence, and
    whether a NaN is a valid answer is the response contract's decision, not the reader's.
    """
    try:
        return parse_json(text, max_depth=max_depth, allow_nan=True)
    except ParseError:
        return None


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a parsed JSON value, counted without recursion; stops past `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return depth
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


_C0 = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def control_character_at(value: Any) -> str | None:
    """The path (`title`, `patient.labs[0].name`) of the first string in a parsed JSON value
    holding a control character other than tab and line breaks (NUL, ESC, ...), else None.
    The domain tables refuse them; a scenario file read as JSON must too. Iterative."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _C0.search(item):
                return path or "(value)"
        elif isinstance(item, dict):
            for k, v in item.items():
                key = f"{path}.{k}" if path else str(k)
                if isinstance(k, str) and _C0.search(k):
                    return key
                stack.append((v, key))
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return None


def finite(value: Any) -> bool:
    """A real number that is neither NaN nor infinite (bool is not a number here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# --- files ---------------------------------------------------------------------------------


def read_bytes(path: Path, what: str = "file", max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file; missing, a folder, a device, unreadable or over
    `max_bytes` is one UserError naming the path."""
    path = Path(path)
    try:
        if not path.exists():
            raise _user_error(f"file not found; expected a {what}", str(path))
        if path.is_dir():
            raise _user_error(f"is a directory; expected a {what}", str(path))
        if not path.is_file():
            raise _user_error(f"is not a regular file; expected a {what}", str(path))
        if max_bytes is not None and path.stat().st_size > max_bytes:
            raise _user_error(f"larger than {max_bytes} bytes; expected a {what}", str(path))
        return path.read_bytes()
    except OSError as exc:
        raise _user_error(
            f"cannot read ({exc.strerror or type(exc).__name__}); expected a {what}", str(path)
        ) from None


def decode(data: bytes, path: Path | str, what: str = "file") -> str:
    """UTF-8 text (a leading BOM dropped); an undecodable byte is a UserError naming its line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _user_error(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}); expected a {what}", str(path), line
        ) from None


def read_text(path: Path, what: str = "file", max_bytes: int | None = None) -> str:
    return decode(read_bytes(path, what, max_bytes), path, what)


def lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) split on `\\n` only (a trailing `\\r` dropped), blank lines kept."""
    for n, line in enumerate(text.split("\n"), start=1):
        yield n, line.removesuffix("\r")


def load_json(path: Path, what: str = "JSON document", *, max_depth: int | None = MAX_DEPTH) -> Any:
    """The JSON value of a file; every failure is one UserError naming the file (and line)."""
    text = read_text(path, what)
    try:
        return parse_json(text, max_depth=max_depth)
    except ParseError as exc:
        raise _user_error(f"{exc.message}; expected a {what}", str(path), exc.line) from None


def load_json_or_none(path: Path, *, max_depth: int | None = MAX_DEPTH) -> Any:
    """The JSON value of an informative file (a summary, a cache, a state record), or None
    when it is missing or unreadable in any way: such a file is never required."""
    try:
        return load_json(path, max_depth=max_depth)
    except Exception as exc:  # its class imported only now (see `_user_error`)
        from kgbench.errors import UserError

        if isinstance(exc, UserError):
            return None
        raise


def load_json_object(
    path: Path, what: str = "JSON object", *, max_depth: int | None = MAX_DEPTH
) -> dict[str, Any]:
    data = load_json(path, what, max_depth=max_depth)
    if not isinstance(data, dict):
        raise _user_error(f"expected a {what}", str(path))
    return data


def iter_jsonl_text(
    text: str, source: str, what: str = "JSON"
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of JSON Lines text; a bad line is a
    UserError naming `source` and the line."""
    for n, line in lines(text):
        if not line.strip():
            continue
        try:
            item = parse_json(line)
        except ParseError as exc:
            raise _user_error(exc.message, source, n) from None
        if not isinstance(item, dict):
            raise _user_error(f"expected a {what} object on each line", source, n)
        yield n, item


def iter_jsonl(path: Path, what: str = "JSON") -> Iterator[tuple[int, dict[str, Any]]]:
    path = Path(path)
    yield from iter_jsonl_text(read_text(path, f"{what} Lines file"), str(path), what)


class csv_reader:
    """`csv.reader` over untrusted text: fields as long as the text (no 131,072-character
    limit), NUL refused, and a malformed row a UserError naming `source` and its line.

    Iterate it like `csv.reader`; `line_num` is the reader's (the last line read)."""

    def __init__(self, text: str, source: str) -> None:
        if "\x00" in text:
            line = text.count("\n", 0, text.index("\x00")) + 1
            raise _user_error("a NUL character; expected CSV text", source, line)
        if csv.field_size_limit() < CSV_FIELD_LIMIT:
            csv.field_size_limit(CSV_FIELD_LIMIT)
        self.source = source
        self._reader = csv.reader(io.StringIO(text, newline=""))

    @property
    def line_num(self) -> int:
        return self._reader.line_num

    def __iter__(self) -> csv_reader:
        return self

    def __next__(self) -> list[str]:
        try:
            return next(self._reader)
        except csv.Error as exc:
            raise _user_error(
                f"not valid CSV: {exc}", self.source, self._reader.line_num + 1
            ) from None


def csv_rows(text: str, source: str) -> Iterator[tuple[int, list[str]]]:
    """(line number where the row starts, cells) of CSV text; see `csv_reader`."""
    reader = csv_reader(text, source)
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        yield start, row


def parse_int(text: str, what: str, location: Location | None = None) -> int:
    """An integer written in ASCII digits (optional sign), at most 18 digits; else a UserError."""
    body = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]{1,18}", body):
        shown = body if len(body) <= 40 else body[:40] + "..."
        from kgbench.errors import UserError

        raise UserError(
            f"expected {what} (an integer of at most 18 digits), got {shown!r}", location
        )
    return int(body)


# --- encoders: text going out --------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: object) -> str:
    """Text made safe for a terminal line: control characters (ESC included), line and
    paragraph separators and lone surrogates become visible escapes; tab and `\\n` stay."""
    return _CONTROL.sub(_escape_char, str(text))


# scheme://userinfo@ : the userinfo of any URI (a password in NEO4J_URI, a key in a base URL)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s/@'\"<>]+)@")


def redact_uri(text: object) -> str:
    """Text with the userinfo of every URI in it (`bolt://neo4j:secret@host`) replaced by
    `***`: a message may quote a URI, and its user and password are secrets."""
    return _USERINFO.sub(r"\1***@", str(text))


def shown(value: object, limit: int = 80) -> str:
    """A user value quoted for a message: repr (so a line break shows as `\\n`), cut at `limit`."""
    text = repr(str(value))
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def for_prompt(text: str) -> str:
    """Text safe to send to a model: a lone surrogate (which no HTTP client can encode as
    UTF-8) becomes its visible escape; everything else is kept as the model wrote it."""
    return text.encode("utf-8", errors="backslashreplace").decode("utf-8")


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> str:
    """A cell a spreadsheet shows as text: one starting with a formula character (= + - @,
    tab, carriage return) gets a leading apostrophe (OWASP's CSV injection advice)."""
    text = "" if value is None else str(value)
    if text.startswith(_FORMULA_START) and not _is_number(text):
        return "'" + text
    return text


def _is_number(text: str) -> bool:
    return re.fullmatch(r"[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?", text) is not None


def tsv_field(value: object) -> str:
    """A TSV field that pandas' default reader (what KGX's TsvSource uses) reads back as the
    same text: a field holding a tab, a line break or a double quote is quoted, with its
    quotes doubled (RFC 4180 style, which pandas' C parser reads with `quoting=MINIMAL`)."""
    text = "" if value is None else str(value)
    if any(c in text for c in '\t\n\r"'):
        return '"' + text.replace('"', '""') + '"'
    return text

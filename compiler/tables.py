"""Fast, schema-derived validation of the CSV data tables.

The column rules come from the LinkML schema (see `schema.TableSpec`); here they are compiled
once into one small converter per column, and every row runs through those converters. This
is the hot path for large domains, so it avoids per-row object construction and per-value
schema lookups (LinkML's own validator builds a JSON Schema validation per object, which is
what makes it slow on 100,000 rows).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

from kgbench.errors import Location, SpecError, UserErrors

from .paths import display_path, read_input_bytes
from .schema import Column, TableSpec, suggest
from .yamlfile import decode_utf8

LIST_SEPARATOR = "|"
TRUE_WORDS = {"true": True, "false": False}
MAX_TABLE_BYTES = 256 * 1024 * 1024

Converter = Callable[[str], Any]

# Numbers are written in ASCII: Python's int() and float() also accept other scripts' digits
# ("２０１８") and underscores ("2_018"), which a curator never means and Arrow rejects.
INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Control characters (Unicode category Cc): never in a name or an id; in free text only tab,
# newline and carriage return. NUL in particular would end strings in other tools.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class CellError(ValueError):
    """A cell does not match its column; the message says what was expected."""


class Table:
    """A validated table: one list of typed values per column.

    Rows and their file lines are derived on demand; only error messages need lines, and
    working by column keeps the happy path on large tables fast.
    """

    def __init__(
        self,
        spec: TableSpec,
        path: Path,
        columns: dict[str, list[Any]] | None = None,
        lines: tuple[int, ...] | None = None,
        arrow: dict[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.path = path
        self.arrow = arrow  # validated Arrow columns when the fast path read the table
        self._columns = columns
        self._lines = lines

    @property
    def columns(self) -> dict[str, list[Any]]:
        """Typed Python values per column (converted from Arrow on first use)."""
        if self._columns is None:
            self._columns = {c.name: to_python(c, self.arrow[c.name]) for c in self.spec.columns}
        return self._columns

    @cached_property
    def rows(self) -> tuple[dict[str, Any], ...]:
        names = list(self.columns)
        return tuple(
            dict(zip(names, values, strict=True))
            for values in zip(*self.columns.values(), strict=True)
        )

    def __len__(self) -> int:
        """Number of data records."""
        if self._columns is not None:
            return len(next(iter(self._columns.values()), []))
        return len(next(iter(self.arrow.values()))) if self.arrow else 0

    @property
    def lines(self) -> tuple[int, ...]:
        if self._lines is None:
            self._lines = _record_lines(self.path)
        return self._lines

    def location(self, index: int, field: str | None = None) -> Location:
        return Location(display_path(self.path), self.lines[index], field)


def _record_lines(path: Path) -> tuple[int, ...]:
    """The file line where each data record starts (quoted fields may span lines)."""
    data = path.read_bytes()
    if b'"' not in data and b"\n\n" not in data and b"\r\n\r\n" not in data:
        # no quoted newlines and no blank lines: record i starts on line i + 2
        n = data.count(b"\n") + (0 if data.endswith(b"\n") else 1) - 1
        return tuple(range(2, n + 2))
    lines = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        next(reader, None)
        start = reader.line_num + 1
        for record in reader:
            if record and not (len(record) == 1 and not record[0].strip()):
                lines.append(start)
            start = reader.line_num + 1
    return tuple(lines)


class ErrorList:
    """Collects user errors so one run reports all of them (sorted, capped)."""

    def __init__(self) -> None:
        self.errors: list[SpecError] = []

    def add(self, message: str, location: Location) -> None:
        self.errors.append(SpecError(message, location))

    def raise_if_any(self) -> None:
        if not self.errors:
            return
        raise UserErrors(self.errors)  # in discovery order: a cause before its effects


def _scalar_converter(col: Column) -> Converter:
    rng = col.range
    if rng == "integer":

        def conv(text: str) -> int:
            if INTEGER.fullmatch(text):
                return int(text)
            try:
                int(text)
            except ValueError:
                raise CellError(f"expected an integer, got {text!r}") from None
            raise CellError(f"expected an integer in ASCII digits 0-9, got {text!r}")

    elif rng == "float":

        def conv(text: str) -> float:
            try:
                value = float(text)
            except ValueError:
                raise CellError(f"expected a number, got {text!r}") from None
            if not math.isfinite(value):
                raise CellError(f"expected a finite number, got {text!r}")
            if not DECIMAL.fullmatch(text):
                raise CellError(f"expected a number in ASCII digits 0-9, got {text!r}")
            return value

    elif rng == "boolean":

        def conv(text: str) -> bool:
            value = TRUE_WORDS.get(text.lower())
            if value is None:
                raise CellError(f"expected true or false, got {text!r}")
            return value

    elif col.enum_values:
        allowed = frozenset(col.enum_values)
        listing = ", ".join(col.enum_values)

        def conv(text: str) -> str:
            if text not in allowed:
                raise CellError(f"expected one of {listing}; got {text!r}" + suggest(text, allowed))
            return text

    else:

        def conv(text: str) -> str:
            return text

    checks: list[Callable[[Any], None]] = []
    if col.max_length is not None or col.single_line or rng == "string":
        checks.append(_text_check(col))
    if col.pattern:
        regex = re.compile(col.pattern)

        def check_pattern(value: Any) -> None:
            if not regex.search(value):
                raise CellError(f"expected a value matching {col.pattern}, got {value!r}")

        checks.append(check_pattern)
    if col.minimum is not None or col.maximum is not None:
        lo, hi = col.minimum, col.maximum

        def check_range(value: Any) -> None:
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise CellError(f"expected a value in [{lo}, {hi}], got {value}")

        checks.append(check_range)
    if not checks:
        return conv

    def checked(text: str) -> Any:
        value = conv(text)
        for check in checks:
            check(value)
        return value

    return checked


def _text_check(col: Column) -> Callable[[Any], None]:
    """Length and control characters of one text value (see `CONTROL`)."""
    forbidden = CONTROL if col.single_line else TEXT_CONTROL
    limit = col.max_length

    def check(value: Any) -> None:
        if not isinstance(value, str):
            return
        if limit is not None and len(value) > limit:
            raise CellError(
                f"{len(value):,} characters, expected at most {limit:,} (starts {value[:40]!r})"
            )
        bad = forbidden.search(value)
        if bad:
            what = "NUL byte" if bad.group() == "\x00" else "control character"
            allowed = "" if col.single_line else " (only tab and line breaks are allowed)"
            raise CellError(
                f"contains a {what} {bad.group()!r} at position {bad.start() + 1}{allowed}; "
                f"got {value[:80]!r}"
            )

    return check


def _column_converter(col: Column) -> Converter:
    scalar = _scalar_converter(col)
    if not col.multivalued:
        return scalar

    def many(text: str) -> tuple:
        return tuple(scalar(part.strip()) for part in text.split(LIST_SEPARATOR) if part.strip())

    return many


def read_table(spec: TableSpec, path: Path, errors: ErrorList) -> Table:
    """Read and type-check one CSV table. Row-level problems go to `errors`.

    A columnar fast path (pyarrow) answers "is everything valid?" for large tables; when any
    check fails, the row-by-row path below runs instead and produces the precise messages.
    """
    shown = display_path(path)
    # Whole-file checks first: a regular file of bounded size, strict UTF-8 (the message
    # names the line of the first bad byte), before either CSV reader sees it.
    text = decode_utf8(read_input_bytes(path, MAX_TABLE_BYTES, f"data table '{spec.table}'"), shown)
    with io.StringIO(text, newline="") as handle:
        reader = csv.reader(handle, strict=True)
        try:
            header = next(reader)
        except StopIteration:
            raise SpecError("empty file; expected a header row", Location(shown, 1)) from None
        except csv.Error as exc:
            raise SpecError(f"malformed CSV: {exc}", Location(shown, 1)) from None
        header = [h.strip().lstrip("\ufeff") for h in header]
        expected = [c.name for c in spec.columns]
        known = set(expected)
        for name in header:
            if name not in known:
                raise SpecError(
                    f"unknown column '{name}'"
                    + suggest(name, known)
                    + "; expected columns: "
                    + ",".join(expected),
                    Location(shown, 1, name),
                )
        missing = [c.name for c in spec.columns if c.required and c.name not in header]
        if missing:
            raise SpecError(
                "missing required column(s) " + ", ".join(missing),
                Location(shown, 1),
            )
        if len(set(header)) != len(header):
            dup = next(h for h in header if header.count(h) > 1)
            raise SpecError(f"column '{dup}' appears twice", Location(shown, 1, dup))

        fast = _read_fast(spec, path, header)
        if fast is not None:
            arrow, bad = fast
            if not bad:
                return Table(spec, path, arrow=arrow)
            if _report_columns(spec, path, arrow, bad, errors):
                return Table(spec, path, arrow=arrow)  # the caller raises the reported errors
        by_name = {c.name: c for c in spec.columns}
        plan = [
            (i, name, _column_converter(by_name[name]), by_name[name])
            for i, name in enumerate(header)
        ]
        absent = [c for c in spec.columns if c.name not in header]
        width = len(header)
        rows: list[dict[str, Any]] = []
        lines: list[int] = []
        seen_ids: dict[str, int] = {}
        id_col = next((c.name for c in spec.columns if c.identifier), None)
        line = 1
        try:
            for record in reader:
                line = reader.line_num
                if not record or (len(record) == 1 and not record[0].strip()):
                    continue
                if len(record) != width:
                    errors.add(
                        f"expected {width} columns, found {len(record)}",
                        Location(shown, line),
                    )
                    continue
                row: dict[str, Any] = {}
                ok = True
                for i, name, conv, col in plan:
                    text = record[i].strip()
                    if not text:
                        if col.required:
                            errors.add("a value is required", Location(shown, line, name))
                            ok = False
                        row[name] = () if col.multivalued else None
                        continue
                    try:
                        row[name] = conv(text)
                    except CellError as exc:
                        errors.add(str(exc), Location(shown, line, name))
                        ok = False
                for col in absent:
                    row[col.name] = () if col.multivalued else None
                if id_col and ok:
                    key = row[id_col]
                    if key in seen_ids:
                        errors.add(
                            f"duplicate id '{key}' (first defined on line {seen_ids[key]})",
                            Location(shown, line, id_col),
                        )
                        ok = False
                    else:
                        seen_ids[key] = line
                if ok:
                    rows.append(row)
                    lines.append(line)
        except csv.Error as exc:
            raise SpecError(f"malformed CSV: {exc}", Location(shown, reader.line_num + 1)) from None
    columns = {c.name: [r[c.name] for r in rows] for c in spec.columns}
    return Table(spec, path, columns, tuple(lines))


def _read_fast(
    spec: TableSpec, path: Path, header: list[str]
) -> tuple[dict[str, Any], list[str]] | None:
    """Arrow columns (whitespace-trimmed strings) and the names of columns that failed a check.

    None means the file could not be parsed as a plain table: the row-by-row path then
    reports exactly what is wrong (bad quoting, wrong number of cells, ...).
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv
    except ImportError:  # pragma: no cover - pyarrow is a pinned dependency
        return None
    try:
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(block_size=1 << 26),  # one chunk per column
            parse_options=pcsv.ParseOptions(newlines_in_values=True),
            convert_options=pcsv.ConvertOptions(
                column_types={name: pa.string() for name in header},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, OSError, UnicodeDecodeError):
        return None
    if [n.lstrip("\ufeff").strip() for n in table.column_names] != header:
        return None
    by_name = {c.name: c for c in spec.columns}
    out: dict[str, Any] = {}
    bad: list[str] = []
    try:
        for name, raw in zip(header, table.columns, strict=True):
            values = pc.utf8_trim_whitespace(raw.combine_chunks())
            out[name] = values
            try:
                if not _column_ok(by_name[name], values, pa, pc):
                    bad.append(name)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                bad.append(name)  # e.g. a failed cast, or a pattern RE2 cannot compile
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    empty = pa.array([""] * table.num_rows, pa.string())
    for col in spec.columns:
        if col.name not in out:
            out[col.name] = empty
    return out, bad


def _report_columns(
    spec: TableSpec, path: Path, arrow: dict[str, Any], bad: list[str], errors: ErrorList
) -> bool:
    """Cell-by-cell messages for the columns the vectorised checks rejected.

    Only those columns are walked in Python, so a few bad cells in a large table cost little.
    Returns False when no cell error was found (the kernels and Python disagree, e.g. on a
    regex dialect); the caller then takes the row-by-row path, the source of truth.
    """
    shown = display_path(path)
    lines = _record_lines(path)
    by_name = {c.name: c for c in spec.columns}
    order = {c.name: i for i, c in enumerate(spec.columns)}
    found: list[tuple[int, int, str, str]] = []
    for name in bad:
        col = by_name[name]
        conv = _column_converter(col)
        seen: dict[str, int] = {}
        rows = _suspect_rows(col, arrow[name])
        values = arrow[name].to_pylist() if rows is None else arrow[name].take(rows).to_pylist()
        for i, text in zip(range(len(values)) if rows is None else rows, values, strict=True):
            if not text:
                if col.required:
                    found.append((lines[i], order[name], name, "a value is required"))
                continue
            try:
                value = conv(text)
            except CellError as exc:
                found.append((lines[i], order[name], name, str(exc)))
                continue
            if col.identifier:
                if value in seen:
                    message = f"duplicate id '{value}' (first defined on line {seen[value]})"
                    found.append((lines[i], order[name], name, message))
                else:
                    seen[value] = lines[i]
    for line, _, name, message in sorted(found):
        errors.add(message, Location(shown, line, name))
    return bool(found)


def _suspect_rows(col: Column, values) -> list[int] | None:
    """Indices of the cells a vectorised rule rejects, or None to walk the whole column.

    Narrowing the Python walk to these rows keeps error reports on large tables cheap; columns
    whose rules are not simple masks (lists, ids, casts that fail) are walked in full.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if col.multivalued or col.identifier or col.range == "integer":
        return None
    empty = pc.equal(values, "")
    if col.range == "float":
        if pc.any(empty).as_py():
            return None
        try:
            typed = pc.cast(values, pa.float64())
        except pa.ArrowInvalid:
            return None
        bad = pc.invert(pc.is_finite(typed))
        if col.minimum is not None:
            bad = pc.or_(bad, pc.less(typed, col.minimum))
        if col.maximum is not None:
            bad = pc.or_(bad, pc.greater(typed, col.maximum))
    elif col.range == "boolean":
        bad = pc.invert(pc.is_in(pc.utf8_lower(values), value_set=pa.array(["true", "false"])))
    else:
        ok = empty
        if col.enum_values:
            ok = pc.or_(ok, pc.is_in(values, value_set=pa.array(col.enum_values)))
        if col.pattern:
            try:
                ok = pc.and_(ok, pc.or_(empty, pc.match_substring_regex(values, col.pattern)))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return None
        bad = pc.invert(ok) if (col.enum_values or col.pattern) else pc.and_(empty, False)
        text_bad = _text_bad(col, values, pc)
        if text_bad is not None:
            bad = pc.or_(bad, text_bad)
    if col.required:
        bad = pc.or_(bad, empty)
    return pc.indices_nonzero(bad).to_pylist()


def _all(mask, pc) -> bool:
    return bool(pc.all(mask).as_py()) if len(mask) else True


# The same character classes as CONTROL and TEXT_CONTROL, in RE2 syntax for Arrow.
RE2_CONTROL = r"[\x00-\x1f\x7f-\x{9f}]"
RE2_TEXT_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x{9f}]"


def _text_bad(col: Column, values, pc):
    """Mask of values too long or holding a forbidden control character (None: no rule)."""
    if col.max_length is None and not col.single_line and col.range != "string":
        return None
    bad = pc.match_substring_regex(values, RE2_CONTROL if col.single_line else RE2_TEXT_CONTROL)
    if col.max_length is not None:
        bad = pc.or_(bad, pc.greater(pc.utf8_length(values), col.max_length))
    return bad


def _column_ok(col: Column, values, pa, pc) -> bool:
    """Every rule of one column, checked with vectorised kernels."""
    empty = pc.equal(values, "")
    n_empty = pc.sum(empty).as_py() or 0
    if n_empty and (col.required or col.range in ("integer", "float", "boolean")):
        return False
    if col.multivalued:
        parts = pc.utf8_trim_whitespace(pc.list_flatten(pc.split_pattern(values, LIST_SEPARATOR)))
        parts = pc.filter(parts, pc.not_equal(parts, ""))
        text_bad = _text_bad(col, parts, pc)
        if text_bad is not None and len(parts) and pc.any(text_bad).as_py():
            return False
        if col.pattern and not _all(pc.match_substring_regex(parts, col.pattern), pc):
            return False
        return not col.enum_values or _all(pc.is_in(parts, value_set=pa.array(col.enum_values)), pc)
    if col.range in ("integer", "float"):
        typed = pc.cast(values, pa.int64() if col.range == "integer" else pa.float64())
        if col.range == "float" and not _all(pc.is_finite(typed), pc):
            return False
        if len(typed) and (col.minimum is not None or col.maximum is not None):
            bounds = pc.min_max(typed).as_py()
            if col.minimum is not None and bounds["min"] < col.minimum:
                return False
            if col.maximum is not None and bounds["max"] > col.maximum:
                return False
        return True
    if col.range == "boolean":
        return _all(pc.is_in(pc.utf8_lower(values), value_set=pa.array(["true", "false"])), pc)
    text_bad = _text_bad(col, values, pc)
    if text_bad is not None and len(values) and pc.any(text_bad).as_py():
        return False
    if col.enum_values:
        allowed = pc.is_in(values, value_set=pa.array(col.enum_values))
        if not _all(pc.or_(empty, allowed), pc):
            return False
    if col.pattern and not _all(pc.or_(empty, pc.match_substring_regex(values, col.pattern)), pc):
        return False
    return not col.identifier or pc.count_distinct(values).as_py() == len(values)


def to_python(col: Column, values) -> list[Any]:
    """Typed Python values of a validated Arrow column (for building the IR)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if col.multivalued:
        data = values.to_pylist()
        if _all(pc.invert(pc.match_substring(values, LIST_SEPARATOR)), pc):
            return [(v,) if v else () for v in data]  # single values: the common case
        return [
            tuple(p.strip() for p in v.split(LIST_SEPARATOR) if p.strip()) if v else ()
            for v in data
        ]
    if col.range == "integer":
        return pc.cast(values, pa.int64()).to_pylist()
    if col.range == "float":
        return pc.cast(values, pa.float64()).to_pylist()
    if col.range == "boolean":
        return pc.equal(pc.utf8_lower(values), "true").to_pylist()
    return [v or None for v in values.to_pylist()]

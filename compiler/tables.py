"""Fast, schema-derived validation of the CSV data tables.

The column rules come from the LinkML schema (see `schema.TableSpec`) and live in one rule
table (`rules.RULES`): each rule is a vectorised check over a whole column. A file is read
into columns once, by pyarrow's CSV reader, or by Python's csv module when pyarrow cannot
parse it (bad quoting, a row with the wrong number of cells: that reader says which line),
and both readers hand their columns to the same rules, so they report the same errors. This
is the hot path for large domains (LinkML's own validator builds a JSON Schema validation per
object, which is what makes it slow on 100,000 rows).
"""

from __future__ import annotations

import csv
import io
import mmap
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from kgbench.errors import Location, SpecError, UserErrors

from .paths import display_path, read_input_bytes
from .rules import LIST_SEPARATOR, TRUE_WORDS, check_column, to_python
from .schema import TableSpec, suggest
from .yamlfile import decode_utf8

__all__ = [
    "LIST_SEPARATOR",
    "TRUE_WORDS",
    "ErrorList",
    "Table",
    "read_table",
    "skip_pandas_probe",
    "to_python",
]

# A PrimeKG-scale table (8 million rows of ~130 bytes) fits; the guard is against a wrong file.
MAX_TABLE_BYTES = 2 * 1024 * 1024 * 1024
HEADER_PREFIX = 1 << 16  # characters read to find the header record
HEAD_BYTES = 4 * HEADER_PREFIX + 4  # bytes that hold more than HEADER_PREFIX characters
RECORD_CHUNK = 1 << 16  # rows converted at a time by `Table.records`
LINES_CHUNK = 1 << 20  # bytes read at a time to count a table's lines (`_simple_records`)

Reader = Literal["auto", "python"]


def skip_pandas_probe() -> None:
    """Tell pyarrow, before its first conversion of a Python value, that pandas is absent.

    pyarrow asks whether any value it converts (`pa.array(list)`, a scalar argument of a
    compute function) is a pandas object, and to answer it imports pandas once per process:
    ~0.1 s of `kgbench validate`'s time on an idle machine, for nothing, since kgbench never
    hands Arrow data to pandas. The commands that read tables call this first; it changes
    nothing once pandas is imported (nor does it stop anyone importing pandas later), and it
    only makes pyarrow's own pandas conversions (`to_pandas`) unavailable in that process.
    """
    if "pandas" in sys.modules:
        return
    sys.meta_path.insert(0, _NO_PANDAS)  # `import pandas` fails while the probe runs
    try:
        pa.scalar(0)  # the probe: pyarrow records "no pandas" and never asks again
    finally:
        sys.meta_path.remove(_NO_PANDAS)


class _NoPandas:
    """A finder that fails the import of pandas (and only of pandas)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not probed by kgbench", name=name)


_NO_PANDAS = _NoPandas()


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
        broken_ids: frozenset[str] = frozenset(),
    ) -> None:
        self.spec = spec
        self.path = path
        self.arrow = arrow  # validated Arrow columns (trimmed strings, "" when empty)
        # Identifiers of rows left out for a bad cell (already reported): a reference to one
        # is not "unknown", so the cross-table checks skip it instead of piling on.
        self.broken_ids = broken_ids
        self._columns = columns
        self._some: dict[str, list[Any]] = {}  # columns converted one by one (`column`)
        self._lines = lines

    @property
    def columns(self) -> dict[str, list[Any]]:
        """Typed Python values per column (converted from Arrow on first use)."""
        if self._columns is None:
            some = self._some
            self._columns = {
                c.name: some[c.name] if c.name in some else to_python(c, self.arrow[c.name])
                for c in self.spec.columns
            }
            self._some = {}
        return self._columns

    def column(self, name: str) -> list[Any]:
        """One column's typed Python values, converted alone (kept until `drop_columns`)."""
        if self._columns is not None:
            return self._columns[name]
        if name not in self._some:
            spec = next(c for c in self.spec.columns if c.name == name)
            self._some[name] = to_python(spec, self.arrow[name])
        return self._some[name]

    def cells(self, name: str, rows: list[int]) -> list[Any]:
        """One column's typed Python values at some rows: the values `column` gives those
        rows (the conversion is cell by cell), converting only them unless the column is
        converted already (an error path reads a few rows of columns nothing else reads)."""
        if self._columns is not None or name in self._some or self.arrow is None:
            values = self.column(name)
            return [values[i] for i in rows]
        spec = next(c for c in self.spec.columns if c.name == name)
        return to_python(spec, self.arrow[name].take(pa.array(rows, pa.int64())))

    def picked(self, record: type, rows: list[int]) -> dict[int, Any]:
        """The IR records (`record`, a named tuple of this table's columns) of some rows, by
        row: the same values `columns` gives those rows (each conversion is cell by cell),
        converting only them."""
        if self._columns is not None or not rows:
            cols = self.columns if rows else {}
            return {i: record(*(cols[f][i] for f in record._fields)) for i in rows}
        taken = pa.array(rows, pa.int64())
        specs = {c.name: c for c in self.spec.columns}
        some = self._some  # a column already converted or taken (`use_column`) is read as is
        values = [
            [some[f][i] for i in rows]
            if f in some
            else to_python(specs[f], self.arrow[f].take(taken))
            for f in record._fields
        ]
        return dict(zip(rows, map(record._make, zip(*values, strict=True)), strict=True))

    @cached_property
    def rows(self) -> tuple[dict[str, Any], ...]:
        names = list(self.columns)
        return tuple(
            dict(zip(names, values, strict=True))
            for values in zip(*self.columns.values(), strict=True)
        )

    def use_column(self, name: str, values: list[Any]) -> None:
        """Take `values` as column `name`'s Python values: the same values as its own, made
        by the caller as other objects (a reference column made of the very str objects of
        the ids it names, so the IR holds one copy of each id, not one per table)."""
        if self._columns is None:
            self._some[name] = values
        else:
            self._columns[name] = values

    def records(self, record: type, chunk: int = RECORD_CHUNK) -> list[Any]:
        """One `record` (a NamedTuple whose fields are columns) per row, made by
        `tuple.__new__` in C.

        Made a chunk of rows at a time from the Arrow columns, except the columns already
        converted (`column`, `use_column`), so the Python values of every column are never
        all alive beside the records: at 4,000,000 assertions they were ~0.5 GB at the
        load's peak."""
        make = partial(tuple.__new__, record)
        fields = record._fields
        if self.arrow is None or self._columns is not None:
            cols = self.columns
            return list(map(make, zip(*(cols[f] for f in fields), strict=True)))
        specs = {c.name: c for c in self.spec.columns}
        out: list[Any] = []
        for start in range(0, len(self), chunk):
            part = [
                self._some[f][start : start + chunk]
                if f in self._some
                else to_python(specs[f], self.arrow[f].slice(start, chunk))
                for f in fields
            ]
            out.extend(map(make, zip(*part, strict=True)))
        return out

    def drop_columns(self) -> None:
        """Let go of the Python columns once the IR records are made from them (an error's
        location rebuilds them from Arrow): at 4,000,000 assertions they are ~0.5 GB of
        lists held through the rest of the load for nothing. A table without Arrow columns
        keeps them, having nothing to rebuild them from."""
        if self.arrow is not None:
            self._columns = None
            self._some = {}

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

    @cached_property
    def shown(self) -> str:
        """The file as messages name it, worked out once (not a `relpath` per error)."""
        return display_path(self.path)

    def location(self, index: int, field: str | None = None) -> Location:
        return Location(self.shown, self.lines[index], field)

    def row_index(self, *names: str) -> dict[Any, int]:
        """Each key's row index (the last row, where a key repeats): a column's values, or
        the tuples of several columns' values.

        For locating errors only, so callers build it on the first error: a dict per row of
        a 4,000,000-row table would cost gigabytes on the happy path.
        """
        cols = self.columns
        keys = cols[names[0]] if len(names) == 1 else zip(*(cols[n] for n in names), strict=True)
        return {key: i for i, key in enumerate(keys)}


def _record_lines(path: Path) -> tuple[int, ...]:
    """The file line where each data record starts (quoted fields may span lines)."""
    n = _simple_records(path)
    if n is not None:  # no quoted newlines, no blank lines, no bare CR: record i on line i + 2
        return tuple(range(2, n + 2))
    data = path.read_bytes()
    return _python_parse(data.decode("utf-8"), None, display_path(path), strict=False).lines


def _line_numbers(path: Path, records: int) -> Sequence[int]:
    """`_record_lines` of a file that Arrow parsed into `records` records: where no quote,
    blank line or CR is found in the mapped file (a few searches, no copy, no count), each
    line after the header is one record, so record i starts on line i + 2."""
    try:
        with (
            path.open("rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            plain = data.find(b'"') < 0 and data.find(b"\n\n") < 0 and data.find(b"\r") < 0
    except (OSError, ValueError):  # not mappable (empty): counted below
        plain = False
    return range(2, records + 2) if plain else _record_lines(path)


def _simple_records(path: Path, chunk: int = LINES_CHUNK) -> int | None:
    """How many records follow the header of a file with no quote, no blank line and no bare
    CR, where each line is one record; None for any other file.

    Read a chunk at a time into memory the last chunk freed, not as one copy of the file:
    only a table with errors needs its lines, and at 100,000 assertions that copy was 12 MB
    of fresh memory per erring table."""
    newlines = crs = crlfs = 0
    last = b""  # the previous chunk's last 3 bytes: a pair or "\r\n\r\n" across the cut
    with path.open("rb") as handle:
        for part in iter(partial(handle.read, chunk), b""):
            seam = last + part[:3]
            if b'"' in part or any(b in part or b in seam for b in (b"\n\n", b"\r\n\r\n")):
                return None
            newlines += part.count(b"\n")
            if b"\r" in part:
                crs += part.count(b"\r")
                crlfs += part.count(b"\r\n")
            crlfs += last[-1:] + part[:1] == b"\r\n"
            last = (last + part[-3:])[-3:]
    if crs != crlfs:  # a bare CR
        return None
    return newlines + (0 if last.endswith(b"\n") else 1) - 1


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


@dataclass
class _Parsed:
    """A table split into cells: one raw string column per header name, before any rule."""

    columns: dict[str, Any]
    lines: tuple[int, ...] | None  # None: derived from the file when an error needs one
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, message)


def _python_parse(text: str, width: int | None, shown: str, strict: bool = True) -> _Parsed:
    """Python's csv module: every record with its start line. With a `width`, a record with
    another number of cells is a problem and is left out; without, only lines are kept."""
    with io.StringIO(text, newline="") as handle:
        reader = csv.reader(handle, strict=strict)
        try:
            header = next(reader, [])
            start = reader.line_num + 1
            records: list[list[str]] = []
            lines: list[int] = []
            problems: list[tuple[int, str]] = []
            for record in reader:
                line, start = start, reader.line_num + 1
                if not record or (len(record) == 1 and not record[0].strip()):
                    continue
                if width is not None and len(record) != width:
                    problems.append((line, f"expected {width} columns, found {len(record)}"))
                    continue
                records.append(record)
                lines.append(line)
        except csv.Error as exc:
            raise SpecError(f"malformed CSV: {exc}", Location(shown, reader.line_num + 1)) from None
    names = [] if width is None else [h.strip().lstrip("\ufeff") for h in header]
    columns = {name: pa.array([r[i] for r in records], pa.string()) for i, name in enumerate(names)}
    return _Parsed(columns, tuple(lines), problems)


def _arrow_parse(path: Path, header: list[str]) -> _Parsed | None:
    """pyarrow's CSV reader, or None when it cannot read the file as a plain table (Python's
    reader then says what is wrong)."""
    try:
        table = pcsv.read_csv(
            path,
            # pyarrow's own block size (1 MiB): a 64 MiB block made one chunk per column, but
            # each parse took 0.1-0.6 s for 100,000 assertions where 1 MiB blocks take 0.06-0.1
            # s (fresh large buffers fault their pages in; small ones are reused)
            read_options=pcsv.ReadOptions(block_size=1 << 20),
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
    columns = {}
    for name in header:  # the table lets go of each column once it is one array: peak +1 column
        columns[name] = table.column(0).combine_chunks()
        table = table.remove_column(0)
    return _Parsed(columns, None)


def _check_header(spec: TableSpec, header: list[str], shown: str) -> None:
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
        raise SpecError("missing required column(s) " + ", ".join(missing), Location(shown, 1))
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise SpecError(f"column '{dup}' appears twice", Location(shown, 1, dup))


def _valid_utf8_head(path: Path) -> tuple[str, bool] | None:
    """The start of a regular, non-empty file of bounded size whose bytes are all strict
    UTF-8, decoded, and whether that is all of it: its first `HEADER_PREFIX` characters and
    more (all of it, if that is shorter); None for any other file, whose text the caller reads and decodes as before
    (and whose problem, if any, that reading reports).

    The bytes are checked where they lie, in the mapped file, by Arrow's UTF-8 validation
    (strict as Python's codec: no surrogate, overlong form or code point past U+10FFFF), so
    valid data pays no copy of the file as bytes and another as str: at 100,000 assertions
    that was ~25 MB of fresh memory per validation, a tenth of its time on a machine where a
    first touch of a page is dear."""
    try:
        info = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or not 0 < info.st_size <= MAX_TABLE_BYTES:
        return None
    try:
        with pa.memory_map(str(path)) as mapped:
            data = mapped.read_buffer()
            offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
            pa.LargeStringArray.from_buffers(1, offsets, data).validate(full=True)
            whole = len(data) <= HEAD_BYTES
            # a cut inside the last character is all that "ignore" can drop (the rest is
            # valid): more than HEADER_PREFIX characters are left
            start = data if whole else data.slice(0, HEAD_BYTES)
            return start.to_pybytes().decode("utf-8", "strict" if whole else "ignore"), whole
    except (OSError, pa.ArrowInvalid):
        return None


def _whole_text(path: Path, what: str, shown: str) -> str:
    return decode_utf8(read_input_bytes(path, MAX_TABLE_BYTES, what), shown)


def _read_header(text: str, shown: str, whole: Callable[[], str] | None = None) -> list[str]:
    """The header record, parsed from the start of the text only (the whole text would be
    copied into a StringIO: 100 ms on a large table). `whole`: the whole text, where `text`
    is only its start (`_valid_utf8_head`), longer than `HEADER_PREFIX` characters."""
    head = text[:HEADER_PREFIX]
    all_of_it = whole is None and len(head) == len(text)
    with io.StringIO(head, newline="") as handle:
        reader = csv.reader(handle, strict=True)
        try:
            header = next(reader)
            complete = all_of_it or handle.tell() < len(head)
        except StopIteration:
            raise SpecError("empty file; expected a header row", Location(shown, 1)) from None
        except csv.Error as exc:
            if all_of_it:
                raise SpecError(f"malformed CSV: {exc}", Location(shown, 1)) from None
            complete = False
    if not complete:  # a header longer than the prefix: read it from the whole text
        return _read_header_whole(text if whole is None else whole(), shown)
    return [h.strip().lstrip("\ufeff") for h in header]


def _read_header_whole(text: str, shown: str) -> list[str]:
    with io.StringIO(text, newline="") as handle:
        try:
            header = next(csv.reader(handle, strict=True))
        except csv.Error as exc:
            raise SpecError(f"malformed CSV: {exc}", Location(shown, 1)) from None
    return [h.strip().lstrip("\ufeff") for h in header]


def read_table(spec: TableSpec, path: Path, errors: ErrorList, reader: Reader = "auto") -> Table:
    """Read and type-check one CSV table. Row-level problems go to `errors`, in file order;
    the returned table holds the rows without any.

    `reader="python"` skips pyarrow's CSV reader (tests use it to prove both readers report
    the same errors).
    """
    shown = display_path(path)
    # Whole-file checks first: a regular file of bounded size, strict UTF-8 (the message
    # names the line of the first bad byte), before either CSV reader sees it.
    what = f"data table '{spec.table}'"
    head = _valid_utf8_head(path) if reader == "auto" else None
    if head is None:  # the reader below needs the text, or the file has something to report
        text = decode_utf8(read_input_bytes(path, MAX_TABLE_BYTES, what), shown)
        header = _read_header(text, shown)
    else:
        text, is_whole = head
        rest = None if is_whole else partial(_whole_text, path, what, shown)
        header = _read_header(text, shown, whole=rest)
    _check_header(spec, header, shown)
    parsed = None
    if reader == "auto":
        text = ""  # pyarrow reads the file itself; half a gigabyte of text need not wait
        parsed = _arrow_parse(path, header)
        if parsed is None:
            text = decode_utf8(read_input_bytes(path, MAX_TABLE_BYTES, what), shown)
    if parsed is None:
        parsed = _python_parse(text, len(header), shown)
    return _validated(spec, path, shown, parsed, errors)


# Bytes that are surely neither whitespace nor part of a character that may be: printable
# ASCII but the space. A cell whose first and last bytes are such needs no trimming.
_NOT_SPACE = np.zeros(256, dtype=bool)
_NOT_SPACE[0x21:0x7F] = True


def _trimmed(values: Any) -> Any:
    """`pc.utf8_trim_whitespace(values)`, but the column itself (no copy) where no cell can
    start or end with whitespace: the first and last byte of every non-empty cell, looked up
    by the offsets (a byte outside printable ASCII, or a space, and the kernel decides). At
    100,000 assertions trimming copied every column, ~16 MB of fresh memory per validation,
    to change nothing."""
    if values.type != pa.string() or values.null_count or not len(values):
        return pc.utf8_trim_whitespace(values)
    offsets_buffer, data_buffer = values.buffers()[1:3]
    if data_buffer is None:
        return values  # every cell is empty
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)
    offsets = offsets[values.offset : values.offset + len(values) + 1]
    starts, ends = offsets[:-1], offsets[1:]
    filled = starts < ends
    if not filled.all():
        starts, ends = starts[filled], ends[filled]
    data = np.frombuffer(data_buffer, dtype=np.uint8)
    if _NOT_SPACE[data[starts]].all() and _NOT_SPACE[data[ends - 1]].all():
        return values
    return pc.utf8_trim_whitespace(values)


def _validated(
    spec: TableSpec, path: Path, shown: str, parsed: _Parsed, errors: ErrorList
) -> Table:
    """Run every column's rules (`rules.check_column`); report in file order."""
    lines: Sequence[int] | None = parsed.lines
    records = len(next(iter(parsed.columns.values()))) if parsed.columns else 0

    def line_of(row: int) -> int:
        nonlocal lines
        if lines is None:
            lines = _line_numbers(path, records)
        return lines[row]

    by_name = {c.name: c for c in spec.columns}
    values: dict[str, Any] = {}
    found: list[tuple[int, int, str | None, str]] = [
        (line, -1, None, message) for line, message in parsed.problems
    ]
    bad_rows: set[int] = set()
    for index, (name, raw) in enumerate(parsed.columns.items()):
        values[name] = column = _trimmed(raw)
        for row, message in check_column(by_name[name], column, line_of):
            found.append((line_of(row), index, name, message))
            bad_rows.add(row)
    n = len(next(iter(values.values()))) if values else 0
    broken: set[str] = set()
    if bad_rows:  # the table holds the rows without errors
        taken = pa.array(sorted(bad_rows), pa.int64())
        for c in spec.columns:
            if c.identifier and c.name in values:
                broken.update(v for v in values[c.name].take(taken).to_pylist() if v)
        keep = np.ones(n, dtype=bool)
        keep[list(bad_rows)] = False
        mask = pa.array(keep)
        values = {name: column.filter(mask) for name, column in values.items()}
        all_lines = lines if lines is not None else _line_numbers(path, records)
        kept = np.asarray(all_lines)[keep] if isinstance(all_lines, tuple) else None
        if kept is None:  # a range: its kept lines made without a tuple of every line
            kept = np.arange(all_lines.start, all_lines.stop)[keep]
        lines = tuple(kept.tolist())
        n = len(lines)
    empty = pa.array([""] * n, pa.string())
    arrow = {c.name: values.get(c.name, empty) for c in spec.columns}
    for line, _, name, message in sorted(found, key=lambda f: (f[0], f[1])):
        errors.add(message, Location(shown, line, name))
    if isinstance(lines, range):  # a table's lines are a tuple
        lines = tuple(lines)
    return Table(spec, path, arrow=arrow, lines=lines, broken_ids=frozenset(broken))

"""The two table readers report the same errors: a property over random corruptions of a
valid table.

`read_table` reads a file with pyarrow's CSV reader, or with Python's csv module when pyarrow
cannot parse it; both hand their columns to the one rule table (`compiler.rules.RULES`). Here
a valid mini table gets random cell corruptions of every kind a rule checks (wrong types,
broken patterns, values out of range, unknown enum values, empty required cells, control
characters, full-width digits, oversize cells, repeated ids, padded or quoted cells), is
written as CSV, and both readers must report the same set of (line, field, message) errors
and return the same typed rows.
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler import tables as tables_module
from compiler.rules import RULES, rules_for
from compiler.schema import Column, TableSpec, load_schema
from compiler.tables import ErrorList, read_table
from kgbench.errors import Location
from kgbench.locations import CHECKOUT as REPO_ROOT

from .settings import budget

MINI = REPO_ROOT / "tests" / "fixtures" / "domains" / "mini"
TABLES = ("entities", "assertions", "evidence_sources", "assertion_evidence")


@pytest.fixture(scope="module")
def specs() -> dict[str, TableSpec]:
    model = load_schema(MINI / "schema.yaml", "MiniPredicate", Location("domain.yaml"))
    return model.tables


def _rows(table: str) -> list[list[str]]:
    with (MINI / "data" / f"{table}.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def _corruption(col: Column, rows: list[list[str]], index: int) -> st.SearchStrategy[str]:
    """Bad (and a few good but unusual) texts for one cell of `col`."""
    others = [r[index] for r in rows[1:]]
    choices = [
        st.just(""),
        st.just("   "),
        st.sampled_from(others).map(lambda t: f"  {t}\t"),  # padded: still valid
        st.sampled_from(others),  # another row's value: a repeated id when an identifier
        st.sampled_from(["very", "yes", "0x7DE", "+5", "1_0", "２０１４", "０.98", "1e999"]),
        st.sampled_from(["nan", "Infinity", "-0", "1.5", "1899", "2101", "99999999999999999999"]),
        st.sampled_from(["hihg", "Guideline", "DRG-0002", "drg_0001", "ASR_1", "EV_0001x"]),
        st.sampled_from(["a|b", "DrugBank| |Reactome", "DB:1|bad xref", "X:a\u00a0b", "|"]),
        st.sampled_from(others).map(lambda t: t[:3] + "\x00" + t[3:]),
        st.sampled_from(others).map(lambda t: t + "\x1b"),
        st.sampled_from(others).map(lambda t: t[:2] + "\t" + t[2:]),
        st.sampled_from(others).map(lambda t: t + '\nsecond line, "quoted"'),
        st.text(max_size=8),
    ]
    if col.max_length is not None:
        choices.append(st.integers(1, 3).map(lambda k: "x" * (col.max_length + k)))
    if col.enum_values:
        choices.append(st.sampled_from(col.enum_values).map(str.upper))
    return st.one_of(choices)


@st.composite
def corrupted(draw: st.DrawFn, specs: dict[str, TableSpec]) -> tuple[str, list[list[str]]]:
    table = draw(st.sampled_from(TABLES))
    rows = [list(r) for r in _rows(table)]
    by_name = {c.name: c for c in specs[table].columns}
    header = rows[0]
    for _ in range(draw(st.integers(1, 8))):
        row = draw(st.integers(1, len(rows) - 1))
        index = draw(st.integers(0, len(header) - 1))
        rows[row][index] = draw(_corruption(by_name[header[index]], rows, index))
    return table, rows


def _csv_text(rows: list[list[str]]) -> str:
    """The rows as a valid CSV file with `\\n` line ends: a cell holding the delimiter, a
    quote, `\\n` or `\\r` is quoted. (Python 3.11's csv.writer leaves a lone `\\r` bare
    when the line terminator is `\\n`, which is another file: a record broken in two, which
    pyarrow refuses; that case is `test_a_bare_carriage_return_splits_the_record_in_both_readers`.)
    """

    def cell(text: str) -> str:
        if any(c in text for c in ',"\r\n'):
            return '"' + text.replace('"', '""') + '"'
        return text

    return "".join(",".join(cell(t) for t in row) + "\n" for row in rows)


def _read(spec: TableSpec, path: Path, reader: str):
    errors = ErrorList()
    table = read_table(spec, path, errors, reader=reader)  # type: ignore[arg-type]
    found = sorted((e.location.line, e.location.field, e.message) for e in errors.errors)
    return found, table


@budget(ms=9.2)
@given(data=st.data())
def test_both_readers_report_the_same_errors(specs, data: st.DataObject) -> None:
    table, rows = data.draw(corrupted(specs))
    spec = specs[table]
    fd, name = tempfile.mkstemp(suffix=".csv")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(_csv_text(rows))
        # the property is only worth something if pyarrow really read the file
        assert tables_module._arrow_parse(path, rows[0]) is not None
        fast, fast_table = _read(spec, path, "auto")
        slow, slow_table = _read(spec, path, "python")
        assert fast == slow
        assert fast_table.lines == slow_table.lines
        assert fast_table.columns == slow_table.columns
        assert len(fast_table) + len({line for line, _, _ in fast}) == len(rows) - 1
    finally:
        path.unlink()


def test_every_rule_is_declared_once() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    assert {rule.scope for rule in RULES} <= {"cell", "item", "column"}


def test_each_column_of_the_mini_tables_runs_its_rules(specs) -> None:
    """A sanity check of `applies`: the rules a few known columns run, in order."""
    cols = {(t, c.name): c for t, s in specs.items() for c in s.columns}

    def names(table: str, column: str) -> list[str]:
        return [r.name for r in rules_for(cols[(table, column)])]

    assert names("evidence_sources", "year") == ["required", "integer", "range"]
    assert names("assertions", "confidence") == ["required", "float", "range"]
    assert names("assertions", "validated") == ["required", "boolean"]
    assert names("assertions", "evidence_level") == ["required", "enum"]
    assert names("entities", "id") == [
        "required",
        "max_length",
        "control_characters",
        "pattern",
        "unique_identifier",
    ]
    assert names("entities", "xrefs") == ["max_length", "control_characters", "pattern"]


@pytest.mark.parametrize(
    ("table", "column", "text", "message"),
    [
        # Arrow's integer cast reads hexadecimal; the rule does not
        ("evidence_sources", "year", "0x7DE", "expected an integer, got '0x7DE'"),
        ("evidence_sources", "year", "+2014", None),
        (
            "evidence_sources",
            "year",
            "99999999999999999999",
            "expected a 64-bit integer, got '99999999999999999999'",
        ),
        # Python's \s (the xref pattern's) is Unicode-aware; RE2's is not
        (
            "entities",
            "xrefs",
            "DRUGBANK:DB\u00a000722",
            "expected a value matching ^[A-Za-z][A-Za-z0-9.]*:[^\\s|]+$, got 'DRUGBANK:DB\\xa000722'",
        ),
    ],
)
def test_cases_where_arrow_and_python_once_disagreed(
    specs, table: str, column: str, text: str, message: str | None
) -> None:
    rows = _rows(table)
    rows[1][rows[0].index(column)] = text
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{table}.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle, lineterminator="\n").writerows(rows)
        for reader in ("auto", "python"):
            found, _ = _read(specs[table], path, reader)
            assert found == ([] if message is None else [(2, column, message)])


def test_a_bare_carriage_return_splits_the_record_in_both_readers(specs, tmp_path: Path) -> None:
    """Found by `make fuzz` (a cell '0\\r' written unquoted): an unquoted CR ends the record
    for both readers (pyarrow refuses the file, so the Python reader reads it), which is a
    located error on the short record and on the rest of it, never a traceback or a silently
    merged cell."""
    rows = _rows("entities")
    rows[1][0] = "0\r"
    path = tmp_path / "entities.csv"
    text = _csv_text(rows).replace('"0\r"', "0\r")  # what csv.writer wrote
    path.write_bytes(text.encode("utf-8"))
    assert tables_module._arrow_parse(path, rows[0]) is None
    for reader in ("auto", "python"):
        found, table = _read(specs["entities"], path, reader)
        assert found == [(2, None, "expected 6 columns, found 1"), (3, "id", "a value is required")]
        assert len(table) == len(rows) - 2  # the broken record's two halves are left out

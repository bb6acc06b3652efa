"""`kgbench validate` makes no assertion or evidence-link record on valid data
(`compiler.lazyrecords`), and the records it makes for flagged rows alone
(`Table.picked`) equal those of the whole-table conversion."""

from __future__ import annotations

from pathlib import Path

from bench.synth import make_domain
from compiler import ir
from compiler.crosstable import _records
from compiler.frontend import load_domain
from compiler.lazyrecords import Records
from compiler.schema import load_schema
from compiler.tables import ErrorList, read_table
from kgbench.errors import Location


def test_valid_data_makes_no_assertion_or_link_record(tmp_path: Path) -> None:
    domain, _ = make_domain(tmp_path, 2_000)
    lazy = load_domain(domain, derive=False)
    for records in (lazy.assertions, lazy.supports):
        assert isinstance(records, Records) and not records.made
    eager = load_domain(domain, derive=True)  # compile: plain tuples, as before
    assert isinstance(eager.assertions, tuple) and isinstance(eager.supports, tuple)
    assert len(lazy.assertions) == len(eager.assertions) == 2_000
    assert tuple(lazy.supports) == eager.supports  # made on demand: the same records
    assert [a.assertion_id for a in lazy.assertions] == [a.assertion_id for a in eager.assertions]


def test_picked_records_equal_the_whole_conversion(tmp_path: Path) -> None:
    domain, _ = make_domain(tmp_path, 500)
    model = load_schema(domain / "schema" / "synth.yaml", "SynthPredicate", Location("synth"))
    spec = model.tables["assertions"]
    path = domain / "data" / "assertions.csv"
    alone, whole = (read_table(spec, path, ErrorList()) for _ in range(2))
    rows = [0, 7, 123, 499]
    every = _records(ir.Assertion, whole.columns)
    assert alone.picked(ir.Assertion, rows) == {i: every[i] for i in rows}
    assert alone.column("confidence") == whole.columns["confidence"]
    assert alone.picked(ir.Assertion, []) == {}

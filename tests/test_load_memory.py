"""What the load does to keep PrimeKG-scale memory down gives the values the plain way gives.

Knowledge levels are filled by column before the records are made (`knowledge_level`), the
assertion records are made a chunk of rows at a time (`Table.records`), numbers are shared per
distinct value (`rules.interned_numbers`), and the evidence checker walks links and
assertions together instead of indexing every assertion. Each is held here to the per-row
answer it replaced, with the cases that answer had to get right (ties, row overrides, no
evidence, -0.0, links out of order).
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pytest

from compiler import ir
from compiler.evidence import EvidenceChecker
from compiler.knowledge_level import level_columns
from compiler.rules import interned_numbers
from compiler.schema import load_schema
from compiler.tables import ErrorList, read_table
from kgbench.heap import give_back

CORE = {
    "source_types": {
        "guideline": {"precedence": 1, "knowledge_level": "knowledge_assertion", "agent_type": "manual_agent"},
        "trial": {"precedence": 2, "knowledge_level": "knowledge_assertion", "agent_type": "manual_agent"},
        "cohort": {"precedence": 3, "knowledge_level": "statistical_association", "agent_type": "manual_agent"},
        "database": {"precedence": 3, "knowledge_level": "knowledge_assertion", "agent_type": "automated_agent"},
        "preprint": {"knowledge_level": None, "agent_type": "text_mining_agent"},
    },
    "knowledge_level_without_evidence": "not_provided",
}  # fmt: skip


def _per_row(ids, kls, ats, supports, evidence, core):
    """The per-assertion resolution the column form replaced (kept here as the oracle)."""
    types = core["source_types"]
    rank = {name: int(info.get("precedence") or 99) for name, info in types.items()}
    source_type = {e.evidence_id: e.source_type for e in evidence}
    by_assertion = defaultdict(list)
    for s in supports:
        by_assertion[s.assertion_id].append(source_type[s.evidence_id])
    strongest = {a: min(k, key=lambda k: (rank.get(k, 99), k)) for a, k in by_assertion.items()}
    kl_none = core.get("knowledge_level_without_evidence") or "not_provided"
    at_none = core.get("agent_type_without_evidence") or "not_provided"
    out_kl, out_at = [], []
    for aid, kl, at in zip(ids, kls, ats, strict=True):
        kind = strongest.get(aid)
        info = types.get(kind, {}) if kind else {}
        out_kl.append(kl or (info.get("knowledge_level") if kind else kl_none))
        out_at.append(at or (info.get("agent_type") if kind else at_none))
    return out_kl, out_at


def _evidence(eid: str, kind: str) -> ir.EvidenceSource:
    return ir.EvidenceSource(eid, kind, "t", "c", 2020, "high", False)


@pytest.mark.parametrize("seed", range(5))
def test_levels_by_column_are_the_per_row_levels(seed: int) -> None:
    rng = random.Random(seed)
    # "unlisted" is a source type the core does not declare (rank 99, no defaults)
    kinds = [*CORE["source_types"], "unlisted"]
    evidence = [_evidence(f"EV_{i}", rng.choice(kinds)) for i in range(12)]
    ids = [f"ASR_{i:04d}" for i in range(300)]
    kls = [rng.choice([None, None, None, "prediction"]) for _ in ids]  # some row overrides
    ats = [rng.choice([None, None, "computational_model"]) for _ in ids]
    supports = [
        ir.Support(aid, e.evidence_id)
        for aid in ids
        for e in rng.sample(evidence, rng.choice([0, 0, 1, 2, 3]))  # some without evidence
    ]
    rng.shuffle(supports)  # the column form does not rely on the links' order
    assert level_columns(ids, kls, ats, supports, evidence, CORE) == _per_row(
        ids, kls, ats, supports, evidence, CORE
    )


def test_levels_tie_on_precedence_by_name_and_default_without_evidence() -> None:
    evidence = [_evidence("EV_1", "database"), _evidence("EV_2", "cohort")]
    supports = [ir.Support("A", "EV_1"), ir.Support("A", "EV_2")]
    kl, at = level_columns(["A", "B"], [None, None], [None, "x"], supports, evidence, CORE)
    # cohort and database share precedence 3: "cohort" sorts first
    assert kl == ["statistical_association", "not_provided"]
    assert at == ["manual_agent", "x"]


def test_numbers_are_shared_and_keep_their_bits() -> None:
    values = pa.array([0.5, -0.0, 0.0, 0.5, -0.0, 0.0, 0.5, 0.5, 0.5, 0.5], pa.float64())
    got = interned_numbers(values)
    assert got == values.to_pylist()
    assert [str(v) for v in got] == [str(v) for v in values.to_pylist()]  # -0.0 stays -0.0
    assert got[0] is got[3]  # one float object per distinct value
    with_empty = pa.array([1.0, None, 1.0], pa.float64())
    assert interned_numbers(with_empty) == [1.0, None, 1.0]


def test_records_by_chunks_are_the_records_of_whole_columns(mini_copy: Path) -> None:
    schema = load_schema(mini_copy / "schema.yaml", "MiniPredicate", None)
    spec = schema.tables["assertions"]
    path = mini_copy / "data" / "assertions.csv"
    whole = read_table(spec, path, ErrorList())
    cols = whole.columns
    expected = [tuple(cols[f][i] for f in ir.Assertion._fields) for i in range(len(whole))]
    for chunk in (1, 3, 7, 1 << 16):
        table = read_table(spec, path, ErrorList())
        table.use_column("agent_type", ["given"] * len(table))  # a column given whole
        got = table.records(ir.Assertion, chunk=chunk)
        assert [tuple(r) for r in got] == [(*e[:-1], "given") for e in expected]
        assert all(type(r) is ir.Assertion for r in got)
    give_back()  # and handing pages back is harmless


def test_links_out_of_order_still_find_their_assertions() -> None:
    assertions = tuple(
        ir.Assertion(f"A{i}", "S", "P", "O", "r", "none", "c", "low", 0.5, True, None, None, "t", (), None)
        for i in range(5)
    )  # fmt: skip
    supports = (ir.Support("A3", "E"), ir.Support("A1", "E"), ir.Support("A1", "F"), ir.Support("A4", "E"), ir.Support("A0", "E"))  # fmt: skip
    domain = type("D", (), {"assertions": assertions})()
    checker = EvidenceChecker.__new__(EvidenceChecker)
    checker.domain = domain
    got = [(s.assertion_id, a.assertion_id) for s, a in checker._with_assertions(supports)]
    assert got == [(s.assertion_id, s.assertion_id) for s in supports]

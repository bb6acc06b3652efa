"""Issue 29 item 7, exclusive findings, on the fixture domain t2dcare.

The fixture declares type 1 and type 2 diabetes an exclusive group (`exclusive_findings`). A
property over random sets of the fixture's findings: the one exclusion reading flags a set
exactly when it holds two members of a group (or a one-sided `incompatible_with` pair). A
property over generated patients (several seeds and sizes): none holds two. A group may also
name an entity class, whose entities then exclude one another (derived, not listed).
"""

from __future__ import annotations

import copy
import itertools
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.scenarios.exclusive import clashes, exclusions
from harness.scenarios.generator import Generator
from harness.scenarios.kg import KnowledgeGraph
from harness.scenarios.rules import load_rules
from harness.scenarios.validation import validate_records
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
T2D = REPO / "tests" / "fixtures" / "domains" / "t2dcare"
_OUT: dict[str, CompiledDomain] = {}


def _domain() -> CompiledDomain:
    """The compiled fixture, once per test process (the property test needs it outside a
    pytest fixture)."""
    if "t2d" not in _OUT:
        tmp = Path(tempfile.mkdtemp(prefix="t2dcare-exclusive-"))
        compile_domain(T2D, out_root=tmp, force=True)
        _OUT["t2d"] = CompiledDomain.open("t2dcare", generated=tmp)
    return _OUT["t2d"]


@pytest.fixture(scope="module")
def t2d() -> CompiledDomain:
    return _domain()


def _groups(t2d: CompiledDomain) -> list[set[str]]:
    return [set(g["members"]) for g in load_rules(t2d).exclusive_findings]


def test_the_fixture_declares_the_diabetes_types_exclusive(t2d: CompiledDomain) -> None:
    assert _groups(t2d) == [{"dis-01", "dis-02"}]
    excluded = exclusions(load_rules(t2d), KnowledgeGraph(t2d))
    assert excluded["dis-01"] == {"dis-02"} and excluded["dis-02"] == {"dis-01"}


FINDINGS = ("dis-01", "dis-02", "dis-03", "rsk-01", "rsk-02", "cti-01", "cti-02", "gol-01")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.sets(st.sampled_from(FINDINGS)))
def test_a_set_of_findings_clashes_exactly_when_it_holds_two_of_a_group(found: set[str]) -> None:
    t2d = _domain()
    excluded = exclusions(load_rules(t2d), KnowledgeGraph(t2d))
    two_of_a_group = any(len(found & g) >= 2 for g in _groups(t2d))
    assert bool(clashes(excluded, sorted(found), ())) == two_of_a_group


@pytest.mark.parametrize("seed", [1, 2, 3, 5, 8, 13])
def test_no_generated_patient_holds_two_exclusive_findings(t2d: CompiledDomain, seed: int) -> None:
    groups = _groups(t2d)
    for per_category in (1, 2):
        try:
            records = Generator(t2d, seed).generate(per_category)
        except UserError:
            continue  # the graph supports fewer items than asked: nothing to check
        assert records
        for r in records:
            held = set(r["patient"]["condition_ids"])
            assert not any(len(held & g) >= 2 for g in groups), (r["scenario_id"], held)


def test_the_generator_skips_an_instance_that_would_combine_them(t2d: CompiledDomain) -> None:
    """Its consistency filter, fed an instance whose patient holds both types, refuses it."""
    from harness.scenarios.gold import GoldError

    gen = Generator(t2d)
    inst = gen.patterns.instances(load_rules(t2d).categories[0])[0]
    with pytest.raises(GoldError, match="inconsistent findings: dis-01 with dis-02"):
        gen.consistent(("dis-01", "dis-02"), inst)


def test_a_hand_written_patient_holding_both_is_refused(t2d: CompiledDomain) -> None:
    record = Generator(t2d).generate(1)[0]
    record = copy.deepcopy(record)
    record["patient"]["condition_ids"].append("dis-02")
    problems = [str(p) for p in validate_records(t2d, [(1, record)], "hand.jsonl")]
    assert any("dis-01 excludes dis-02" in p and "exclusive_findings" in p for p in problems)


def test_a_group_may_name_an_entity_class(t2d: CompiledDomain) -> None:
    """Derived from a class: every Contraindication entity of the fixture excludes the others
    (a made-up rule for the test; the fixture does not declare it)."""
    rules = replace(load_rules(t2d), exclusive_findings=({"entity_class": "Contraindication"},))
    excluded = exclusions(rules, KnowledgeGraph(t2d))
    assert excluded["cti-01"] == {"cti-02"} and excluded["cti-02"] == {"cti-01"}
    assert "dis-01" not in excluded  # nothing else is touched
    for a, b in itertools.combinations(["cti-01", "cti-02", "dis-01"], 2):
        hit = clashes(excluded, [a, b], ())
        assert bool(hit) == ({a, b} == {"cti-01", "cti-02"})


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ("{members: [dis-01]}", "an exclusive group needs two or more findings"),
        ("{members: [dis-01, dis-09]}", "unknown entity 'dis-09'"),
        ("{entity_class: Diabetes}", "unknown class 'Diabetes'"),
        ("{members: [dis-01, dis-02], entity_class: Disease}", "lists its members or names"),
    ],
)
def test_a_bad_group_is_one_located_message(tmp_path: Path, group: str, expected: str) -> None:
    from kgbench.errors import UserErrors

    spec = tmp_path / "t2dcare"
    shutil.copytree(T2D, spec)
    rules = spec / "scenarios.yaml"
    text = rules.read_text(encoding="utf-8")
    start = text.index("  - members: [dis-01, dis-02]\n")
    end = text.index("goals:\n", start)
    rules.write_text(text[:start] + f"  - {group}\n" + text[end:], encoding="utf-8")
    schema = spec / "schema.yaml"  # the copy imports the spec from its own depth
    schema.write_text(
        schema.read_text(encoding="utf-8").replace("../../../../spec/kg", str(REPO / "spec/kg")),
        encoding="utf-8",
    )
    with pytest.raises((UserError, UserErrors)) as err:
        compile_domain(spec, out_root=tmp_path / "out", force=True)
    line = text[:start].count("\n") + 1  # the group's own line
    assert expected in str(err.value) and f"scenarios.yaml, line {line}" in str(err.value)

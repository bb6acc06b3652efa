"""Outcome evidence, class-level claims and guideline recommendations through a real Neo4j
(the toy domain of tests/fixtures/domains/toy), and the prompt lines they render to."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.evaluation.prompts import PromptRenderer
from harness.graph.extract import extract
from harness.graph.load import load, run_checks

REPO = Path(__file__).resolve().parents[2]
SCENARIO = {
    "schema_version": "2.0.0",
    "scenario_id": "SCN_0001",
    "domain": "toy",
    "category": "direct_effect",
    "title": "Lowering the risk of stroke",
    "population_id": "POP_0001",
    "target_outcome_id": "OUT_0002",
    "decision_target": "Choose the preferred intervention to lower the risk of stroke.",
    "patient": {
        "age": 60,
        "sex": "male",
        "condition_ids": ["DIS_0001"],
        "labs": [],
        "narrative": "A 60-year-old man with hypertension.",
    },
    "candidates": [
        {"intervention_id": "DRG_0001", "label": "Lisinopril"},
        {"intervention_id": "DRG_0003", "label": "Metoprolol"},
        {"intervention_id": "DRG_0006", "label": "Amlodipine"},
    ],
}

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def toy(neo4j_driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("generated")
    compile_domain(REPO / "tests/fixtures/domains/toy", out_root=out, force=True)
    domain = CompiledDomain.open("toy", generated=out)
    neo4j_driver.execute_query(f"MATCH (n:{domain.label}) DETACH DELETE n")
    load(neo4j_driver, domain)
    return domain


def section(context: dict, name: str) -> dict[str, list[str]]:
    """Candidate id -> the assertion ids of one section."""
    out: dict[str, list[str]] = {}
    for s in context["sections"]:
        if s["name"] == name:
            for p in s["paths"]:
                out.setdefault(p["candidate_id"], []).extend(p["assertion_ids"])
    return out


def test_memberships_and_checks_load(neo4j_driver: neo4j.Driver, toy: CompiledDomain) -> None:
    checks = {name: (value, expect) for name, value, expect in run_checks(neo4j_driver, toy)}
    assert checks["members"] == (5, 5)
    assert all(value == expect for value, expect in checks.values())


def test_outcome_evidence_includes_class_claims_and_composites(
    neo4j_driver: neo4j.Driver, toy: CompiledDomain
) -> None:
    c3 = extract(neo4j_driver, toy, SCENARIO, "C3")
    assert c3["parameters"]["outcome_ids"] == ["OUT_0002", "OUT_0001"]  # stroke, and MACE
    outcome = section(c3, "outcome_evidence")
    # lisinopril through the ACE-inhibitor class (stroke, and MACE which contains it)
    assert sorted(outcome["DRG_0001"]) == ["ASR_0023", "ASR_0029"]
    assert outcome["DRG_0006"] == ["ASR_0028"]  # amlodipine's own trial claim
    assert "DRG_0003" not in outcome  # metoprolol: a null result is not shown in C3
    claim = c3["assertions"]["ASR_0023"]
    assert claim["subject_id"] == "CLS_001" and "DRG_0001" in claim["member_ids"]
    assert c3["entities"]["CLS_001"]["name"] == "ACE inhibitor"
    guideline = next(e for e in claim["evidence"] if e["evidence_id"] == "EV_0001")
    assert (guideline["recommendation_class"], guideline["level_of_evidence"]) == ("class_1", "A")
    c4 = extract(neo4j_driver, toy, SCENARIO, "C4")
    assert "ASR_0032" in section(c4, "outcome_evidence")["DRG_0003"]  # the null result
    assert c4["assertions"]["ASR_0032"]["provenance"] == "null result (tested, no effect shown)"


def test_class_level_claims_are_labelled_in_the_prompt(
    neo4j_driver: neo4j.Driver, toy: CompiledDomain
) -> None:
    renderer = PromptRenderer(toy)
    context = extract(neo4j_driver, toy, SCENARIO, "C4")
    text = renderer.render(SCENARIO, "C4", context)
    line = next(ln for ln in text.splitlines() if ln.lstrip("- ").startswith("[ASR_0023]"))
    assert line.endswith("| class-level claim for ACE inhibitor, applies to Lisinopril")
    assert "| provenance: guideline-supported" in line
    assert "| EV_0001: class 1, level of evidence A" in line
    contra = [ln for ln in text.splitlines() if "[ASR_0033]" in ln]
    assert contra and all("applies to Lisinopril" in ln for ln in contra)

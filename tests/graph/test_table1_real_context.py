"""The paper's Table 1 answer scored on the real SCN_0001 contexts that `kgbench extract`
returns from the cardio graph in Neo4j (issue 27, item 7): which of its ten values hold there,
and why the others moved. On the paper's own toy graph all ten hold
(tests/evaluation/test_eval_scoring.py::test_table1_worked_example_with_the_domain_lexicon)."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest

from harness.compiled import CompiledDomain
from harness.evaluation.compiled_scorer import load_compiled_scorer
from harness.graph.extract import extract
from harness.graph.load import load
from harness.scenario_files import read_scenarios

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]
SCN_0001 = REPO / "tests/fixtures/scenarios/cardio_scn_0001.jsonl"

# Table 1 of the paper: its gold and its parsed answer ("I recommend lisinopril. It blocks
# angiotensin I production and thereby lowers blood pressure, which reduces cardiovascular
# events. It also lowers LDL cholesterol. The main adverse effect to counsel is a dry cough.
# Supporting evidence: HOPE trial.")
PAPER_GOLD = {
    "preferred_intervention": "DRG_0001",
    "acceptable_interventions": ["DRG_0001", "CLS_001"],
    "causal_path_assertion_ids": ["ASR_0019", "ASR_0010", "ASR_0011", "ASR_0013"],
    "adverse_effect_assertion_ids": ["ASR_0087", "ASR_0091"],
    "contraindication_assertion_ids": [],
    "evidence_source_ids": ["EV_0007", "EV_0011"],
    "expects_uncertainty": False,
}
ANSWER = {
    "recommended_intervention": "lisinopril",
    "causal_path_assertion_ids": ["ASR_0019", "ASR_0011", "ASR_0013"],
    "adverse_effect_assertion_ids": ["ASR_0087"],
    "contraindication_assertion_ids": [],
    "supporting_evidence_ids": ["EV_0011"],
    "claims": [{"subject": "lisinopril", "predicate": "lowers", "object": "LDL cholesterol"}],
    "uncertainty_flag": False,
    "rationale": "Lisinopril lowers blood pressure through ACE inhibition.",
}
PAPER = {
    "intervention_accuracy": 1.0,
    "preferred_intervention_accuracy": 1.0,
    "causal_edge_precision": 1.0,
    "causal_edge_recall": 0.75,
    "causal_edge_f1": 0.857,
    "adverse_effect_f1": 0.667,
    "contraindication_recall": None,
    "evidence_accuracy": 1.0,
    "unsupported_claim_rate": 0.25,
    "uncertainty_correctness": 1.0,
}


@pytest.fixture(scope="module")
def cardio(neo4j_driver: neo4j.Driver) -> CompiledDomain:
    compiled = CompiledDomain.open("cardio")
    load(neo4j_driver, compiled)
    return compiled


def _rounded(scores: dict[str, float | None]) -> dict[str, float | None]:
    return {k: None if v is None else round(v, 3) for k, v in scores.items()}


def test_table1_on_the_real_scn_0001_context(neo4j_driver: neo4j.Driver, cardio: CompiledDomain):
    scorer = load_compiled_scorer(cardio)
    scenario = read_scenarios(SCN_0001)[0]
    for condition in ("C3", "C4"):
        ctx = extract(neo4j_driver, cardio, scenario, condition)
        got = _rounded(scorer.score(PAPER_GOLD, ANSWER, ctx).scores)
        # Nine of ten hold with the paper's gold. Evidence accuracy moved from 1.0 to 0.0:
        # in the curated graph HOPE (EV_0011) SUPPORTS only the ramipril claims it studied
        # (trial support was moved off physiology edges), so it supports no assertion this
        # answer cites; the paper's toy graph let it support the RAAS -> BP edge.
        assert got == {**PAPER, "evidence_accuracy": 0.0}, (condition, got)
        # With release 2.0.0's gold (four adverse effects: dry cough, hyperkalemia and two
        # more of lisinopril), adverse-effect F1 also moves: 1 of 4 cited, F1 = 0.4. The
        # contraindication list is empty as in the paper (NA), and the gold chain is the
        # paper's, so the causal values hold.
        real = _rounded(scorer.score(scenario["gold"], ANSWER, ctx).scores)
        assert len(scenario["gold"]["adverse_effect_assertion_ids"]) == 4
        assert real == {**PAPER, "evidence_accuracy": 0.0, "adverse_effect_f1": 0.4}, real
    # Under C2 the path ids are not in the context (no mechanism there): the three cited
    # ids and the LDL claim are all unsupported.
    c2 = extract(neo4j_driver, cardio, scenario, "C2")
    assert scorer.score(PAPER_GOLD, ANSWER, c2).scores["unsupported_claim_rate"] == 1.0

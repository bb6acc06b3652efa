"""Evidence accuracy credits a source only for an assertion that bears on the recommendation.

Hand-made cases on the committed cardio compile and its SCN_0004 (a woman with HFrEF;
candidates labetalol, lisinopril, amlodipine; target heart-failure hospitalisation). The
context is a C6-like block written here: the candidates' gold chain, and a padding section
holding ASR_0368, "SGLT2 inhibitor -CONTRAINDICATED_FOR-> severely reduced kidney function",
as the volume-matched control pads SCN_0004's block (issue 27). Every case is scored on both
panel paths (the generic `score_panel` and the compiled `PanelPlan`) and they must agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.compiled import CompiledDomain
from harness.evaluation.bearing import bearing_assertions
from harness.evaluation.compiled_scorer import CompiledScorer, load_compiled_scorer
from harness.evaluation.metrics import score_panel
from harness.evaluation.responders import context_reader

SCENARIO = "SCN_0004"
GOLD_CHAIN = ["ASR_0019", "ASR_0010", "ASR_0409", "ASR_0051"]  # lisinopril -> ... -> HF hosp.
PADDED_CONTRA = "ASR_0368"  # SGLT2 inhibitor (no option here) contraindicated in severe CKD
LABETALOL_CONTRA = "ASR_0245"  # a candidate's own contraindication, not in the gold
ACEI_CONTRA = "ASR_0400"  # the ACE-inhibitor class (holds lisinopril): a class-level one
EV_DRUGBANK = "EV_0003"  # supports all three contraindications and the chain's first step
EV_DAPA_CKD = "EV_0018"  # DAPA-CKD: supports ASR_0368 (not ASR_0245/0400 or the chain)
EV_HF_GUIDE = "EV_0016"  # HF guideline: supports ASR_0400 and the chain's last steps
EV_MECH = "EV_0021"  # supports ASR_0409 and ASR_0051 (gold chain steps), not the contras


@pytest.fixture(scope="module")
def cardio() -> CompiledDomain:
    return CompiledDomain.open("cardio")


@pytest.fixture(scope="module")
def scorer(cardio: CompiledDomain) -> CompiledScorer:
    return load_compiled_scorer(cardio)


@pytest.fixture(scope="module")
def scenario(cardio: CompiledDomain) -> dict[str, Any]:
    with cardio.generated_scenarios.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return next(s for s in rows if s["scenario_id"] == SCENARIO)


def _context(cardio: CompiledDomain, scenario: dict[str, Any], chain: list[str]) -> dict:
    """A C6-like block: the chain under lisinopril and the padded contraindication."""
    by_id = {a["assertion_id"]: a for a in cardio.graph["assertions"]}
    return {
        "scenario_id": SCENARIO,
        "condition": "C6",
        "parameters": {
            "candidate_ids": [c["intervention_id"] for c in scenario["candidates"]],
            "target_id": scenario["target_outcome_id"],
        },
        "sections": [
            {
                "name": "causal_chains",
                "shape": "causal_chain",
                "paths": [{"candidate_id": "DRG_0001", "assertion_ids": chain}],
            },
            {
                "name": "padding",
                "shape": "padding",
                "paths": [{"candidate_id": None, "assertion_ids": [PADDED_CONTRA]}],
            },
        ],
        "assertions": {i: by_id[i] for i in [*chain, PADDED_CONTRA]},
    }


def _answer(evidence: list[str], causal: list[str] = (), contra: list[str] = ()) -> dict:
    return {
        "recommended_intervention": "Lisinopril",
        "causal_path_assertion_ids": list(causal),
        "adverse_effect_assertion_ids": [],
        "contraindication_assertion_ids": list(contra),
        "supporting_evidence_ids": evidence,
        "claims": [],
        "uncertainty_flag": False,
        "rationale": "",
    }


def _accuracy(scorer: CompiledScorer, gold: dict, answer: dict, context: dict | None) -> float:
    """Evidence accuracy on both panel paths, which must agree."""
    fast = scorer.score(gold, answer, context).scores["evidence_accuracy"]
    generic = score_panel(scorer.metrics, gold, answer, context, scorer.lexicon)
    assert generic["evidence_accuracy"] == fast
    return fast


def test_the_facts_the_cases_rest_on(cardio: CompiledDomain, scenario: dict[str, Any]) -> None:
    """The graph says what the cases assume; if a recompile moves it, the cases are re-made."""
    by_id = {a["assertion_id"]: a for a in cardio.graph["assertions"]}
    supports: dict[str, set[str]] = {}
    for s in cardio.graph["supports"]:
        supports.setdefault(s["evidence_id"], set()).add(s["assertion_id"])
    assert by_id[PADDED_CONTRA]["subject_id"] == "CLS_010"  # SGLT2 inhibitor
    assert by_id[LABETALOL_CONTRA]["subject_id"] == "DRG_0007"  # labetalol, a candidate
    assert by_id[ACEI_CONTRA]["subject_id"] == "CLS_001"  # ACE inhibitor
    classes = {c["class_id"]: c["member_ids"] for c in cardio.graph["intervention_classes"]}
    assert "DRG_0001" in classes["CLS_001"]
    candidates = {c["intervention_id"] for c in scenario["candidates"]}
    assert candidates == {"DRG_0007", "DRG_0001", "DRG_0004"}
    assert not candidates & set(classes["CLS_010"])
    assert scenario["gold"]["causal_path_assertion_ids"] == GOLD_CHAIN
    assert {PADDED_CONTRA, LABETALOL_CONTRA, ACEI_CONTRA, GOLD_CHAIN[0]} <= supports[EV_DRUGBANK]
    assert PADDED_CONTRA in supports[EV_DAPA_CKD]
    assert not {LABETALOL_CONTRA, ACEI_CONTRA, *GOLD_CHAIN} & supports[EV_DAPA_CKD]
    assert ACEI_CONTRA in supports[EV_HF_GUIDE]
    assert {"ASR_0409", "ASR_0051"} <= supports[EV_MECH]
    assert not {LABETALOL_CONTRA, ACEI_CONTRA, PADDED_CONTRA} & supports[EV_MECH]


def test_a_padded_contraindication_of_another_class_earns_its_source_nothing(
    cardio: CompiledDomain, scorer: CompiledScorer, scenario: dict[str, Any]
) -> None:
    gold, ctx = scenario["gold"], _context(cardio, scenario, GOLD_CHAIN)
    # NO: the SGLT2-inhibitor contraindication and DAPA-CKD, beside the gold chain and its
    # mechanism source: DAPA-CKD supports only what is about no option here
    answer = _answer([EV_MECH, EV_DAPA_CKD], causal=GOLD_CHAIN, contra=[PADDED_CONTRA])
    assert _accuracy(scorer, gold, answer, ctx) == 0.5
    # NO: even DrugBank, which supports many assertions, earns nothing for the padded one
    assert _accuracy(scorer, gold, _answer([EV_DRUGBANK], contra=[PADDED_CONTRA]), ctx) == 0.0


def test_a_candidates_own_contraindication_credits_its_source(
    cardio: CompiledDomain, scorer: CompiledScorer, scenario: dict[str, Any]
) -> None:
    gold, ctx = scenario["gold"], _context(cardio, scenario, GOLD_CHAIN)
    assert LABETALOL_CONTRA not in gold["contraindication_assertion_ids"]
    # YES: labetalol's own contraindication (not a gold id), by the same DrugBank source
    answer = _answer([EV_DRUGBANK], contra=[LABETALOL_CONTRA])
    assert _accuracy(scorer, gold, answer, ctx) == 1.0
    # YES: a class-level contraindication of a class that holds a candidate (ACE inhibitor)
    answer = _answer([EV_HF_GUIDE], contra=[ACEI_CONTRA])
    assert _accuracy(scorer, gold, answer, ctx) == 1.0
    # and without a context the candidates still come from the gold's justification
    assert _accuracy(scorer, gold, answer, None) == 1.0


def test_the_gold_paths_evidence_is_accurate(
    cardio: CompiledDomain, scorer: CompiledScorer, scenario: dict[str, Any]
) -> None:
    gold, ctx = scenario["gold"], _context(cardio, scenario, GOLD_CHAIN)
    # YES: the gold chain's sources; ASR_0409 and ASR_0051 name no candidate at either end
    answer = _answer([EV_MECH, EV_HF_GUIDE, EV_DRUGBANK], causal=GOLD_CHAIN)
    assert _accuracy(scorer, gold, answer, ctx) == 1.0
    assert _accuracy(scorer, gold, _answer([EV_MECH], causal=["ASR_0409"]), None) == 1.0


def test_a_retrieved_chain_step_bears_but_not_without_the_chain(
    cardio: CompiledDomain, scorer: CompiledScorer, scenario: dict[str, Any]
) -> None:
    """A mechanism step off the gold counts when the context holds it on a candidate's chain."""
    gold = {**scenario["gold"], "causal_path_assertion_ids": [], "causal_paths": []}
    answer = _answer([EV_MECH], causal=["ASR_0409"])
    # YES: on the context's chain from lisinopril to the target
    assert _accuracy(scorer, gold, answer, _context(cardio, scenario, GOLD_CHAIN)) == 1.0
    # NO: the same step with no chain holding it bears on nothing this item decides
    assert _accuracy(scorer, gold, answer, _context(cardio, scenario, [])) == 0.0


def test_a_source_supporting_only_an_uncited_assertion_is_not_accurate(
    cardio: CompiledDomain, scorer: CompiledScorer, scenario: dict[str, Any]
) -> None:
    gold, ctx = scenario["gold"], _context(cardio, scenario, GOLD_CHAIN)
    # NO: EV_0021 supports gold chain steps, but the answer cites only labetalol's contra
    answer = _answer([EV_MECH], contra=[LABETALOL_CONTRA])
    assert _accuracy(scorer, gold, answer, ctx) == 0.0


def test_malformed_gold_and_context_bear_on_nothing_without_failing(
    scorer: CompiledScorer,
) -> None:
    hostile: list[Any] = [None, 7, "x", [], {"parameters": 3, "sections": {"a": 1}}]
    for odd in hostile:
        assert bearing_assertions({PADDED_CONTRA}, odd, odd, scorer.lexicon) == set()
    gold = {"causal_paths": [7, ["ASR_0409", None]], "justification": {"candidates": [3]}}
    assert bearing_assertions({"ASR_0409"}, gold, None, scorer.lexicon) == {"ASR_0409"}


def test_the_context_reader_cites_no_contraindication_of_a_class_that_is_no_option() -> None:
    """A prompt shaped as the C6 control writes it: the reader cites the other candidates'
    contraindications (yes) and never the padded one of another class (no)."""
    prompt = "\n".join(
        [
            "# Scenario SCN_X",
            "Target outcome: Heart failure hospitalization",
            "# Candidate options",
            "- Labetalol",
            "- Lisinopril",
            "# Grounded context: Knowledge-graph context",
            "## Outcome evidence for the target",
            "- [ASR_0285] ACE inhibitor -CAUSES_DECREASE_IN-> Heart failure hospitalization"
            " (direction: decrease) | evidence: EV_0016, EV_0033"
            " | class-level claim for ACE inhibitor, applies to Lisinopril",
            "## Safety",
            "- [ASR_0245] Labetalol -CONTRAINDICATED_FOR-> Bronchial asthma | evidence: EV_0003",
            "## Further assertions from the knowledge graph",
            "- [ASR_0368] SGLT2 inhibitor -CONTRAINDICATED_FOR-> Severely reduced kidney function"
            " | evidence: EV_0003, EV_0018",
            "# Answer format",
        ]
    )
    answer = context_reader(prompt)
    assert answer["recommended_intervention"] == "Lisinopril"
    assert answer["contraindication_assertion_ids"] == ["ASR_0245"]
    assert "EV_0018" not in answer["supporting_evidence_ids"]
    assert set(answer["supporting_evidence_ids"]) == {"EV_0016", "EV_0033", "EV_0003"}


# --- the recommendation's own claim: its outcome trial ---------------------------------------

ACEI_HF_CLAIM = "ASR_0264"  # ACE inhibitor lowers HF hospitalisation (validated, causal)
EV_ACEI_META = "EV_0024"  # supports ASR_0264 (and other ACE-inhibitor outcome claims)
GOLD_OUTCOME_SOURCE = "EV_0033"  # supports the gold's outcome claim ASR_0285 only (of these)
AMLO_HF_ASSOC = "ASR_0194"  # amlodipine ASSOCIATED_WITH HF hospitalisation (associational)
EV_ASSOC = "EV_0004"


def _outcome_context(cardio: CompiledDomain, scenario: dict[str, Any]) -> dict:
    """An outcome-evidence section: the ACE-inhibitor claim under lisinopril, and an
    association (no causal claim) under amlodipine."""
    ctx = _context(cardio, scenario, [])
    by_id = {a["assertion_id"]: a for a in cardio.graph["assertions"]}
    ctx["sections"].append(
        {
            "name": "outcome_evidence",
            "shape": "target_edges",
            "paths": [
                {"candidate_id": "DRG_0001", "assertion_ids": [ACEI_HF_CLAIM]},
                {"candidate_id": "DRG_0004", "assertion_ids": [AMLO_HF_ASSOC]},
            ],
        }
    )
    for aid in (ACEI_HF_CLAIM, AMLO_HF_ASSOC):
        ctx["assertions"][aid] = {**by_id[aid], "validated": True}
    return ctx


def test_the_recommendations_outcome_trial_is_accurate_for_that_recommendation_only(
    cardio: CompiledDomain, scorer: CompiledScorer, scenario: dict[str, Any]
) -> None:
    gold = scenario["gold"]
    assert gold["outcome_assertion_ids"] == ["ASR_0285"]
    by_id = {a["assertion_id"]: a for a in cardio.graph["assertions"]}
    assert by_id[ACEI_HF_CLAIM]["causal_status"] == "causal"
    assert by_id[AMLO_HF_ASSOC]["causal_status"] == "associational"
    # YES: recommending lisinopril, the gold's outcome source counts with no id cited (the
    # contract has no field for the recommendation's own claim), with or without a context
    lisinopril = _answer([GOLD_OUTCOME_SOURCE])
    assert _accuracy(scorer, gold, lisinopril, None) == 1.0
    # NO: the same source behind an answer recommending amlodipine, not an acceptable pick
    amlodipine = {**lisinopril, "recommended_intervention": "Amlodipine"}
    assert _accuracy(scorer, gold, amlodipine, None) == 0.0
    # YES: a context's validated causal outcome claim under the recommended candidate
    no_outcome_gold = {**gold, "outcome_assertion_ids": []}
    ctx = _outcome_context(cardio, scenario)
    answer = _answer([EV_ACEI_META])
    assert _accuracy(scorer, no_outcome_gold, answer, ctx) == 1.0
    assert _accuracy(scorer, no_outcome_gold, answer, _context(cardio, scenario, [])) == 0.0
    # NO: an association shown under amlodipine is no claim that it lowers the target
    answer = {**_answer([EV_ASSOC]), "recommended_intervention": "Amlodipine"}
    assert _accuracy(scorer, no_outcome_gold, answer, ctx) == 0.0
    # NO: an abstention makes no claim
    answer = {**_answer([GOLD_OUTCOME_SOURCE]), "recommended_intervention": None}
    assert _accuracy(scorer, gold, answer, None) == 0.0

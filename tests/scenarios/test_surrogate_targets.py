"""Issue 29 item 6, surrogate targets, both ways, on the fixture domain t2dcare.

Hyperglycaemia (measured as HbA1c) is an intermediate quantity. A direct claim on it backed by
a trial qualifies: metformin (UKPDS 34, Lancet 1998), liraglutide (LEAD-3 Mono, Lancet 2009),
the sulfonylureas (UKPDS 33, Lancet 1998). A mechanism chain does not: empagliflozin reaches
hyperglycaemia only through SGLT2 and renal glucose reabsorption in this graph (no HbA1c trial
is recorded), so a hand-written gold naming it fails, and the message names the candidate, the
target and the claim that would qualify it.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.scenarios.audit import ABSTAIN, CHANGES, UNCHANGED, ItemJudge
from harness.scenarios.evidence import QUALIFIED, UNPROVEN
from harness.scenarios.validation import validate_records

REPO = Path(__file__).resolve().parents[2]
T2D = REPO / "tests" / "fixtures" / "domains" / "t2dcare"
HBA1C = "rsk-01"


@pytest.fixture(scope="module")
def t2d(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("t2dcare-surrogate")
    compile_domain(T2D, out_root=out, force=True)
    return CompiledDomain.open("t2dcare", generated=out)


def _item(preferred: str, candidates: list[str], version: str) -> dict:
    names = {
        "drug-01": "Metformin",
        "drug-02": "Empagliflozin",
        "drug-04": "Glimepiride",
        "drug-05": "Sitagliptin",
    }
    return {
        "schema_version": version,
        "scenario_id": "T2D-900",
        "domain": "t2dcare",
        "category": "direct_effect",
        "title": "Lowering HbA1c",
        "patient": {
            "age": 58,
            "sex": "male",
            "condition_ids": ["dis-01", HBA1C],
            "labs": [{"name": "HbA1c", "unit": "%", "value": 8.4}],
            "pregnancy_status": "not_pregnant",
            "narrative": "A 58-year-old man with type 2 diabetes. Recent results: HbA1c 8.4%.",
        },
        "decision_target": "Choose the preferred intervention to lower HbA1c in this patient.",
        "target_outcome_id": HBA1C,
        "candidates": [{"intervention_id": c, "label": names[c]} for c in candidates],
        "gold": {
            "preferred_intervention": preferred,
            "acceptable_interventions": [preferred],
            "outcome_assertion_ids": [],
            "causal_path_assertion_ids": [],
            "adverse_effect_assertion_ids": [],
            "contraindication_assertion_ids": [],
            "evidence_source_ids": [],
            "expects_uncertainty": False,
        },
        "anchor_assertion_ids": [],
        "source": "hand-written for issue 29 item 6",
    }


def test_a_direct_trial_backed_claim_on_the_surrogate_qualifies(t2d: CompiledDomain) -> None:
    judge = ItemJudge(t2d)
    metformin = judge.judge.judge("drug-01", HBA1C, None, ("dis-01",))  # type: ignore[arg-type]
    assert metformin.status == QUALIFIED and metformin.claim is not None
    assert metformin.claim.assertion_id == "CL023" and metformin.claim.qualifying == ("REF04",)
    glimepiride = judge.judge.judge("drug-04", HBA1C, None, ("dis-01",))  # type: ignore[arg-type]
    assert glimepiride.qualified and glimepiride.claim.via_class == "cls-01"  # type: ignore[union-attr]
    record = _item("drug-01", ["drug-01", "drug-05"], judge.rules.scenario_schema_version)
    record["gold"].update(outcome_assertion_ids=["CL023"], evidence_source_ids=["REF04"])
    assert judge.item(record).outcome == UNCHANGED
    problems = [str(p) for p in validate_records(t2d, [(1, record)], "hand.jsonl")]
    assert not [p for p in problems if "gold.preferred_intervention" in p], problems


def test_a_mechanism_chain_to_the_surrogate_does_not(t2d: CompiledDomain) -> None:
    judge = ItemJudge(t2d)
    empagliflozin = judge.judge.judge("drug-02", HBA1C, None, ("dis-01",))  # type: ignore[arg-type]
    assert empagliflozin.status == UNPROVEN and not empagliflozin.claims
    # with no qualified candidate the answer is to abstain; the message says what would qualify
    alone = _item("drug-02", ["drug-02", "drug-05"], judge.rules.scenario_schema_version)
    audited = judge.item(alone)
    assert audited.outcome == ABSTAIN
    (message,) = [
        str(p)
        for p in validate_records(t2d, [(1, alone)], "hand.jsonl")
        if "gold.preferred_intervention" in str(p)
    ]
    assert "Empagliflozin (drug-02) has no qualifying outcome claim on Hyperglycaemia (rsk-01)" in (
        message
    )
    assert "a direct claim would qualify it: drug-02 (or a homogeneous class of it) lowering " in (
        message
    )
    assert "a mechanism chain never does" in message
    assert "(its chain CL001 -> CL002 -> CL003 is a mechanism)" in message
    # against a qualified rival the rules give the rival, and the message still says why
    rival = _item("drug-02", ["drug-02", "drug-01"], judge.rules.scenario_schema_version)
    assert judge.item(rival).outcome == CHANGES
    (message,) = [
        str(p)
        for p in validate_records(t2d, [(1, copy.deepcopy(rival))], "hand.jsonl")
        if "gold.preferred_intervention" in str(p)
    ]
    assert "the evidence rules give 'drug-01' (outcome evidence: CL023)" in message
    assert "Empagliflozin (drug-02) has no qualifying outcome claim on Hyperglycaemia" in message

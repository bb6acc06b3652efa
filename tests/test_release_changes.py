"""The per-item changelog names what changed in an item, on hand-made records.

A changelog must list every changed item and why (issue 26): an item whose only change is the
wording of an excluded candidate's justification, or a lab value, is a changed item, never
"unchanged"; a background sentence the old vignette already stated is not news.
"""

from __future__ import annotations

import copy
from typing import Any

from tools.release_changes import changes

STATED = ["He takes no statin or other lipid-lowering medication."]


def _item() -> dict[str, Any]:
    return {
        "scenario_id": "SCN_0001",
        "category": "incomplete_evidence",
        "target_outcome_id": "OUT_0007",
        "population_id": "POP_0008",
        "candidates": [{"intervention_id": "INT_0009"}, {"intervention_id": "DRG_0010"}],
        "patient": {
            "narrative": "A 60-year-old man. He takes no statin or other lipid-lowering "
            "medication. Recent results: eGFR 28 mL/min/1.73 m2.",
            "labs": [{"name": "eGFR", "unit": "mL/min/1.73 m2", "value": 28}],
        },
        "gold": {
            "preferred_intervention": None,
            "justification": {
                "candidates": [
                    {
                        "intervention_id": "INT_0009",
                        "reason": "no_outcome_evidence",
                        "summary": "no qualifying guideline recommendation",
                    },
                    {
                        "intervention_id": "DRG_0010",
                        "reason": "null_evidence",
                        "summary": "tested and not shown to lower",
                    },
                ]
            },
        },
    }


def test_an_identical_item_is_unchanged() -> None:
    assert changes(_item(), _item(), STATED) == ["unchanged"]


def test_new_justification_words_name_the_candidate() -> None:
    new = _item()
    new["gold"]["justification"]["candidates"][0]["summary"] = "recommended for ACS (class 1)"
    assert changes(_item(), new, STATED) == ["justification text (INT_0009)"]


def test_a_changed_lab_is_named_and_an_old_background_sentence_is_not_news() -> None:
    new = copy.deepcopy(_item())
    new["patient"]["narrative"] = new["patient"]["narrative"].replace("28", "34")
    new["patient"]["labs"][0]["value"] = 34
    # the statin sentence was in the old vignette too: only the wording and the lab changed
    assert changes(_item(), new, STATED) == ["vignette wording (labs: eGFR 28 -> 34)"]


def test_a_new_background_sentence_is_named() -> None:
    old = _item()
    old["patient"]["narrative"] = "A 60-year-old man. Recent results: eGFR 28 mL/min/1.73 m2."
    assert changes(old, _item(), STATED) == ["vignette states background: " + STATED[0]]


def test_any_other_difference_is_never_reported_as_unchanged() -> None:
    new = _item()
    new["gold"]["justification"]["candidates"][1]["assertion_ids"] = ["ASR_0325"]
    assert changes(_item(), new, STATED) == ["other fields"]

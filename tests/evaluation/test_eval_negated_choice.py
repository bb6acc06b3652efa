"""A recommendation that rejects the only intervention it names is no pick of it (reliability
review 2026-12, sc.negated-alone: "avoid lisinopril" on an item whose gold is lisinopril
scored intervention accuracy 1.0). Hand-made answers on mini's SCN_0001 (gold: Lisinopril),
the "no" cases included: a rejecting word that does not govern the name leaves the pick."""

from __future__ import annotations

import pytest

from harness.evaluation.scoring import score_response

REJECTING = [
    "avoid lisinopril",
    "Avoid Lisinopril.",
    "do not use lisinopril",
    "no lisinopril",
    "never lisinopril",
    "stop lisinopril",
    "lisinopril should be avoided",
    "lisinopril (not recommended)",
    "Not lisinopril (contraindicated); prefer smoking cessation",  # sc.negated, which held
]
PICKING = [
    "Lisinopril",
    " LISINOPRIL ",
    "Lisinopril 10 mg daily",
    "Lisinopril (no contraindication)",
    "Start lisinopril",
    "lisinopril is not contraindicated",
    "Lisinopril, since nothing speaks against it",
]


def _accuracy(mini_domain, mini_scenarios, text: str) -> tuple[float | None, float | None]:
    scenario = mini_scenarios[0]
    assert scenario["gold"]["preferred_intervention"] == "DRG_0001"  # Lisinopril
    answer = {"recommended_intervention": text, "uncertainty_flag": False}
    scores = score_response(scenario["gold"], answer, None, domain=mini_domain)
    return scores["intervention_accuracy"], scores["preferred_intervention_accuracy"]


@pytest.mark.parametrize("text", REJECTING)
def test_sc_negated_alone_a_rejected_gold_is_not_a_pick(mini_domain, mini_scenarios, text):
    assert _accuracy(mini_domain, mini_scenarios, text) == (0.0, 0.0)


@pytest.mark.parametrize("text", PICKING)
def test_a_pick_beside_a_word_that_does_not_reject_it_still_counts(
    mini_domain, mini_scenarios, text
):
    assert _accuracy(mini_domain, mini_scenarios, text) == (1.0, 1.0)

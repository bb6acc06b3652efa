"""A finding declared `stated_in` some populations is named only in their vignettes (issue 26
follow-up, review 2026-12-A): "signs of fluid retention" is congestion in heart failure, but
said of a patient with type 2 diabetes and no known heart disease it calls for a heart-failure
work-up, so there the finding stays the chain's mediator without being said."""

from __future__ import annotations

import json
from pathlib import Path

from harness.scenarios.narratives import Wording

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = {
    "opening": "{Article} {age}-year-old {person}{conditions}.",
    "labs": "Recent results: {labs}.",
    "pregnant": "{Pronoun} is pregnant.",
    "not_pregnant": "{Pronoun} is not pregnant.",
    "outcome_phrase": "the risk of {name}",
    "person": {"female": "woman", "male": "man"},
}


def _wording() -> Wording:
    names = {"DIS_1": "Type 2 diabetes", "DIS_2": "Heart failure", "RSK_1": "Volume expansion"}
    profiles = {
        "DIS_1": {"phrase": "type 2 diabetes"},
        "DIS_2": {"phrase": "heart failure"},
        "RSK_1": {"phrase": "signs of fluid retention", "stated_in": ["POP_HF"]},
    }
    return Wording(names, profiles, {}, TEMPLATES)


def test_a_finding_is_said_only_in_the_populations_it_is_stated_in() -> None:
    wording = _wording()
    # yes: in a heart-failure population the sign is said
    assert wording.narrative(70, "male", "POP_HF", ["DIS_2", "RSK_1"], [], None) == (
        "A 70-year-old man with heart failure and signs of fluid retention."
    )
    # no: with diabetes and no heart failure it is not said (it stays in the findings)
    assert wording.narrative(65, "female", "POP_T2D", ["DIS_1", "RSK_1"], [], None) == (
        "A 65-year-old woman with type 2 diabetes."
    )
    # no population at all is not a heart-failure population either
    assert "fluid" not in wording.narrative(65, "female", None, ["DIS_1", "RSK_1"], [], None)


def test_a_finding_without_stated_in_is_said_everywhere() -> None:
    wording = _wording()
    for population in ("POP_HF", "POP_T2D", None):
        assert wording.narrative(60, "female", population, ["DIS_1"], [], None) == (
            "A 60-year-old woman with type 2 diabetes."
        )


def test_cardio_says_fluid_retention_only_with_heart_failure() -> None:
    """The committed cardio scenarios: every item holding RSK_0009 names it exactly where the
    population is heart failure (HFrEF POP_0007, HFpEF POP_0011); both kinds exist."""
    path = REPO / "generated" / "cardio" / "scenarios" / "scenarios.jsonl"
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    holding = [s for s in items if "RSK_0009" in s["patient"]["condition_ids"]]
    said = {s["population_id"] in ("POP_0007", "POP_0011") for s in holding}
    assert said == {True, False}, "expected items with and without heart failure"
    for s in holding:
        heart_failure = s["population_id"] in ("POP_0007", "POP_0011")
        named = "signs of fluid retention" in s["patient"]["narrative"]
        assert named == heart_failure, (s["scenario_id"], s["patient"]["narrative"])

"""The volume-matched controls without Neo4j (issue 27 item 6): what padding may hold, how
much of it is chosen, and that the controls are declared optional, off by default.
The same on the real cardio graph in Neo4j: tests/graph/test_volume_control.py."""

from __future__ import annotations

import pytest

from harness.compiled import CompiledDomain
from harness.graph.volume import (
    check_padding,
    choose,
    padding_pool,
    required_exclusions,
    seed_of,
    seeded_order,
    touches,
)
from kgbench.errors import UserError


@pytest.fixture(scope="module")
def cardio() -> CompiledDomain:
    return CompiledDomain.open("cardio")


def _params(domain: CompiledDomain, scenario_id: str = "SCN_0001") -> dict:
    from harness.graph.extract import parameters
    from harness.scenario_files import read_scenarios

    items = read_scenarios(domain.root / "scenarios" / "scenarios.jsonl")
    return parameters(next(s for s in items if s["scenario_id"] == scenario_id), domain)


def test_the_controls_are_declared_optional_and_off_by_default(cardio: CompiledDomain) -> None:
    controls = {c.id: c for c in cardio.conditions if c.volume_match is not None}
    assert set(controls) == {"C6", "C7"}
    assert {c: (m.volume_match.base, m.volume_match.reference) for c, m in controls.items()} == {
        "C6": ("C2", "C4"),
        "C7": ("C3", "C4"),
    }
    assert all(c.optional and 0 < c.volume_match.tolerance <= 0.05 for c in controls.values())
    # a control shows its base's sections: its block is the base's, plus padding
    assert controls["C7"].sections == cardio.condition("C3").sections
    assert [c.id for c in cardio.default_conditions] == ["C1", "C2", "C3", "C4", "C5"]


def test_padding_never_names_a_candidate_the_target_or_a_candidates_neighbour(
    cardio: CompiledDomain,
) -> None:
    params = _params(cardio)
    hood = frozenset(required_exclusions(cardio, params))
    assert {*params["candidate_ids"], params["target_id"]} <= hood
    pool = set(padding_pool(cardio, hood, set()))
    assert pool, "the cardio graph holds content irrelevant to SCN_0001"
    by_id = {a["assertion_id"]: a for a in cardio.graph["assertions"]}
    candidates = set(params["candidate_ids"])
    # "no" cases: an assertion about a candidate, about the target, and one a candidate's
    # neighbour is part of, are all in the graph and none may pad
    about_candidate = [a for a in by_id.values() if a["subject_id"] in candidates]
    about_target = [a for a in by_id.values() if a["object_id"] == params["target_id"]]
    # a neighbour that is an assertion's endpoint (the neighbourhood also holds populations
    # and classes that no assertion names as subject or object); sorted, so the choice does
    # not depend on the interpreter's string hashing
    endpoints = {a["subject_id"] for a in by_id.values()} | {a["object_id"] for a in by_id.values()}
    neighbours = sorted((hood - candidates - {params["target_id"]}) & endpoints)
    assert neighbours, "SCN_0001's neighbourhood holds no node beyond candidates and target"
    neighbour = neighbours[0]
    about_neighbour = [a for a in by_id.values() if neighbour in (a["subject_id"], a["object_id"])]
    for relevant in (about_candidate, about_target, about_neighbour):
        assert relevant and not pool & {a["assertion_id"] for a in relevant}
        assert all(touches(a, hood) for a in relevant)
    assert not any(touches(by_id[i], hood) for i in pool)


def test_check_padding_refuses_a_padding_that_touches_the_item(cardio: CompiledDomain) -> None:
    params = _params(cardio)
    hood = frozenset(required_exclusions(cardio, params))
    by_id = {a["assertion_id"]: a for a in cardio.graph["assertions"]}
    fine = padding_pool(cardio, hood, set())[0]
    relevant = next(a for a in by_id.values() if a["subject_id"] == params["candidate_ids"][0])

    def context(ids: list[str], excluded: list[str]) -> dict:
        return {
            "scenario_id": "SCN_0001",
            "condition": "C7",
            "parameters": params,
            "sections": [
                {
                    "name": "padding",
                    "title": "Further assertions from the knowledge graph",
                    "shape": "padding",
                    "paths": [{"candidate_id": None, "assertion_ids": [i]} for i in ids],
                }
            ],
            "assertions": {i: by_id[i] for i in ids},
            "volume_match": {"excluded_entity_ids": excluded},
        }

    check_padding(context([fine], sorted(hood)), cardio)  # irrelevant: accepted
    with pytest.raises(UserError, match=f"padding assertion {relevant['assertion_id']} touches"):
        check_padding(context([fine, relevant["assertion_id"]], sorted(hood)), cardio)
    # an edited record that excludes nothing does not let it through: the exclusions are
    # re-derived from the compiled graph
    with pytest.raises(UserError, match="touches the item"):
        check_padding(context([relevant["assertion_id"]], []), cardio)


def test_choose_stops_within_tolerance_and_skips_what_would_overshoot() -> None:
    lengths = {"a": 40, "b": 500, "c": 30, "d": 20}
    base = 100

    def measure(ids) -> int:
        return base + sum(lengths[i] for i in ids)

    # 100 + a 40 = 140; b would give 640 > 200 + 10; c, d fill to 190 >= 190
    assert choose(["a", "b", "c", "d"], measure, target=200, tolerance=10) == ["a", "c", "d"]
    # no padding when the base is already long enough
    assert choose(["a"], measure, target=100, tolerance=5) == []
    # too little irrelevant content: as long as it can be, never past the bound
    assert choose(["a", "c"], measure, target=1000, tolerance=10) == ["a", "c"]


def test_the_padding_order_is_a_function_of_domain_item_and_condition() -> None:
    pool = [f"ASR_{i:04d}" for i in range(50)]
    one = seeded_order(pool, seed_of("cardio", "SCN_0001", "C7"))
    assert one == seeded_order(list(reversed(pool)), seed_of("cardio", "SCN_0001", "C7"))
    assert one != seeded_order(pool, seed_of("cardio", "SCN_0002", "C7"))
    assert one != seeded_order(pool, seed_of("cardio", "SCN_0001", "C6"))
    assert sorted(one) == pool


def test_the_report_says_how_many_padded_prompts_reached_the_reference_length() -> None:
    from harness.report.tables import volume_note

    panel = {
        "conditions": ["C3", "C4", "C7"],
        "context_volume": {
            "C3": {"characters": 8306.0, "assertions": 30.0, "prompts": 80},
            "C4": {"characters": 21571.0, "assertions": 90.0, "prompts": 80},
            "C7": {
                "characters": 20378.1,
                "assertions": 70.5,
                "prompts": 80,
                "reference": "C4",
                "matched": 41,
            },
        },
    }
    note = volume_note(panel)
    assert "C3 8,306 characters, 30 assertions;" in note
    assert (
        "C7 20,378 characters, 70.5 assertions (padded to C4's length, within tolerance in " in note
    )
    assert "41 of 80 prompts)" in note

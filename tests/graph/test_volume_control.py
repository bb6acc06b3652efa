"""The volume-matched controls on the real cardio graph in Neo4j (issue 27 item 6): C6 and C7
are C2's and C3's blocks, extracted and rendered through the compiled queries and templates,
padded with content irrelevant to the item to the length of the item's C4 block.
The pure parts (what may pad, how much is chosen): tests/test_volume_padding.py."""

from __future__ import annotations

import math

import neo4j
import pytest

from harness.compiled import CompiledDomain
from harness.evaluation.prompts import PromptRenderer
from harness.graph.extract import check_against_compile, extract, shaped_assertions
from harness.graph.load import load
from harness.graph.volume import check_padding, neighbourhood, padding_pool, with_padding
from harness.scenario_files import read_scenarios
from kgbench.errors import UserError

pytestmark = pytest.mark.neo4j

CONTROLS = ("C6", "C7")


@pytest.fixture(scope="module")
def cardio(neo4j_driver: neo4j.Driver) -> CompiledDomain:
    compiled = CompiledDomain.open("cardio")
    load(neo4j_driver, compiled)
    return compiled


@pytest.fixture(scope="module")
def items(cardio: CompiledDomain) -> list[dict]:
    """Every eighth cardio item (one per category and then some), SCN_0001 first."""
    return read_scenarios(cardio.root / "scenarios" / "scenarios.jsonl")[::8]


@pytest.fixture(scope="module")
def padded(neo4j_driver, cardio, items) -> dict[tuple[str, str], tuple[dict, dict]]:
    """(item, control) -> (the control's context, the item's C4 context)."""
    out = {}
    for item in items:
        reference = extract(neo4j_driver, cardio, item, "C4")
        for cond in CONTROLS:
            out[item["scenario_id"], cond] = (extract(neo4j_driver, cardio, item, cond), reference)
    return out


def _padding_ids(context: dict) -> list[str]:
    return [
        i
        for s in context["sections"]
        if s["shape"] == "padding"
        for p in s["paths"]
        for i in p["assertion_ids"]
    ]


def test_the_padded_block_is_within_the_declared_tolerance_of_c4s(
    neo4j_driver, cardio, padded
) -> None:
    renderer = PromptRenderer(cardio)
    matched = 0
    for (sid, cond), (context, reference) in padded.items():
        record = context["volume_match"]
        declared = cardio.condition(cond).volume_match
        c4 = len(renderer.context_block("C4", reference))
        block = renderer.context_block(cond, context)
        tolerance = math.floor(declared.tolerance * c4)
        assert (record["reference_characters"], record["characters"]) == (c4, len(block))
        assert record["tolerance_characters"] == tolerance
        assert record["matched"] == (abs(len(block) - c4) <= tolerance), sid
        # the base block is there unchanged, under its own heading: only padding was added
        unpadded = [s for s in context["sections"] if s["shape"] != "padding"]
        base = renderer.context_block(
            declared.base, {**context, "sections": unpadded, "condition": declared.base}
        )
        assert block.startswith(base.rstrip("\n")), sid
        if record["matched"]:
            matched += 1
            continue
        if record["base_characters"] > c4 + tolerance:
            continue  # the base block is already longer than C4's: nothing to pad
        # not matched only where the irrelevant content ran out: the block is short, and each
        # irrelevant assertion left out would, added, overshoot the bound
        assert len(block) < c4 - tolerance, sid
        used = set(_padding_ids(context))
        pool = padding_pool(
            cardio,
            neighbourhood(cardio, context["parameters"], reference),
            set(context["assertions"]) - used,
        )
        unused = [i for i in pool if i not in used]
        row = neo4j_driver.execute_query(
            cardio.read(declared.padding_query), parameters_={"assertion_ids": unused}
        ).records[0]
        fetched = shaped_assertions(row["assertions"], row["sources"])
        for aid in unused:
            more = with_padding(
                context,
                declared,
                [*_padding_ids(context), aid],
                {**context["assertions"], **fetched},
            )
            assert len(renderer.context_block(cond, more)) > c4 + tolerance, (sid, cond, aid)
    assert matched >= len(padded) // 4, f"only {matched} of {len(padded)} matched"


def test_no_padding_assertion_mentions_a_candidate_or_the_target(cardio, padded) -> None:
    renderer = PromptRenderer(cardio)
    for (sid, cond), (context, reference) in padded.items():
        params = context["parameters"]
        hood = neighbourhood(cardio, params, reference)
        near = {*params["candidate_ids"], params["target_id"], *params["outcome_ids"]}
        names = [cardio.entities[i]["name"] for i in near]
        block = renderer.context_block(cond, context)
        padding_text = block.split("## Further assertions from the knowledge graph", 1)
        for aid in _padding_ids(context):
            a = context["assertions"][aid]
            assert not {a["subject_id"], a["object_id"]} & hood, (sid, cond, aid)
        if len(padding_text) == 2:
            lowered = padding_text[1].lower()
            assert not [n for n in names if n.lower() in lowered], (sid, cond)
        check_against_compile(context, cardio, {"scenario_id": sid, **_scenario(context)})
        check_padding(context, cardio)


def _scenario(context: dict) -> dict:
    params = context["parameters"]
    return {
        "candidates": [{"intervention_id": i} for i in params["candidate_ids"]],
        "target_outcome_id": params["target_id"],
        "population_id": next((i for i in params["context_ids"] if i.startswith("POP_")), None),
        "patient": {
            "condition_ids": [i for i in params["context_ids"] if not i.startswith("POP_")]
        },
    }


def test_a_padding_holding_relevant_content_is_refused(cardio, padded, items) -> None:
    context, _ = padded[items[0]["scenario_id"], "C7"]
    relevant = next(
        aid
        for aid, a in context["assertions"].items()
        if a["subject_id"] in context["parameters"]["candidate_ids"]
    )
    edited = {
        **context,
        "sections": [
            *context["sections"],
            {
                "name": "padding",
                "title": "x",
                "shape": "padding",
                "paths": [{"candidate_id": None, "assertion_ids": [relevant]}],
            },
        ],
    }
    with pytest.raises(UserError, match=f"padding assertion {relevant} touches the item"):
        check_padding(edited, cardio)


def test_the_same_item_gives_the_same_prompt_byte_for_byte(neo4j_driver, cardio, items) -> None:
    renderer = PromptRenderer(cardio)
    first, second = items[0], items[1]
    once = renderer.render(first, "C7", extract(neo4j_driver, cardio, first, "C7"))
    again = renderer.render(first, "C7", extract(neo4j_driver, cardio, first, "C7"))
    assert once.encode() == again.encode()
    one = extract(neo4j_driver, cardio, first, "C7")["volume_match"]["seed"]
    other = extract(neo4j_driver, cardio, second, "C7")["volume_match"]["seed"]
    assert one != other
    # outside the grounded block the prompt is C3's, byte for byte (paper section 3.4)
    c3 = renderer.render(first, "C3", extract(neo4j_driver, cardio, first, "C3"))
    head, tail = "# Grounded context", "# Answer format"
    assert once[: once.index(head)] == c3[: c3.index(head)]
    assert once[once.index(tail) :] == c3[c3.index(tail) :]

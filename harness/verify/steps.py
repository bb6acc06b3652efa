"""The model steps' prompts and strict answer schemas (generate, revise), and the answer
step's grounded block. One owner for the text both the driver and the reference
responders read: a step is named by its first line (`# Verify-and-revise step: <name>`).
"""

from __future__ import annotations

from typing import Any

from kgbench import contract

STEP_MARK = "# Verify-and-revise step: "


def _scenario_head(scenario: dict[str, Any], target: str) -> str:
    lines = [
        f"# Scenario {scenario['scenario_id']}",
        str(scenario.get("patient", {}).get("narrative", "")),
        "",
        f"Decision: {scenario.get('decision_target', '')}",
        f"Target outcome: {target}",
        "",
        "# Candidate options",
        *(f"- {c['label']}" for c in scenario["candidates"]),
    ]
    return "\n".join(lines)


def _vocabulary(v: contract.Verify, predicates: dict[str, dict[str, Any]]) -> str:
    return "\n".join(
        f"- {p}: {predicates.get(p, {}).get('description', '')}".rstrip() for p in v.predicates
    )


def generate_prompt(
    v: contract.Verify,
    scenario: dict[str, Any],
    target: str,
    predicates: dict[str, dict[str, Any]],
) -> str:
    instruction = v.prompts["generate"].replace("{max_triplets}", str(v.max_triplets))
    return (
        f"{STEP_MARK}generate\n{instruction}\n\n{_scenario_head(scenario, target)}\n\n"
        f"# Predicates\n{_vocabulary(v, predicates)}\n\n"
        "Reply with a JSON object: `triplets`, a list of {candidate, subject, predicate, object}; "
        "`candidate` is the option's name as listed.\n"
    )


def revise_prompt(
    v: contract.Verify,
    scenario: dict[str, Any],
    target: str,
    refuted: list[tuple[int, str, str | None]],
    predicates: dict[str, dict[str, Any]],
) -> str:
    """`refuted`: (index, triplet as text, the graph's correction in words or None).

    KGARevion's reviser (the default) is told only that each triplet was refuted: its
    corrections are None and no graph line is shown. The informed reviser (a declared
    variant) gets the graph's correction under each, and its own instruction."""
    informed = any(why is not None for _, _, why in refuted)
    items = "\n".join(
        f"{i}. {text}" + (f"\n   Graph: {why}" if why is not None else "")
        for i, text, why in refuted
    )
    instruction = (
        v.prompts.get("revise_informed", v.prompts["revise"]) if informed else v.prompts["revise"]
    )
    return (
        f"{STEP_MARK}revise\n{instruction}\n\n{_scenario_head(scenario, target)}\n\n"
        f"# Refuted triplets\n{items}\n\n# Predicates\n{_vocabulary(v, predicates)}\n\n"
        "Reply with a JSON object: `revisions`, a list of {index, subject, predicate, object}, "
        "one per refuted triplet, `index` as numbered above.\n"
    )


def _triplet(predicates: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "subject": {"type": "string"},
            "predicate": {"type": "string", "enum": predicates},
            "object": {"type": "string"},
        },
        "required": ["subject", "predicate", "object"],
    }


def generate_schema(v: contract.Verify) -> dict[str, Any]:
    item = _triplet(list(v.predicates))
    item["properties"] = {"candidate": {"type": "string"}, **item["properties"]}
    item["required"] = ["candidate", *item["required"]]
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {"triplets": {"type": "array", "items": item}},
        "required": ["triplets"],
    }


def revise_schema(v: contract.Verify) -> dict[str, Any]:
    item = _triplet(list(v.predicates))
    item["properties"] = {"index": {"type": "integer"}, **item["properties"]}
    item["required"] = ["index", *item["required"]]
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {"revisions": {"type": "array", "items": item}},
        "required": ["revisions"],
    }


def assertion_line(a: dict[str, Any], entities: dict[str, dict[str, Any]], evidence: str) -> str:
    """One assertion in the line format of the compiled context blocks (C2-C4)."""
    s = entities.get(a["subject_id"], {}).get("name", a["subject_id"])
    o = entities.get(a["object_id"], {}).get("name", a["object_id"])
    direction = (
        f" (direction: {a['direction']})" if a.get("direction") not in (None, "none") else ""
    )
    return f"[{a['assertion_id']}] {s} -{a['predicate']}-> {o}{direction} | evidence: {evidence}"

"""What C5 answers from: the verified triplets as an extracted context (contract.Context, which
the scorer's grounding metrics read as for C2-C4) and the grounded block of the answer prompt
that shows them, with the triplets that could not be linked to the graph."""

from __future__ import annotations

from typing import Any

from kgbench.contract import Context

from . import steps
from .chains import Triplet


def _candidate_id(scenario: dict[str, Any], t: Triplet) -> str:
    from harness.probe.names import name_key

    for c in scenario["candidates"]:
        if (
            name_key(c["label"]) == name_key(t.candidate)
            or c["intervention_id"] == t.final.subject_id
        ):
            return c["intervention_id"]
    return ""


def _verified(ts: list[Triplet]) -> list[Triplet]:
    return [t for t in ts if t.final.status == "verified"]


def verified_context(
    compiled: Any, scenario: dict[str, Any], ts: list[Triplet], condition: str
) -> dict:
    """The verified assertions as an extracted context (contract.Context): what the scorer's
    grounding metrics compare citations and claims with, as for C2-C4."""
    graph = compiled.graph
    by_id = {a["assertion_id"]: a for a in graph["assertions"]}
    evidence = {e["evidence_id"]: e for e in graph["evidence_sources"]}
    supports: dict[str, list[str]] = {}
    for link in graph.get("supports", []):
        supports.setdefault(link["assertion_id"], []).append(link["evidence_id"])
    entities = compiled.entities

    def ent(eid: str) -> dict[str, str]:
        e = entities.get(eid, {})
        return {"id": eid, "name": e.get("name", eid), "category": e.get("category", "")}

    paths, assertions = [], {}
    for t in _verified(ts):
        paths.append(
            {"candidate_id": _candidate_id(scenario, t), "assertion_ids": t.final.assertion_ids}
        )
        for aid in t.final.assertion_ids:
            a = by_id[aid]
            assertions[aid] = {
                **a,
                "subject": ent(a["subject_id"]),
                "object": ent(a["object_id"]),
                "evidence": [evidence[e] for e in sorted(supports.get(aid, [])) if e in evidence],
            }
    ids = [c["intervention_id"] for c in scenario["candidates"]]
    target = scenario["target_outcome_id"]
    return {
        "format_version": Context.FORMAT,
        "domain": compiled.name,
        "scenario_id": scenario["scenario_id"],
        "condition": condition,
        "parameters": {"candidate_ids": ids, "target_id": target},
        "entities": {eid: ent(eid) for eid in [*ids, target]},
        "sections": [
            {
                "name": "verified_triplets",
                "title": "Verified triplets",
                "shape": "candidate_edges",
                "paths": paths,
            }
        ],
        "assertions": dict(sorted(assertions.items())),
    }


def answer_block(
    v: Any, compiled: Any, scenario: dict[str, Any], ts: list[Triplet], context: dict
) -> str:
    lines = [
        "",
        "# Grounded context: Verify-and-revise",
        v.prompts["answer"],
        "",
        "## Verified triplets",
    ]
    names = {c["intervention_id"]: c["label"] for c in scenario["candidates"]}
    for path in context["sections"][0]["paths"]:
        rows = [
            steps.assertion_line(
                context["assertions"][aid],
                compiled.entities,
                ", ".join(e["evidence_id"] for e in context["assertions"][aid]["evidence"])
                or "none",
            )
            for aid in path["assertion_ids"]
        ]
        if len(rows) > 1 and path["candidate_id"] in names:
            lines.append(f"Pathway from {names[path['candidate_id']]}:")
            lines += [f"  {i}. {row}" for i, row in enumerate(rows, 1)]
        else:
            lines += [f"- {row}" for row in rows]
    if not context["sections"][0]["paths"]:
        lines.append("(no triplet was verified)")
    unverifiable = [t for t in ts if t.final.status == "unverifiable"]
    if unverifiable:
        lines += ["", "## Unverified (names not found in the graph)"]
        lines += [f"- {t.final.triplet_text()}" for t in unverifiable]
    return "\n".join(lines) + "\n"

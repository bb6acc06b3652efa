"""`kgbench extract`: run a condition's compiled query for a scenario and shape the result into
the self-contained context JSON the prompts and the scorer read (see harness/README.md).

Ordering is deterministic: sections in declaration order, paths sorted by the candidate's
position in the scenario and then by assertion ids, evidence sorted by id.
"""

from __future__ import annotations

from typing import Any

import neo4j

from kgbench.errors import UserError

from ..compiled import CompiledDomain

CONTEXT_SCHEMA_VERSION = "1.0.0"


def require_assertions(context: dict[str, Any] | None, allow_empty: bool = False) -> None:
    """A grounded context without a single assertion is an error unless declared expected.

    The graph held nothing for the scenario's candidates, target and population: the prompt
    would be grounded in nothing, which is what an unloaded or stale graph looks like too.
    """
    if context is None or context["assertions"] or allow_empty:
        return
    raise UserError(
        f"scenario {context['scenario_id']} under {context['condition']}: the graph of "
        f"'{context['domain']}' holds no assertion for its candidates, target and population, "
        "so the grounded context would be empty; check the scenario's ids, or pass "
        "--allow-empty if an empty context is what this scenario expects"
    )


def parameters(scenario: dict[str, Any]) -> dict[str, Any]:
    patient = scenario.get("patient") or {}
    context_ids = [scenario["population_id"], *patient.get("condition_ids", [])]
    return {
        "candidate_ids": [c["intervention_id"] for c in scenario["candidates"]],
        "target_id": scenario["target_outcome_id"],
        "context_ids": sorted(set(context_ids)),
    }


def _plain(value: Any) -> Any:
    """Driver values to JSON-ready Python (lists stay lists, maps become dicts)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def extract(
    driver: neo4j.Driver,
    domain: CompiledDomain,
    scenario: dict[str, Any],
    condition_id: str,
    database: str | None = None,
) -> dict[str, Any] | None:
    """The context of one (scenario, condition); None for an ungrounded condition."""
    cond = domain.condition(condition_id)
    if not cond["query"]:
        return None
    params = parameters(scenario)
    unknown = [
        i for i in [*params["candidate_ids"], params["target_id"]] if i not in domain.entities
    ]
    if unknown:
        raise UserError(
            f"scenario {scenario.get('scenario_id')}: unknown entity id(s) {', '.join(unknown)} in domain '{domain.name}'"
        )
    records, _, _ = driver.execute_query(
        domain.read(cond["query"]),
        parameters_=params,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    row = records[0] if records else {"paths": [], "assertions": []}
    order = {cid: i for i, cid in enumerate(params["candidate_ids"])}
    sections = []
    for sec in cond["sections"]:
        paths = {
            (p["candidate_id"], tuple(p["assertion_ids"]))
            for p in row["paths"]
            if p["section"] == sec["name"]
        }
        ordered = sorted(paths, key=lambda p: (order.get(p[0], len(order)), len(p[1]), p[1]))
        sections.append(
            {
                "name": sec["name"],
                "title": sec["title"],
                "shape": sec["shape"],
                "paths": [{"candidate_id": c, "assertion_ids": list(ids)} for c, ids in ordered],
            }
        )
    assertions = {}
    for a in row["assertions"]:
        item = _plain(dict(a))
        item["evidence"] = sorted(
            (_plain(dict(e)) for e in a["evidence"]), key=lambda e: e["evidence_id"]
        )
        assertions[item["assertion_id"]] = item
    populations = [a.get("population_id") for a in assertions.values()]
    ids = [*params["candidate_ids"], params["target_id"], *filter(None, populations)]
    entities = {
        i: {k: domain.entities[i][k] for k in ("id", "name", "category")} for i in sorted(set(ids))
    }
    return {
        "schema_version": CONTEXT_SCHEMA_VERSION,
        "domain": domain.name,
        "scenario_id": scenario["scenario_id"],
        "condition": condition_id,
        "parameters": params,
        "entities": entities,
        "sections": sections,
        "assertions": dict(sorted(assertions.items())),
    }

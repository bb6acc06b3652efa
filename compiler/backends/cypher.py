"""Extraction queries: one parameterised, scenario-conditioned Cypher query per grounded
condition, compiled from the condition declarations (which roles, which path shapes).

Relationship types are the domain's predicates whose role a section asks for; they are spec
identifiers validated by the frontend. Scenario values arrive only as parameters.
"""

from __future__ import annotations

from ..ir import Condition, Domain
from .base import Artifact, EmitContext, json_bytes, render


def emit(domain: Domain, ctx: EmitContext) -> list[Artifact]:
    out: list[Artifact] = []
    index = []
    for cond in domain.conditions:
        if not cond.grounded:
            index.append({"id": cond.id, "name": cond.name, "query": None, "sections": []})
            continue
        sections = _sections(domain, cond)
        text = render(
            "neo4j/extraction.cypher.j2",
            ctx,
            domain=domain.name,
            label=domain.neo4j_label,
            condition=cond,
            sections=sections,
        )
        path = f"cypher/{cond.id}.cypher"
        out.append(Artifact(path, text))
        index.append(
            {
                "id": cond.id,
                "name": cond.name,
                "query": path,
                "parameters": ["candidate_ids", "target_id", "outcome_ids", "context_ids"],
                "sections": [
                    {
                        "name": s["name"],
                        "title": s["title"],
                        "shape": s["shape"],
                        "predicates": s["types"].split("|"),
                        "path_shapes": s["path_shapes"],
                        "validated_only": s["validated_only"],
                    }
                    for s in sections
                ],
            }
        )
    out.append(Artifact("cypher/conditions.json", json_bytes(index)))
    return out


def _shape_patterns(domain: Domain, hops: tuple[tuple[tuple[str, ...], ...], ...]) -> list[str]:
    """Each buildable role sequence as a fixed-length relationship pattern between (c) and (t).

    Fixed lengths keep expansion bounded on large graphs.
    """
    label = domain.neo4j_label
    patterns = []
    for shape in hops:
        steps = [f"-[:{'|'.join(types)}]->" for types in shape]
        middle = f"(:{label})".join(steps)
        patterns.append(f"(c){middle}(t)")
    return patterns


def _sections(domain: Domain, cond: Condition) -> list[dict]:
    """The condition's sections as the template reads them (resolved by the frontend, which
    reports a section or condition this domain cannot serve)."""
    return [
        {
            "name": s.name,
            "title": s.title,
            "shape": s.shape,
            "types": "|".join(s.predicates),
            "shapes": _shape_patterns(domain, s.hops),
            "path_shapes": [list(shape) for shape in s.path_shapes],
            "validated_only": s.validated_only,
        }
        for s in cond.sections
    ]

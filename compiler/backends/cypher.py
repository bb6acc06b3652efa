"""Extraction queries: one parameterised, scenario-conditioned Cypher query per grounded
condition, compiled from the condition declarations (which roles, which path shapes).

Relationship types are the domain's predicates whose role a section asks for; they are spec
identifiers validated by the frontend. Scenario values arrive only as parameters.
"""

from __future__ import annotations

from kgbench.errors import SpecError
from kgbench.io import json_bytes

from ..ir import Condition, Domain
from .base import Artifact, EmitContext, render


def section_types(domain: Domain, roles: tuple[str, ...]) -> list[str]:
    return [p.name for p in domain.predicates if p.role in roles]


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


def _shape_patterns(domain: Domain, shapes: tuple[tuple[str, ...], ...]) -> list[str]:
    """Each role sequence as a fixed-length relationship pattern between (c) and (t).

    Fixed lengths keep expansion bounded on large graphs; a shape whose roles this domain
    lacks is dropped.
    """
    label = domain.neo4j_label
    patterns = []
    for shape in shapes:
        hops = [section_types(domain, (role,)) for role in shape]
        if not all(hops):
            continue
        steps = [f"-[:{'|'.join(types)}]->" for types in hops]
        middle = f"(:{label})".join(steps)
        patterns.append(f"(c){middle}(t)")
    return patterns


def _sections(domain: Domain, cond: Condition) -> list[dict]:
    sections = []
    for s in cond.sections:
        types = section_types(domain, s.roles)
        if not types:
            continue  # the domain has no predicate in these roles: nothing to retrieve
        sections.append(
            {
                "name": s.name,
                "title": s.title,
                "shape": s.shape,
                "types": "|".join(types),
                "shapes": _shape_patterns(domain, s.path_shapes),
                "path_shapes": [
                    list(shape)
                    for shape in s.path_shapes
                    if all(section_types(domain, (role,)) for role in shape)
                ],
                "validated_only": s.validated_only,
            }
        )
    for sec in sections:
        if sec["shape"] == "causal_chain" and not sec["shapes"]:
            raise SpecError(
                f"condition {cond.id} section {sec['name']}: no path shape can be built from the "
                f"predicates of domain '{domain.name}'"
            )
    if not sections:
        raise SpecError(
            f"grounded condition {cond.id} exposes no predicate of domain '{domain.name}' "
            f"(roles {', '.join(r for s in cond.sections for r in s.roles)})"
        )
    return sections

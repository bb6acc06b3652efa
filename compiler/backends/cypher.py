"""Extraction queries and `conditions.json`: one parameterised, scenario-conditioned Cypher
query per grounded condition, compiled from the condition declarations, and the one compiled
description of every condition (sections, relationship types, path shapes, query file).

The query is rendered from a typed view-model (`ExtractionView`); its dialect-specific syntax
comes from the Cypher generator (`cyphergen.Neo4j5`). Relationship types are the domain's
predicates whose role a section asks for (validated spec identifiers, resolved by the
frontend); scenario values arrive only as parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgbench.contract import Conditions

from ..ir import Condition, ContextSection, Domain
from .base import Artifact, Backend, EmitContext, render
from .cyphergen import CypherGenerator, Neo4j5

PARAMETERS = ("candidate_ids", "target_id", "outcome_ids", "context_ids")


@dataclass(frozen=True)
class SectionView:
    """One section as the template says it: relationship types joined, chain patterns built."""

    name: str
    title: str
    shape: str
    types: str  # "A|B": the section's relationship types
    patterns: tuple[str, ...]  # one fixed-length pattern between (c) and (t) per path shape
    validated_only: bool


@dataclass(frozen=True)
class ExtractionView:
    domain: str
    label: str
    condition: Condition
    sections: tuple[SectionView, ...]
    dialect: CypherGenerator


def _patterns(label: str, section: ContextSection) -> tuple[str, ...]:
    """Each buildable role sequence as a fixed-length relationship pattern between (c) and
    (t); fixed lengths keep expansion bounded on large graphs."""
    out = []
    for hops in section.hops:
        steps = [f"-[:{'|'.join(types)}]->" for types in hops]
        out.append(f"(c){f'(:{label})'.join(steps)}(t)")
    return tuple(out)


def view(domain: Domain, cond: Condition, dialect: CypherGenerator) -> ExtractionView:
    label = domain.neo4j_label
    return ExtractionView(
        domain=domain.name,
        label=label,
        condition=cond,
        sections=tuple(
            SectionView(
                name=s.name,
                title=s.title,
                shape=s.shape,
                types="|".join(s.predicates),
                patterns=_patterns(label, s),
                validated_only=s.validated_only,
            )
            for s in cond.sections
        ),
        dialect=dialect,
    )


class ExtractionBackend(Backend):
    name = "extraction"
    format_version = Conditions.FORMAT
    outputs = ("cypher/*.cypher", Conditions.PATH)
    dialect: CypherGenerator = Neo4j5()

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        out: list[Artifact] = []
        conditions = []
        for cond in domain.conditions:
            query = None
            if cond.grounded:
                query = f"cypher/{cond.id}.cypher"
                v = view(domain, cond, self.dialect)
                out.append(Artifact(query, render("neo4j/extraction.cypher.j2", ctx, v=v)))
            conditions.append(
                {
                    "id": cond.id,
                    "name": cond.name,
                    "title": cond.title,
                    "description": cond.description,
                    "annotations": list(cond.annotations),
                    "query": query,
                    "parameters": list(PARAMETERS) if query else [],
                    "sections": [
                        {
                            "name": s.name,
                            "title": s.title,
                            "shape": s.shape,
                            "roles": list(s.roles),
                            "anchor": s.anchor,
                            "predicates": list(s.predicates),
                            "path_shapes": [list(shape) for shape in s.path_shapes],
                            "validated_only": s.validated_only,
                        }
                        for s in cond.sections
                    ],
                }
            )
        out.append(
            self.document(Conditions, {"domain": domain.name, "conditions": conditions}, ctx)
        )
        return out


BACKEND = ExtractionBackend()

"""`kg.json`: the validated graph as data, for the harness (scenario generator, scorer lexicon).

The harness never reads the raw spec; whatever it needs about the graph comes from here. Its
shape is `kgbench.contract.KnowledgeGraph`. Conditions and metrics have documents of their
own (conditions.json, metrics.json).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict

from kgbench.contract import KnowledgeGraph

from ..ir import Domain
from .base import COMPACT_ROWS, Artifact, Backend, EmitContext, facts_in_order

# Fields kg.json adds to each assertion row beyond the assertions table's own columns.
DERIVED_ASSERTION_FIELDS = ("provenance", "member_ids")


def _assertions(domain: Domain) -> Iterator[dict]:
    """Each assertion with what the compiler derived for it: its provenance label, and for a
    class-level claim the members it applies to."""
    for a, fact in zip(domain.assertions, facts_in_order(domain), strict=True):
        row = a._asdict()
        row["provenance"] = fact.provenance if fact else ""
        row["member_ids"] = list(fact.member_ids) if fact else []
        yield row


class GraphBackend(Backend):
    name = "graph"
    format_version = KnowledgeGraph.FORMAT
    outputs = (KnowledgeGraph.PATH,)

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        rules = domain.evidence_rules
        data = {
            "domain": domain.name,
            "domain_version": domain.version,
            "spec_version": domain.spec_version,
            "neo4j_label": domain.neo4j_label,
            "entity_classes": [asdict(c) for c in domain.entity_classes],
            "predicates": [asdict(p) for p in domain.predicates],
            "intervention_classes": [asdict(c) for c in domain.intervention_classes],
            "evidence_rules": {
                "study_scope": rules.study_scope,
                "homogeneous_classes": list(rules.homogeneous_classes),
                "composite_outcomes": [
                    {"outcome_id": o, "members": list(m)} for o, m in rules.composites
                ],
                "conflicts": [asdict(c) for c in rules.conflicts],
                "component_credits": [asdict(c) for c in rules.component_credits],
                "evidence_gaps": [asdict(g) for g in rules.evidence_gaps],
            },
            "prompt": {"domain_phrase": domain.domain_phrase, "role": domain.role_sentence},
        }
        lists: dict[str, Callable[[], Iterable[dict]]] = {
            "entities": lambda: (e._asdict() for e in domain.entities),
            "assertions": lambda: _assertions(domain),
            "evidence_sources": lambda: (e._asdict() for e in domain.evidence_sources),
            "supports": lambda: (s._asdict() for s in domain.supports),
        }
        rows = len(domain.entities) + len(domain.assertions) + len(domain.supports)
        if rows > COMPACT_ROWS:
            return [self.large_document(KnowledgeGraph, data, lists, ctx)]
        data.update({key: list(make()) for key, make in lists.items()})
        return [self.document(KnowledgeGraph, data, ctx)]


BACKEND = GraphBackend()

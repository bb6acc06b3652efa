"""`kg.json`: the validated graph as data, for the harness (scenario generator, scorer lexicon).

The harness never reads the raw spec; whatever it needs about the graph comes from here. Its
shape is `kgbench.contract.KnowledgeGraph`. Conditions and metrics have documents of their
own (conditions.json, metrics.json).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict

from kgbench.contract import KnowledgeGraph
from kgbench.io import RowTexts
from kgbench.jsoncolumns import record_columns, record_layout, rows_texts

from ..ir import Assertion, Domain, Entity, EvidenceSource, Support
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


_ASSERTION_LAYOUT = record_layout((*Assertion._fields, *DERIVED_ASSERTION_FIELDS))


def _assertion_texts(domain: Domain) -> RowTexts:
    """`_assertions` written column by column (`kgbench.jsoncolumns`): the same text."""
    facts = facts_in_order(domain)

    def columns(start: int, stop: int) -> list:
        batch = facts[start:stop]
        return [
            *record_columns(domain.assertions, start, stop),
            [f.provenance if f else "" for f in batch],
            [f.member_ids if f else () for f in batch],  # a tuple is written as a list
        ]

    return rows_texts(_ASSERTION_LAYOUT, len(domain.assertions), columns)


def _record_texts(records, fields: tuple[str, ...]) -> RowTexts:
    """Each record as `_asdict` gives it, written column by column."""
    return rows_texts(
        record_layout(fields), len(records), lambda a, b: record_columns(records, a, b)
    )


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
            texts: dict[str, Callable[[], RowTexts]] = {
                "entities": lambda: _record_texts(domain.entities, Entity._fields),
                "assertions": lambda: _assertion_texts(domain),
                "evidence_sources": lambda: _record_texts(
                    domain.evidence_sources, EvidenceSource._fields
                ),
                "supports": lambda: _record_texts(domain.supports, Support._fields),
            }
            return [self.large_document(KnowledgeGraph, data, lists, ctx, texts=texts)]
        data.update({key: list(make()) for key, make in lists.items()})
        return [self.document(KnowledgeGraph, data, ctx)]


BACKEND = GraphBackend()

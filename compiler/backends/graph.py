"""`kg.json`: the validated graph as data, for the harness (scenario generator, scorer lexicon).

The harness never reads the raw spec; whatever it needs about the graph comes from here.
"""

from __future__ import annotations

from dataclasses import asdict

from ..ir import Domain
from .base import Artifact, EmitContext, json_bytes


def emit(domain: Domain, ctx: EmitContext) -> list[Artifact]:
    data = {
        "domain": domain.name,
        "domain_version": domain.version,
        "spec_version": domain.spec_version,
        "neo4j_label": domain.neo4j_label,
        "entity_classes": [asdict(c) for c in domain.entity_classes],
        "predicates": [asdict(p) for p in domain.predicates],
        "entities": [e._asdict() for e in domain.entities],
        "assertions": [a._asdict() for a in domain.assertions],
        "evidence_sources": [e._asdict() for e in domain.evidence_sources],
        "supports": [s._asdict() for s in domain.supports],
        "intervention_classes": [asdict(c) for c in domain.intervention_classes],
        "conditions": [asdict(c) for c in domain.conditions],
        "metrics": [asdict(m) for m in domain.metrics],
        "prompt": {"domain_phrase": domain.domain_phrase, "role": domain.role_sentence},
    }
    return [Artifact("kg.json", json_bytes(data))]

"""kg.json: the validated knowledge graph as data, the one form of the graph the harness
reads (it never reads the raw spec). Its records carry every field of the compiler's IR
records (tests/contract holds them to it)."""

from __future__ import annotations

from typing import ClassVar

from .base import Document, Model


class EntityClass(Model):
    name: str
    biolink: str
    id_prefix: str
    is_intervention: bool
    description: str
    is_group: bool = False
    is_population: bool = False


class Predicate(Model):
    name: str
    biolink: str
    subject_classes: list[str]
    object_classes: list[str]
    relation_class: str
    role: str
    direction: str | None
    biolink_qualifier: str | None
    description: str
    members_inherit: str = "homogeneous"
    biolink_inverse: bool = False  # the Biolink edge runs object -> subject
    biolink_negated: bool = False  # the Biolink edge is negated (a null result)


class Entity(Model):
    id: str
    category: str
    name: str
    synonyms: list[str]
    description: str | None
    xrefs: list[str]


class Assertion(Model):
    """One reified assertion, with what the compiler derived for it (`provenance`, and for a
    class-level claim the members it applies to)."""

    assertion_id: str
    subject_id: str
    predicate: str
    object_id: str
    relation_class: str
    direction: str
    causal_status: str
    evidence_level: str
    confidence: float
    validated: bool
    context: str | None
    population_id: str | None
    temporality: str
    source_databases: list[str]
    no_evidence_reason: str | None
    knowledge_level: str | None = None  # Biolink's, resolved by the compiler (2.1)
    agent_type: str | None = None  # Biolink's, resolved by the compiler (2.1)
    provenance: str
    member_ids: list[str]


class EvidenceSource(Model):
    evidence_id: str
    source_type: str
    title: str
    citation: str
    year: int
    evidence_tier: str
    study_level: bool
    studied_interventions: list[str] = []  # noqa: RUF012 (a pydantic field)
    studied_populations: list[str] = []  # noqa: RUF012 (a pydantic field)


class Support(Model):
    assertion_id: str
    evidence_id: str
    recommendation_class: str | None = None
    level_of_evidence: str | None = None


class InterventionClass(Model):
    class_id: str
    class_name: str
    member_ids: list[str]


class CompositeOutcome(Model):
    outcome_id: str
    members: list[str]


class Conflict(Model):
    assertions: list[str]
    resolution: str
    note: str


class ComponentCredit(Model):
    assertion_id: str
    components: list[str]
    evidence_id: str
    note: str


class EvidenceGap(Model):
    intervention_id: str
    outcome_id: str
    population_id: str | None
    evidence_id: str
    note: str


class EvidenceRules(Model):
    study_scope: str
    homogeneous_classes: list[str]
    composite_outcomes: list[CompositeOutcome]
    conflicts: list[Conflict]
    component_credits: list[ComponentCredit] = []  # noqa: RUF012 (a pydantic field)
    evidence_gaps: list[EvidenceGap] = []  # noqa: RUF012 (a pydantic field)


class PromptText(Model):
    domain_phrase: str
    role: str


class KnowledgeGraph(Document):
    """kg.json: the validated graph as data (the harness never reads the raw spec)."""

    FORMAT: ClassVar[str] = (
        "2.2.0"  # 2.2: component_credits, evidence_gaps; 2.1: knowledge_level, ...
    )
    PATH: ClassVar[str] = "kg.json"

    format_version: str
    domain: str
    domain_version: str
    spec_version: str
    neo4j_label: str
    entity_classes: list[EntityClass]
    predicates: list[Predicate]
    entities: list[Entity]
    assertions: list[Assertion]
    evidence_sources: list[EvidenceSource]
    supports: list[Support]
    intervention_classes: list[InterventionClass]
    evidence_rules: EvidenceRules
    prompt: PromptText

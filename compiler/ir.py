"""The frozen intermediate representation every backend reads.

Built once by the frontend after all validation has passed, so backends can trust it: ids are
unique, references resolve, predicates are used between allowed classes. Everything is a
frozen dataclass over tuples, so no backend can change what another one sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class EntityClass:
    name: str
    biolink: str
    id_prefix: str
    is_intervention: bool
    description: str


@dataclass(frozen=True)
class Predicate:
    name: str
    biolink: str
    subject_classes: tuple[str, ...]
    object_classes: tuple[str, ...]
    relation_class: str
    role: str
    direction: str | None
    biolink_qualifier: str | None
    description: str


@dataclass(frozen=True)
class Entity:
    id: str
    category: str
    name: str
    synonyms: tuple[str, ...]
    description: str | None
    xrefs: tuple[str, ...]


@dataclass(frozen=True)
class Assertion:
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
    source_databases: tuple[str, ...]
    no_evidence_reason: str | None


@dataclass(frozen=True)
class EvidenceSource:
    evidence_id: str
    source_type: str
    title: str
    citation: str
    year: int
    evidence_tier: str
    study_level: bool


@dataclass(frozen=True)
class Support:
    """(:EvidenceSource {evidence_id})-[:SUPPORTS]->(:Assertion {assertion_id})."""

    assertion_id: str
    evidence_id: str


@dataclass(frozen=True)
class InterventionClass:
    class_id: str
    class_name: str
    member_ids: tuple[str, ...]


@dataclass(frozen=True)
class ContextSection:
    name: str
    title: str
    shape: str
    roles: tuple[str, ...]
    anchor: str
    max_hops: int
    validated_only: bool


@dataclass(frozen=True)
class Condition:
    id: str
    name: str
    title: str
    description: str
    sections: tuple[ContextSection, ...]
    annotations: tuple[str, ...]

    @property
    def grounded(self) -> bool:
        return bool(self.sections)


@dataclass(frozen=True)
class Metric:
    name: str
    title: str
    kind: str
    response_field: str
    gold_field: str
    defined_when: str
    higher_is_better: bool
    binary: bool
    description: str


@dataclass(frozen=True)
class ExpectedCounts:
    entities: tuple[tuple[str, int], ...]
    assertions: tuple[tuple[str, int], ...]
    evidence_sources: int | None
    study_level_evidence_sources: int | None


@dataclass(frozen=True)
class InputFile:
    path: str  # repo-relative, POSIX
    sha256: str


@dataclass(frozen=True)
class Domain:
    name: str
    title: str
    version: str
    description: str
    spec_version: str
    domain_phrase: str
    role_sentence: str
    entity_classes: tuple[EntityClass, ...]
    predicates: tuple[Predicate, ...]
    entities: tuple[Entity, ...]
    assertions: tuple[Assertion, ...]
    evidence_sources: tuple[EvidenceSource, ...]
    supports: tuple[Support, ...]
    intervention_classes: tuple[InterventionClass, ...]
    conditions: tuple[Condition, ...]
    metrics: tuple[Metric, ...]
    expected: ExpectedCounts
    schema_file: str = ""
    inputs: tuple[InputFile, ...] = field(default=())
    scenario_rules: tuple = field(default=())

    @cached_property
    def neo4j_label(self) -> str:
        """The label that namespaces this domain's nodes in a shared database."""
        return f"KG_{self.name}"

    @cached_property
    def predicate_by_name(self) -> dict[str, Predicate]:
        return {p.name: p for p in self.predicates}

    @cached_property
    def class_by_name(self) -> dict[str, EntityClass]:
        return {c.name: c for c in self.entity_classes}

"""The frozen intermediate representation every backend reads.

Built once by the frontend after all validation has passed, so backends can trust it: ids are
unique, references resolve, predicates are used between allowed classes. Everything is
immutable (frozen dataclasses over tuples; the per-row records are NamedTuples, which are as
immutable and much cheaper to build for 100,000-row domains), so no backend can change what
another one sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from .biolink_readings import Reading


@dataclass(frozen=True)
class EntityClass:
    name: str
    biolink: str
    id_prefix: str
    is_intervention: bool
    description: str
    is_group: bool = False  # an intervention class (its entities are classes, not options)
    is_population: bool = False  # annotation `population: true`: what population_id names


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
    members_inherit: str = "homogeneous"
    # Biolink reading of the predicate: the Biolink edge runs object -> subject (a
    # non-canonical Biolink predicate replaced by its canonical inverse), or it is negated
    # (a null result: `affects` with negated true).
    biolink_inverse: bool = False
    biolink_negated: bool = False


class Entity(NamedTuple):
    id: str
    category: str
    name: str
    synonyms: tuple[str, ...]
    description: str | None
    xrefs: tuple[str, ...]


class Assertion(NamedTuple):
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
    # Biolink's knowledge level and agent type; empty in a table row means "the default of the
    # assertion's strongest supporting source type", which the frontend fills in.
    knowledge_level: str | None = None
    agent_type: str | None = None


class EvidenceSource(NamedTuple):
    evidence_id: str
    source_type: str
    title: str
    citation: str
    year: int
    evidence_tier: str
    study_level: bool
    studied_interventions: tuple[str, ...] = ()
    studied_populations: tuple[str, ...] = ()


class Support(NamedTuple):
    """(:EvidenceSource {evidence_id})-[:SUPPORTS]->(:Assertion {assertion_id}); a guideline's
    link may carry the class of recommendation and level of evidence it states."""

    assertion_id: str
    evidence_id: str
    recommendation_class: str | None = None
    level_of_evidence: str | None = None


@dataclass(frozen=True)
class InterventionClass:
    class_id: str
    class_name: str
    member_ids: tuple[str, ...]


@dataclass(frozen=True)
class Conflict:
    """A declared resolution of contradictory outcome claims on one triple: `contested` keeps
    both and makes the triple uncertain; an assertion id names the claim that stands."""

    assertions: tuple[str, ...]
    resolution: str
    note: str


@dataclass(frozen=True)
class ComponentCredit:
    """Components of a composite outcome that one composite claim's evidence supports."""

    assertion_id: str
    components: tuple[str, ...]
    evidence_id: str
    note: str


@dataclass(frozen=True)
class EvidenceGap:
    """A declared absence of outcome evidence, with the source that states it."""

    intervention_id: str
    outcome_id: str
    population_id: str | None
    evidence_id: str
    note: str


@dataclass(frozen=True)
class EvidenceRules:
    """The domain's evidence declarations (domain.yaml `evidence_rules`)."""

    study_scope: str = "error"  # error | warning: a study supporting a claim it did not study
    homogeneous_classes: tuple[str, ...] = ()
    composites: tuple[tuple[str, tuple[str, ...]], ...] = ()  # composite outcome -> components
    conflicts: tuple[Conflict, ...] = ()
    component_credits: tuple[ComponentCredit, ...] = ()
    evidence_gaps: tuple[EvidenceGap, ...] = ()


@dataclass(frozen=True)
class ProvenanceRule:
    """One declared provenance label and the assertion fields it requires (first match wins)."""

    label: str
    relation_classes: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    causal_status: tuple[str, ...] = ()
    source_types: tuple[str, ...] = ()
    validated: bool | None = None
    has_evidence: bool | None = None


class AssertionFacts(NamedTuple):
    """What the compiler derives per assertion: its provenance label, and for a class-level
    claim the members it applies to (empty otherwise)."""

    assertion_id: str
    provenance: str
    member_ids: tuple[str, ...]


@dataclass(frozen=True)
class ContextSection:
    """One section of a grounded condition, resolved against the domain by the frontend.

    `predicates` are the domain's predicates in the section's roles (the relationship types
    its query matches). A causal_chain section shows every chain over them of at most
    `max_length` steps, ranked by `chain_order` and cut at `max_chains` per candidate (and
    per validation status, when unvalidated chains are shown beside validated ones). A section
    whose roles the domain lacks is dropped by the frontend, so no backend meets one.
    """

    name: str
    title: str
    shape: str
    roles: tuple[str, ...]
    anchor: str
    validated_only: bool
    predicates: tuple[str, ...] = ()
    max_length: int = 0  # causal_chain sections only
    max_chains: int = 0
    chain_order: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verify:
    """A verify-and-revise condition's bounds and prompts (spec VerifyDeclaration).

    `predicates` are the domain's predicates in `roles` (the triplet vocabulary) and
    `path_predicates` those in `path_roles` (what a verifying path may follow); both are
    resolved by the frontend, like a section's predicates.
    """

    max_triplets: int
    max_path_length: int
    max_revisions: int
    fuzzy_threshold: float
    max_name_length: int
    roles: tuple[str, ...]
    path_roles: tuple[str, ...]
    prompts: tuple[tuple[str, str], ...]  # (step, instruction), in step order
    predicates: tuple[str, ...] = ()
    path_predicates: tuple[str, ...] = ()
    reviser: str = "uninformed"  # uninformed (KGARevion) | informed (a declared variant)


@dataclass(frozen=True)
class VolumeMatch:
    """A volume-matched control (spec VolumeMatchDeclaration): the `base` condition's block
    padded with irrelevant graph content to the `reference` condition's length, within
    `tolerance` (a share of the reference length)."""

    base: str
    reference: str
    tolerance: float
    padding_title: str


@dataclass(frozen=True)
class Condition:
    id: str
    name: str
    title: str
    description: str
    sections: tuple[ContextSection, ...]
    annotations: tuple[str, ...]
    verify: Verify | None = None
    optional: bool = False
    volume_match: VolumeMatch | None = None

    @property
    def grounded(self) -> bool:
        return bool(self.sections)


@dataclass(frozen=True)
class ClaimSupporter:
    role: str
    direction: str | None = None


@dataclass(frozen=True)
class ClaimKind:
    name: str
    words: tuple[str, ...]
    supported_by: tuple[ClaimSupporter, ...]


@dataclass(frozen=True)
class ClaimSupport:
    kinds: tuple[ClaimKind, ...]


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
    reading: str | None = None  # the chain kinds' reading (validated_chains, gold_path)
    claim_support: ClaimSupport | None = None  # the unsupported_claims kind's table


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
class ScenarioRules:
    """The validated scenario-generation rules of a domain (its scenarios.yaml).

    The harness's scenario generator is their only interpreter, so the IR carries the
    validated declaration as canonical JSON (immutable) rather than a parallel class tree; the
    compiler's job is to prove every id, class, enum value and template field in it exists.
    """

    source: str  # repo-relative path of the declaration file
    scenario_schema_version: str
    categories: tuple[str, ...]
    document: str  # canonical JSON of the declaration


@dataclass(frozen=True)
class ProbeSettings:
    """The probe's numbers after domain overrides (see ProbeSettings in declarations.yaml)."""

    max_depth: int
    concepts_per_answer: int
    path_bound: int
    curve_max_k: int
    path_mode: str
    edge_checks_per_root: int
    fuzzy_threshold: float
    embedding_threshold: float
    max_name_length: int


@dataclass(frozen=True)
class ProbeSpec:
    """The validated graph-generation probe of a domain (spec/declarations/probe.yaml + its probe.yaml)."""

    source: str  # repo-relative path of the domain's probe declaration
    settings: ProbeSettings
    roots: tuple[str, ...]  # entity ids, in declared order
    prompts: tuple[tuple[str, str], ...]  # (step, Jinja2 template text), declaration order
    reference_predicates: tuple[str, ...]  # predicates whose assertions form the reference
    noise_rate: float
    noise_seed: int
    reference_excluded_directions: tuple[str, ...] = ()  # directions left out (decrease)


@dataclass(frozen=True)
class Presentation:
    """One presentation of the candidate options (spec PresentationDeclaration)."""

    id: str
    description: str
    order: str  # original | reverse | cyclic_shift
    shift: int = 0
    labels: str = "none"  # none | letters | letters_reversed


# --- identifier schemes (resolved and applied by compiler/idschemes.py) ---


@dataclass(frozen=True)
class IdScheme:
    """One kind's format: `pattern` every id matches in full; `format` (scenarios) how the
    generator writes the n-th id; `class_prefix` (entities) whether an entity id starts with
    its class's id_prefix and '_'."""

    pattern: str
    format: str = ""
    class_prefix: bool = False
    declared: bool = False  # the domain declared it (else the paper's default)


@dataclass(frozen=True)
class IdSchemes:
    entities: IdScheme
    assertions: IdScheme
    evidence: IdScheme
    scenarios: IdScheme

    def of(self, kind: str) -> IdScheme:
        return getattr(self, kind)


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
    scenario_rules: ScenarioRules | None = None
    evidence_rules: EvidenceRules = field(default_factory=EvidenceRules)
    provenance_rules: tuple[ProvenanceRule, ...] = ()
    facts: tuple[AssertionFacts, ...] = ()
    warnings: tuple[str, ...] = ()  # downgraded integrity and evidence findings (never compiled)
    probe: ProbeSpec | None = None
    unparseable_policy: str = "intent_to_treat"  # spec/declarations/metrics.yaml, into scorer.py
    presentations: tuple[Presentation, ...] = ()  # spec/declarations/conditions.yaml
    evidence_levels: tuple[str, ...] = ()  # the EvidenceLevel enum, strongest first
    id_schemes: IdSchemes | None = None  # the domain's id formats (compiler/idschemes.py)
    # Interoperability (compiler/prefixes.py, compiler/biolink.py): the domain's CURIE prefix
    # and its expansion, the declared vocabulary prefixes, the Biolink Model the schema was
    # checked against, the LinkML classes of the JSON form, and the Biolink facts the exports
    # write (each evidence source type's category, each direction's qualifier value).
    data_license: str = ""  # SPDX id from domain.yaml (DataLicense); "" when not declared
    curie_prefix: str = ""
    curie_expansion: str = ""
    xref_prefixes: tuple[tuple[str, str], ...] = ()
    # (entity id, xref, match, match source) of every xref that is not an exact match (the
    # xrefs table's `match` column; every other xref is exact), in table order
    inexact_xrefs: tuple[tuple[str, str, str, str], ...] = ()
    biolink_version: str = ""
    biolink_package: str = ""
    assertion_class: str = ""
    graph_class: str = ""
    source_type_categories: tuple[tuple[str, str], ...] = ()
    source_type_meanings: tuple[tuple[str, str], ...] = ()  # MeSH publication types
    direction_biolink: tuple[tuple[str, str], ...] = ()
    entity_class_uri: str = "biolink:NamedThing"
    # (table, column, pattern) of every column whose table form differs from its LinkML
    # pattern (identifiers: DRG_0001 in a table, kgbench.<domain>:DRG_0001 in the JSON form)
    table_patterns: tuple[tuple[str, str, str], ...] = ()
    evidence_class_uri: str = "biolink:Publication"
    # The Biolink reading of each claim (compiler/biolink_readings.py, compiler/biolink_entities.py):
    # each predicate's readings, the event classes, per-entity category and event overrides,
    # and the infores CURIE every exported edge names as its primary knowledge source.
    biolink_readings: tuple[tuple[str, tuple[Reading, ...]], ...] = ()
    event_classes: tuple[str, ...] = ()
    entity_biolink: tuple[tuple[str, str], ...] = ()
    entity_events: tuple[tuple[str, bool], ...] = ()
    knowledge_source: str = ""

    @cached_property
    def xref_matches(self) -> dict[tuple[str, str], str]:
        """(entity id, xref) -> its SSSOM match ('broad', 'narrow', 'close') when not exact."""
        return {(e, x): m for e, x, m, _ in self.inexact_xrefs}

    def curie(self, local_id: str) -> str:
        """A local id (DRG_0001) as a CURIE under the domain's prefix."""
        return f"{self.curie_prefix}:{local_id}"

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

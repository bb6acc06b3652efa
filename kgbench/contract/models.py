"""Typed models of every artifact the harness reads: the contract between compile and run.

`generated/<domain>/` is written by the compiler and read by the harness, and neither imports
the other; these models are the one place both meet (dbt's `artifacts` habit). Each document
carries its format version (`FORMAT`, written as `format_version`; the compiled manifest's is
`manifest_version`, a response record's `record_version`); a JSON Schema of each is generated from these
models and committed under `kgbench/contract/schemas/` (a test fails when they drift).

Rules for changing a model: a new optional field is a minor bump of its `FORMAT`; anything a
reader of the previous version could not read (a removed or renamed field, a new required
one, a changed meaning) is a major bump. Readers accept their own major version and any minor
version up to their own (`compatible`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypedDict, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .judgement import RecordedJudgement

SCORING_API_VERSION = "1"
"""The major version of kgbench's public scoring API (kgbench.scoring): the compiler writes it
into generated/<d>/scorer.py and kgbench.scoring refuses a stub of another (one constant)."""


class Model(BaseModel):
    """Strict and immutable: an unknown key is an error, not a silently ignored typo."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Document(Model):
    """A top-level artifact: its path under generated/<domain>/ and its format version.

    Every document the harness writes names its version `format_version` (issue 32). A
    document that once used another name declares it in `LEGACY_VERSION_FIELD`, with the last
    format written under it in `LEGACY_FORMAT`: such an older file still reads (the one place
    that knows the old name is here), checked against the old format, never the new one.
    """

    FORMAT: ClassVar[str]
    PATH: ClassVar[str]
    VERSION_FIELD: ClassVar[str] = "format_version"
    LEGACY_VERSION_FIELD: ClassVar[str | None] = None
    LEGACY_FORMAT: ClassVar[str | None] = None

    @classmethod
    def version_in(cls, data: Any) -> tuple[str, Any, str]:
        """(the field found, its value, the format a reader of it reads): the current field
        against `FORMAT`, else the legacy one against `LEGACY_FORMAT`."""
        if isinstance(data, dict) and cls.VERSION_FIELD not in data:
            legacy = cls.LEGACY_VERSION_FIELD
            if legacy is not None and legacy in data and cls.LEGACY_FORMAT is not None:
                return legacy, data[legacy], cls.LEGACY_FORMAT
        found = data.get(cls.VERSION_FIELD) if isinstance(data, dict) else None
        return cls.VERSION_FIELD, found, cls.FORMAT

    @model_validator(mode="before")
    @classmethod
    def _legacy_version_name(cls, data: Any) -> Any:
        """An older document's version under its legacy name is read as `VERSION_FIELD`."""
        legacy = cls.LEGACY_VERSION_FIELD
        if isinstance(data, dict) and legacy and legacy in data and cls.VERSION_FIELD not in data:
            data = {
                cls.VERSION_FIELD: data[legacy],
                **{k: v for k, v in data.items() if k != legacy},
            }
        return data


# --- manifest.json ------------------------------------------------------------------------


class FileHash(Model):
    path: str
    sha256: str


class OutputFile(FileHash):
    bytes: int


class Manifest(Document):
    """Versions and hashes of a compile; `formats` names the format version of each artifact
    the harness reads, so opening a compiled domain can refuse an incompatible one at once."""

    FORMAT: ClassVar[str] = "2.2.0"  # 2.1: biolink_model_version; 2.2: data_license
    PATH: ClassVar[str] = "manifest.json"
    VERSION_FIELD: ClassVar[str] = "manifest_version"

    manifest_version: str
    domain: str
    domain_version: str
    spec_version: str
    data_license: str | None = Field(
        default=None, description="SPDX id of the data licence domain.yaml declares"
    )
    biolink_model_version: str | None = Field(
        default=None, description="the Biolink Model the domain's terms were checked against"
    )
    compiler: dict[str, str]
    formats: dict[str, str] = Field(description="artifact path -> its format version")
    backends: dict[str, str] = Field(description="backend name -> its format version")
    inputs: list[FileHash]
    outputs: list[OutputFile]


# --- kg.json ------------------------------------------------------------------------------


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
    studied_interventions: list[str] = []
    studied_populations: list[str] = []


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
    component_credits: list[ComponentCredit] = []
    evidence_gaps: list[EvidenceGap] = []


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


# --- neo4j/plan.json ----------------------------------------------------------------------


class LoadStatement(Model):
    """One parameterised MERGE statement; its rows (the `$rows` parameter) are in `rows`."""

    name: str
    rows: str = Field(description="path of the rows file, relative to neo4j/")
    cypher: str
    then: list[str] = Field(
        default_factory=list,
        description="(1.1) statements run after `cypher` on the same batch, in the same "
        "transaction, in order (an assertion's role and direct edges, after its node)",
    )
    reconcile: str | None = Field(
        default=None,
        description="(1.1) a read run on each batch before `cypher` when the domain's label "
        "already holds nodes: returns the `id` of each node among the batch's ids whose kind "
        "or class labels differ from the statement's; the load deletes those nodes first, "
        "since `cypher` MERGEs with those labels in its pattern",
    )


class Check(Model):
    """One validation query: returns one row whose `value` must equal `expect`."""

    name: str
    description: str
    expect: int
    cypher: str


class LoadPlan(Document):
    """neo4j/plan.json: what `kgbench load` runs, in order (the .cypher files render it)."""

    FORMAT: ClassVar[str] = "1.1.0"  # 1.1: statements' then and reconcile
    PATH: ClassVar[str] = "neo4j/plan.json"

    format_version: str
    domain: str
    label: str
    dialect: str
    constraints: list[str]
    statements: list[LoadStatement]
    checks: list[Check]


# --- conditions.json ----------------------------------------------------------------------

SectionShape = Literal["candidate_edges", "causal_chain", "target_edges", "context_modifiers"]


ChainOrderKey = Literal["strongest_evidence", "fewest_hops", "most_hops"]


class Section(Model):
    """A section of a grounded context, resolved against the domain: `predicates` are the
    relationship types its query matches. A causal_chain section shows every chain over them
    of at most `max_length` steps, the first `max_chains` per candidate in `chain_order`
    (assertion ids break the remaining ties), and with `validated_only` false as many
    unvalidated chains again beside them."""

    name: str
    title: str
    shape: SectionShape
    roles: list[str]
    anchor: str
    predicates: list[str]
    validated_only: bool
    max_length: int | None = Field(default=None, ge=1)
    max_chains: int | None = Field(default=None, ge=1)
    chain_order: list[ChainOrderKey] | None = None


class VerifyQueries(Model):
    exact: str = Field(description="query file: the assertions between two linked entities")
    path: str = Field(description="query file: signed paths of at most max_path_length")
    review: str | None = Field(
        default=None,
        description="query file (1.3): both checks in one round trip, the path search only "
        "when no assertion states the claim; absent in 1.2, where review sends the two",
    )


class Verify(Model):
    """A verify-and-revise condition (KGARevion): bounds, vocabulary, prompts, queries."""

    max_triplets: int
    max_path_length: int
    max_revisions: int
    fuzzy_threshold: float
    max_name_length: int
    roles: list[str]
    path_roles: list[str]
    predicates: list[str] = Field(description="the triplet vocabulary (predicates in roles)")
    path_predicates: list[str]
    signs: dict[str, int] = Field(description="predicate -> +1 increase, -1 decrease, 0 none")
    prompts: dict[str, str] = Field(
        description="generate, revise, answer instructions (revise_informed where declared)"
    )
    queries: VerifyQueries
    parameters: list[str]
    reviser: str = Field(
        default="uninformed",
        description="uninformed (KGARevion: no correction shown) or informed (a variant)",
    )


class VolumeMatch(Model):
    """A volume-matched control: the `base` condition's block padded with graph content
    irrelevant to the item (`padding_query` fetches it) until its length is within
    `tolerance` (a share) of the `reference` condition's block (issue 27 item 6)."""

    base: str
    reference: str
    tolerance: float = Field(gt=0, lt=1)
    padding_title: str
    padding_query: str = Field(description="query file: the chosen padding assertions by id")


class Condition(Model):
    id: str
    name: str
    title: str
    description: str
    annotations: list[str]
    query: str | None = Field(description="extraction query file; null when ungrounded")
    parameters: list[str]
    sections: list[Section]
    verify: Verify | None = Field(
        default=None, description="verify-and-revise settings; null for a retrieval condition"
    )
    optional: bool = Field(
        default=False, description="off by default (2.3): run only when asked for by id"
    )
    volume_match: VolumeMatch | None = Field(
        default=None, description="a volume-matched control (2.3); null otherwise"
    )

    @property
    def grounded(self) -> bool:
        return bool(self.sections)

    def section(self, shape: str) -> Section | None:
        return next((s for s in self.sections if s.shape == shape), None)


class Presentation(Model):
    """One presentation of the candidate options (order sensitivity): a permutation and a
    labelling, applied to every scenario on request."""

    id: str
    description: str
    order: Literal["original", "reverse", "cyclic_shift"]
    shift: int = Field(description="cyclic_shift: places each option moves down; else 0")
    labels: Literal["none", "letters", "letters_reversed"]


class Conditions(Document):
    """conditions.json: the grounding conditions, in declaration order (the one source).
    `evidence_levels` is the evidence-level scale, strongest first (how chains are ranked).

    2.0.0: chain sections declare bounds and an order instead of path shapes; 2.1.0 adds the
    optional verify block (with its one-round-trip review query) and option presentations."""

    FORMAT: ClassVar[str] = "2.3.0"  # 2.2: the verify block's reviser; 2.3: optional, volume_match
    PATH: ClassVar[str] = "conditions.json"

    format_version: str
    domain: str
    evidence_levels: list[str]
    conditions: list[Condition]
    presentations: list[Presentation] = Field(
        default_factory=list, description="extra option presentations (order sensitivity)"
    )


# --- metrics.json -------------------------------------------------------------------------

UnparseablePolicy = Literal["intent_to_treat", "per_protocol"]


class ClaimSupporter(Model):
    """A predicate role (and, for a signed claim, the direction) that supports a claim kind."""

    role: str
    direction: str | None = None


class ClaimKind(Model):
    """One kind of claim in words: the word beginnings that state it, what supports it."""

    name: str
    words: list[str]
    supported_by: list[ClaimSupporter]


class ClaimSupport(Model):
    """The unsupported-claim metric's compatibility table (spec/declarations/metrics.yaml)."""

    kinds: list[ClaimKind]


class Metric(Model):
    """One declared metric: which response field meets which gold field, under which kind."""

    name: str
    title: str
    kind: str
    response_field: str
    gold_field: str
    defined_when: str
    higher_is_better: bool
    binary: bool = False
    description: str = ""
    reading: str | None = Field(
        default=None, description="the chain kinds' reading: validated_chains or gold_path"
    )
    claim_support: ClaimSupport | None = Field(
        default=None, description="the unsupported_claims kind's compatibility table"
    )


class MetricPanel(Document):
    """metrics.json: the declared panel as data (spec/declarations/metrics.yaml, validated)."""

    FORMAT: ClassVar[str] = "1.1.0"  # 1.1: a metric's reading and claim_support
    PATH: ClassVar[str] = "metrics.json"

    format_version: str
    domain: str
    unparseable_policy: UnparseablePolicy
    metrics: list[Metric] = Field(min_length=1)


# --- scenario_rules.json ------------------------------------------------------------------


class ScenarioRules(Document):
    """scenario_rules.json: the domain's validated scenarios.yaml. `rules` has the shape of
    ScenarioRules in spec/declarations.yaml (its one owner), checked by the compiler."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "scenario_rules.json"

    format_version: str
    domain: str
    source: str
    scenario_schema_version: str
    rules: dict[str, Any]


# --- probe/probe.json ---------------------------------------------------------------------


class ProbeSettings(Model):
    max_depth: int
    concepts_per_answer: int
    path_bound: int
    curve_max_k: int
    path_mode: str
    edge_checks_per_root: int
    fuzzy_threshold: float
    embedding_threshold: float
    max_name_length: int


class ProbeRoot(Model):
    id: str
    name: str
    category: str


class ProbeReference(Model):
    graph: str
    predicates: list[str]
    excluded_directions: list[str] = Field(
        default_factory=list, description="assertion directions left out (decrease)"
    )


class ProbeNoise(Model):
    rate: float
    seed: int


class ProbeStep(Model):
    template: str
    schema_: str | None = Field(default=None, alias="schema")
    schema_name: str | None = None


class Probe(Document):
    """probe/probe.json: the graph-generation probe as the harness runs it."""

    FORMAT: ClassVar[str] = "1.1.0"  # 1.1: reference.excluded_directions
    PATH: ClassVar[str] = "probe/probe.json"

    format_version: str
    domain: str
    domain_phrase: str
    source: str
    settings: ProbeSettings
    roots: list[ProbeRoot]
    reference: ProbeReference
    noise: ProbeNoise
    steps: dict[str, ProbeStep]


# --- documents the harness writes for itself: contexts and scored panels ------------------


class ContextEntity(Model):
    id: str
    name: str
    category: str


class ContextPath(Model):
    candidate_id: str | None = Field(description="null on a padding path (no candidate)")
    assertion_ids: list[str]


# A volume-matched control's padding section (1.1) is a context shape of its own: no query
# section retrieves it, so it is not a SectionShape of conditions.json.
ContextSectionShape = Literal[
    "candidate_edges", "causal_chain", "target_edges", "context_modifiers", "padding"
]


class ContextSection(Model):
    name: str
    title: str
    shape: ContextSectionShape
    paths: list[ContextPath]


class ContextVolume(Model):
    """How a volume-matched control's block came to its length: the reference block's length,
    the padded block's, the allowed gap, whether it is within it, and what was excluded."""

    base: str
    reference: str
    reference_characters: int
    base_characters: int
    characters: int
    tolerance_characters: int
    matched: bool
    seed: str
    excluded_entity_ids: list[str]


class Context(Document):
    """contexts/<scenario>/<condition>.json: one extracted subgraph (`kgbench extract`).
    Assertions are Neo4j's property maps (subject, object and evidence attached)."""

    # 1.1: padding sections and volume_match; 2.0: `format_version` (was `schema_version`)
    FORMAT: ClassVar[str] = "2.0.0"
    PATH: ClassVar[str] = "contexts/<scenario>/<condition>.json"
    LEGACY_VERSION_FIELD: ClassVar[str | None] = "schema_version"
    LEGACY_FORMAT: ClassVar[str | None] = "1.1.0"

    format_version: str
    domain: str
    scenario_id: str
    condition: str
    parameters: dict[str, Any]
    entities: dict[str, ContextEntity]
    sections: list[ContextSection]
    assertions: dict[str, dict[str, Any]]
    volume_match: ContextVolume | None = Field(
        default=None, description="a volume-matched control's padding record (1.1)"
    )


class Cell(Model):
    mean: float | None
    n: int
    se: float | None
    interval: str | None = Field(
        default=None, description='"wilson" for a binary metric with one 0/1 value per scenario'
    )
    ci_low: float | None = None
    ci_high: float | None = None


PanelTable = dict[str, dict[str, Cell]]  # condition -> metric -> cell


class PanelMetric(Model):
    name: str
    title: str
    higher_is_better: bool
    binary: bool


class ScoredPanel(Document):
    """scores/<model>/panel.json: one model's scored panel (`kgbench score`). Paired
    contrasts and counts are kept as written by harness.evaluation.stats (documented there)."""

    model_config = ConfigDict(extra="allow", frozen=True)  # score_run adds its own fields

    # 1.2: Wilson intervals; favourable after Holm; 2.0: `format_version` (was `schema_version`)
    FORMAT: ClassVar[str] = "2.0.0"
    PATH: ClassVar[str] = "scores/<model>/panel.json"
    LEGACY_VERSION_FIELD: ClassVar[str | None] = "schema_version"
    LEGACY_FORMAT: ClassVar[str | None] = "1.2.0"

    format_version: str
    conditions: list[str]
    metrics: list[PanelMetric]
    scenarios: int
    counts: dict[str, dict[str, int]]
    overall: PanelTable
    by_category: dict[str, PanelTable]
    paired: list[dict[str, Any]]
    settings: dict[str, Any]
    scoring_policy: dict[str, Any]


# --- the response record: what the runner writes and the scorer reads ---------------------

# How much of an answer could be read (harness.evaluation.judge decides; documented there).
ParseStatus = Literal["ok", "schema_error", "extracted", "unparseable"]
PARSE_STATUSES: tuple[str, ...] = get_args(ParseStatus)


class ResponseRecord(Document):
    """responses/<log>.jsonl, one line: one answer (or failure) to one (prompt, replicate),
    written by the runner (`kgbench run`, C5 and probe stages) and read by the scorer.

    The answer is kept verbatim (`raw`) and judged once, by harness.evaluation.judge, against
    the response schema whose digest is `judged_with`: `parse_status` is the verdict, `parsed`
    the answer when the whole of it is JSON (`parse_ok`), `schema_ok` whether that object
    keeps the schema, `schema_errors` the first problems, and `judgement` the rest of the
    verdict (kgbench.contract.judgement), so the scorer takes it as made under the same
    digest. A line without `record_version` was written before the record had a version (1.0:
    no parse_status, no judged_with); it is read as such, and the scorer judges its answer
    again with the same judge, as it does a 1.1 record's (no `judgement`)."""

    # 1.1: record_version, parse_status, judged_with; 1.2: judgement
    FORMAT: ClassVar[str] = "1.2.0"
    LEGACY: ClassVar[str] = "1.0.0"  # the unversioned records of earlier runners
    PATH: ClassVar[str] = "responses/<log>.jsonl"
    VERSION_FIELD: ClassVar[str] = "record_version"

    record_version: str
    key: str
    prompt_id: str
    scenario_id: str
    condition: str
    replicate: int
    model: str
    status: Literal["ok", "failed"]
    raw: str | None
    parsed: Any = None
    parse_ok: bool
    schema_ok: bool
    schema_errors: list[str]
    parse_status: ParseStatus | None = Field(
        description="the judge's verdict on the answer; null when none came (status failed)"
    )
    judged_with: str | None = Field(
        default=None, description="sha256 of the canonical JSON of the schema judged against"
    )
    judgement: RecordedJudgement | None = Field(
        default=None, description="the judge's whole verdict under `judged_with` (1.2)"
    )
    finish_reason: str | None
    truncated: bool
    refusal: str | None
    usage: dict[str, Any] | None
    latency_s: float | None
    cost_usd: float
    error: str | None
    http_status: int | None = None
    attempts: int
    cached: bool
    cache_created_at: str | None = None
    structured: bool | None
    mode: str
    batch_id: str | None
    response_model: str | None
    system_fingerprint: str | None
    request_id: str | None
    params: dict[str, Any]
    created_at: str


class RecordView(TypedDict, total=False):
    """What the scorer keeps of a ResponseRecord (a plain dict, no model on its hot path):
    the verdict, the identity, and the answer once, `parsed` or else `raw`."""

    status: str
    error: str | None
    parse_ok: bool
    parse_status: str | None
    judged_with: str | None
    key: str
    model: str
    params: dict[str, Any]
    parsed: dict[str, Any]
    raw: Any


# --- the other documents the harness writes into a run folder -----------------------------
# Declared here so each format version lives in one place (issue 32 item 3: one version field
# name, no format constants in harness/). Only the identifying fields are typed; the rest is
# kept as written (extra="allow"): each writer validates what it writes against its model.


class HarnessDocument(Document):
    """A run-folder document whose body its writer documents; the model fixes its version."""

    model_config = ConfigDict(extra="allow", frozen=True)

    format_version: str


class RunDescriptionFile(HarnessDocument):
    """run.json: which compiled domain a run folder belongs to (harness.runfolder)."""

    FORMAT: ClassVar[str] = "2.0.0"  # 2: relative paths, versioned
    PATH: ClassVar[str] = "run.json"

    domain: str
    compiled_domain: str | None = None
    response_schema: str | None = None
    replicates: int | None = None


class OrderFigures(HarnessDocument):
    """scores/<model>/order.json: order sensitivity (harness.evaluation.order)."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "scores/<model>/order.json"

    model: str
    accuracy_metric: str
    conditions: dict[str, Any]


class VerifySummary(HarnessDocument):
    """verify/<model>/summary.json: C5's verify-and-revise figures (harness.verify.agent)."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "verify/<model>/summary.json"

    condition: str
    model: str


class ProbeRun(HarnessDocument):
    """probe/<model>/probe.json: what one probe run did (harness.probe.run)."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "probe/<model>/probe.json"

    domain: str
    model: str
    stages: list[str]


class ProbeMapping(HarnessDocument):
    """probe/<model>/mapping.json: each generated name's mapping to the graph."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "probe/<model>/mapping.json"

    domain: str
    model: str
    decisions: list[dict[str, Any]]


class ProbeScores(HarnessDocument):
    """probe/<model>/scores.json: the probe's scores (harness.probe.scoring)."""

    FORMAT: ClassVar[str] = "1.1.0"  # 1.1: out-of-scope roots (no reference edge at the root)
    PATH: ClassVar[str] = "probe/<model>/scores.json"

    domain: str
    model: str
    settings: dict[str, Any]


class ProbeGraph(HarnessDocument):
    """probe/<model>/graphs/<root>.json: one generated graph with its provenance."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "probe/<model>/graphs/<root>.json"

    root_id: str
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]


class StudyDescription(HarnessDocument):
    """study/study.json: a study's identity, which claims its folder (harness.study.run)."""

    FORMAT: ClassVar[str] = "2.0.0"  # 2.0: `format_version` (was `format`)
    PATH: ClassVar[str] = "study/study.json"
    LEGACY_VERSION_FIELD: ClassVar[str | None] = "format"
    LEGACY_FORMAT: ClassVar[str | None] = "1.0.0"

    identity: dict[str, Any]


class StudyStatistics(HarnessDocument):
    """study/statistics.json: every comparison of a study (harness.study.stats)."""

    FORMAT: ClassVar[str] = "2.0.0"  # 2.0: `format_version` (was `statistics_version`)
    PATH: ClassVar[str] = "study/statistics.json"
    LEGACY_VERSION_FIELD: ClassVar[str | None] = "statistics_version"
    LEGACY_FORMAT: ClassVar[str | None] = "1.0.0"

    settings: dict[str, Any]


HARNESS_DOCUMENTS: tuple[type[Document], ...] = (
    RunDescriptionFile,
    Context,
    ScoredPanel,
    OrderFigures,
    VerifySummary,
    ProbeRun,
    ProbeMapping,
    ProbeScores,
    ProbeGraph,
    StudyDescription,
    StudyStatistics,
)
"""What the harness writes (the rest of DOCUMENTS is what the compiler writes, plus the
response record, which keeps its own `record_version`)."""


# Every document of the contract, in the order the schemas are listed.
DOCUMENTS: tuple[type[Document], ...] = (
    Manifest,
    KnowledgeGraph,
    LoadPlan,
    Conditions,
    MetricPanel,
    ScenarioRules,
    Probe,
    Context,
    ScoredPanel,
    ResponseRecord,
    *(d for d in HARNESS_DOCUMENTS if d not in (Context, ScoredPanel)),
)

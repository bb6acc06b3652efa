"""Typed models of every artifact the harness reads: the contract between compile and run.

`generated/<domain>/` is written by the compiler and read by the harness, and neither imports
the other; these models are the one place both meet (dbt's `artifacts` habit). This module is
the index: each concept has its own module, and every name is re-exported here, so
`from kgbench.contract.models import X` keeps working:
- base: the strict, versioned bases (`Model`, `Document`, `HarnessDocument`), the rules for
  changing a model, and the scoring API version;
- compiled: manifest.json, neo4j/plan.json, scenario_rules.json, probe/probe.json;
- knowledge_graph: kg.json and its records;
- experiment: conditions.json (conditions, sections, verify, presentations) and metrics.json;
- run_documents: what the harness writes into a run folder (contexts, panels, run.json, ...);
- study_documents: study.json and statistics.json;
- here: the response record, and the lists of documents (`DOCUMENTS`, `HARNESS_DOCUMENTS`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypedDict, get_args

from pydantic import Field

from .base import (
    SCORING_API_VERSION,
    Document,
    HarnessDocument,
    Model,
)
from .compiled import (
    Check,
    FileHash,
    LoadPlan,
    LoadStatement,
    Manifest,
    OutputFile,
    Probe,
    ProbeNoise,
    ProbeReference,
    ProbeRoot,
    ProbeSettings,
    ProbeStep,
    ScenarioRules,
)
from .experiment import (
    ChainOrderKey,
    ClaimKind,
    ClaimSupport,
    ClaimSupporter,
    Condition,
    Conditions,
    Metric,
    MetricPanel,
    Presentation,
    Section,
    SectionShape,
    UnparseablePolicy,
    Verify,
    VerifyQueries,
    VolumeMatch,
)
from .judgement import RecordedJudgement
from .knowledge_graph import (
    Assertion,
    ComponentCredit,
    CompositeOutcome,
    Conflict,
    Entity,
    EntityClass,
    EvidenceGap,
    EvidenceRules,
    EvidenceSource,
    InterventionClass,
    KnowledgeGraph,
    Predicate,
    PromptText,
    Support,
)
from .run_documents import (
    Cell,
    Context,
    ContextEntity,
    ContextPath,
    ContextSection,
    ContextSectionShape,
    ContextVolume,
    OrderFigures,
    PanelMetric,
    PanelTable,
    ProbeGraph,
    ProbeMapping,
    ProbeOutput,
    ProbeRun,
    ProbeScores,
    RunDescriptionFile,
    ScoredPanel,
    VerifySummary,
)
from .study_documents import (
    StudyDescription,
    StudyStatistics,
)

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

__all__ = [
    "DOCUMENTS",
    "HARNESS_DOCUMENTS",
    "PARSE_STATUSES",
    "SCORING_API_VERSION",
    "Assertion",
    "Cell",
    "ChainOrderKey",
    "Check",
    "ClaimKind",
    "ClaimSupport",
    "ClaimSupporter",
    "ComponentCredit",
    "CompositeOutcome",
    "Condition",
    "Conditions",
    "Conflict",
    "Context",
    "ContextEntity",
    "ContextPath",
    "ContextSection",
    "ContextSectionShape",
    "ContextVolume",
    "Document",
    "Entity",
    "EntityClass",
    "EvidenceGap",
    "EvidenceRules",
    "EvidenceSource",
    "FileHash",
    "HarnessDocument",
    "InterventionClass",
    "KnowledgeGraph",
    "LoadPlan",
    "LoadStatement",
    "Manifest",
    "Metric",
    "MetricPanel",
    "Model",
    "OrderFigures",
    "OutputFile",
    "PanelMetric",
    "PanelTable",
    "ParseStatus",
    "Predicate",
    "Presentation",
    "Probe",
    "ProbeGraph",
    "ProbeMapping",
    "ProbeNoise",
    "ProbeOutput",
    "ProbeReference",
    "ProbeRoot",
    "ProbeRun",
    "ProbeScores",
    "ProbeSettings",
    "ProbeStep",
    "PromptText",
    "RecordView",
    "ResponseRecord",
    "RunDescriptionFile",
    "ScenarioRules",
    "ScoredPanel",
    "Section",
    "SectionShape",
    "StudyDescription",
    "StudyStatistics",
    "Support",
    "UnparseablePolicy",
    "Verify",
    "VerifyQueries",
    "VerifySummary",
    "VolumeMatch",
]

"""The documents the harness writes into a run folder: extracted contexts, scored panels, the
run description, order figures, the verify summary and the probe's outputs. Declared here so
each format version lives in one place (issue 32 item 3: one version field name, no format
constants in harness/)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from .base import Document, HarnessDocument, Model
from .experiment import SectionShape

# --- contexts/<scenario>/<condition>.json -------------------------------------------------


class ContextEntity(Model):
    id: str
    name: str
    category: str


class ContextPath(Model):
    candidate_id: str | None = Field(description="null on a padding path (no candidate)")
    assertion_ids: list[str]


# A context section has the shapes of conditions.json's sections (one owner: SectionShape)
# plus a volume-matched control's padding section (1.1), a context shape of its own: no query
# section retrieves it, so it is not a SectionShape of conditions.json.
ContextSectionShape = Literal[SectionShape, "padding"]


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


# --- scores/<model>/panel.json ------------------------------------------------------------


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


# --- run.json, order, verify and probe outputs --------------------------------------------


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


class ProbeOutput(HarnessDocument):
    """A document one probe run writes under probe/<model>/: each names the domain probed
    and the model that answered (declared once here, not per document)."""

    domain: str
    model: str


class ProbeRun(ProbeOutput):
    """probe/<model>/probe.json: what one probe run did (harness.probe.run)."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "probe/<model>/probe.json"

    stages: list[str]


class ProbeMapping(ProbeOutput):
    """probe/<model>/mapping.json: each generated name's mapping to the graph."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "probe/<model>/mapping.json"

    decisions: list[dict[str, Any]]


class ProbeScores(ProbeOutput):
    """probe/<model>/scores.json: the probe's scores (harness.probe.scoring)."""

    FORMAT: ClassVar[str] = "1.1.0"  # 1.1: out-of-scope roots (no reference edge at the root)
    PATH: ClassVar[str] = "probe/<model>/scores.json"

    settings: dict[str, Any]


class ProbeGraph(HarnessDocument):
    """probe/<model>/graphs/<root>.json: one generated graph with its provenance."""

    FORMAT: ClassVar[str] = "1.0.0"
    PATH: ClassVar[str] = "probe/<model>/graphs/<root>.json"

    root_id: str
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]

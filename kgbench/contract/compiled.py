"""What `kgbench compile` writes besides the graph and the experiment: the manifest, the
Neo4j load plan, the scenario rules and the graph-generation probe."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, StringConstraints

from .base import Document, Model

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


# --- neo4j/plan.json ----------------------------------------------------------------------

# A label a load statement takes as a parameter: Cypher's `$(...)` accepts any string, so the
# plan admits only what a validated spec identifier can be.
SpecIdentifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]*$")]


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
    params: dict[str, SpecIdentifier] = Field(
        default_factory=dict,
        description="(1.2) statement parameters sent with every batch, besides `$rows`: the "
        "class label the statement's texts read as `$(...)`, so the statements of every "
        "entity class share their texts. Each value is a spec identifier (a label name), "
        "never data",
    )


class Check(Model):
    """One validation query: returns one row whose `value` must equal `expect`."""

    name: str
    description: str
    expect: int
    cypher: str


class LoadPlan(Document):
    """neo4j/plan.json: what `kgbench load` runs, in order (the .cypher files render it)."""

    FORMAT: ClassVar[str] = "1.2.0"  # 1.1: statements' then and reconcile; 1.2: params
    PATH: ClassVar[str] = "neo4j/plan.json"

    format_version: str
    domain: str
    label: str
    dialect: str
    constraints: list[str]
    statements: list[LoadStatement]
    checks: list[Check]


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

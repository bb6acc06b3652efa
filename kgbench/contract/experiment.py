"""What a domain declares of its experiment, as compiled: the grounding conditions and option
presentations (conditions.json) and the metric panel (metrics.json)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from .base import Document, Model

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

"""The scenario rules of a compiled domain (generated/<domain>/scenario_rules.json), typed.

The compiler has already validated the declaration (ids exist, classes exist, templates use
known fields), so this module only gives it shape: small frozen dataclasses the generator can
pass around instead of nested dictionaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.compiled import CompiledDomain
from kgbench.contract import IncompatibleArtifact, ScenarioRules
from kgbench.errors import Location, UserError


@dataclass(frozen=True)
class ChainRule:
    """Which chains of assertions count (see ChainRule in spec/declarations.yaml)."""

    roles: tuple[str, ...]
    max_hops: int
    min_hops: int = 1
    condition: str | None = None
    validated_only: bool = False
    evidence_levels: tuple[str, ...] = ()
    causal_status: tuple[str, ...] = ()
    via_classes: tuple[str, ...] = ()
    avoid_classes: tuple[str, ...] = ()
    effect: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChainRule:
        return cls(
            roles=tuple(data["roles"]),
            max_hops=int(data["max_hops"]),
            min_hops=int(data.get("min_hops") or 1),
            condition=data.get("condition"),
            validated_only=bool(data.get("validated_only")),
            evidence_levels=tuple(data.get("evidence_levels") or ()),
            causal_status=tuple(data.get("causal_status") or ()),
            via_classes=tuple(data.get("via_classes") or ()),
            avoid_classes=tuple(data.get("avoid_classes") or ()),
            effect=data.get("effect"),
        )


@dataclass(frozen=True)
class AnchorRule:
    """Which single assertions a pattern is built around."""

    roles: tuple[str, ...]
    causal_status: tuple[str, ...] = ()
    evidence_levels: tuple[str, ...] = ()
    validated: bool | None = None
    subject_classes: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> AnchorRule | None:
        if not data:
            return None
        return cls(
            roles=tuple(data["roles"]),
            causal_status=tuple(data.get("causal_status") or ()),
            evidence_levels=tuple(data.get("evidence_levels") or ()),
            validated=data.get("validated"),
            subject_classes=tuple(data.get("subject_classes") or ()),
        )

    def matches(self, assertion: dict[str, Any], role: str, subject_class: str) -> bool:
        return (
            role in self.roles
            and (not self.causal_status or assertion["causal_status"] in self.causal_status)
            and (not self.evidence_levels or assertion["evidence_level"] in self.evidence_levels)
            and (self.validated is None or assertion["validated"] == self.validated)
            and (not self.subject_classes or subject_class in self.subject_classes)
        )


@dataclass(frozen=True)
class CategoryRule:
    category: str
    pattern: str
    path: ChainRule
    title: str
    decision: str
    anchor: AnchorRule | None = None
    target_classes: tuple[str, ...] = ()
    mechanism: ChainRule | None = None
    pathways: ChainRule | None = None
    min_pathways: int = 2
    competitors: tuple[int, int] = (2, 3)
    marker_distractor: bool = False
    salient_classes: tuple[str, ...] = ()
    expects_uncertainty: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CategoryRule:
        comp = data.get("competitors") or {"min": 2, "max": 3}
        return cls(
            category=data["category"],
            pattern=data["pattern"],
            path=ChainRule.from_dict(data["path"]),
            title=data["title"],
            decision=data["decision"],
            anchor=AnchorRule.from_dict(data.get("anchor")),
            target_classes=tuple(data.get("target_classes") or ()),
            mechanism=ChainRule.from_dict(data["mechanism"]) if data.get("mechanism") else None,
            pathways=ChainRule.from_dict(data["pathways"]) if data.get("pathways") else None,
            min_pathways=int(data.get("min_pathways") or 2),
            competitors=(int(comp["min"]), int(comp["max"])),
            marker_distractor=bool(data.get("marker_distractor")),
            salient_classes=tuple(data.get("salient_classes") or ()),
            expects_uncertainty=bool(data.get("expects_uncertainty")),
        )


@dataclass(frozen=True)
class WeakEvidence:
    evidence_levels: tuple[str, ...]
    unvalidated: bool
    unsupported: bool


@dataclass(frozen=True)
class OutcomePolicy:
    """Which outcome claims qualify an answer (scenarios.yaml `outcome_evidence`)."""

    evidence_levels: tuple[str, ...]
    study_source_types: tuple[str, ...]
    guideline_source_types: tuple[str, ...] = ()
    guideline_classes: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OutcomePolicy:
        return cls(
            evidence_levels=tuple(data["evidence_levels"]),
            study_source_types=tuple(data["study_source_types"]),
            guideline_source_types=tuple(data.get("guideline_source_types") or ()),
            guideline_classes=tuple(data.get("guideline_classes") or ()),
        )


@dataclass(frozen=True)
class UncertaintyRule:
    """When a correct answer expects uncertainty (scenarios.yaml `uncertainty`)."""

    abstention: bool = True
    class_order: tuple[str, ...] = ("class_1", "class_2a", "class_2b")
    weak_classes: tuple[str, ...] = ("class_2b",)
    weak_levels: tuple[str, ...] = ("C", "C_LD", "C_EO")
    guideline_conflict: bool = True

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> UncertaintyRule:
        """The declared rule; a domain that declares none keeps the rule 3.0.0 was built with
        (the defaults above, documented in spec/declarations.yaml)."""
        if not data:
            return cls()
        return cls(
            abstention=bool(data["abstention"]),
            class_order=tuple(data["class_order"]),
            weak_classes=tuple(data.get("weak_classes") or ()),
            weak_levels=tuple(data.get("weak_levels") or ()),
            guideline_conflict=bool(data.get("guideline_conflict")),
        )


@dataclass(frozen=True)
class IndicationScope:
    """Everything an intervention is indicated for in the domain, declared with its source."""

    indicated_for: tuple[str, ...]
    evidence_id: str


@dataclass(frozen=True)
class StatedBackground:
    """A finding the vignette states, present or absent, whenever one of the options is offered."""

    options: tuple[str, ...]
    finding: str
    absent: str
    evidence_id: str


@dataclass(frozen=True)
class Rules:
    """Everything scenarios.yaml declares, as the generator uses it."""

    domain: str
    source: str
    scenario_schema_version: str
    seed: int
    per_category: int
    target_classes: tuple[str, ...]
    default_population: str | None  # None: the domain declares no population
    candidates: tuple[int, int]
    childbearing_age: tuple[int, int] | None
    path_ranking: tuple[str, ...]
    outcome_evidence: OutcomePolicy
    indication_source_types: tuple[str, ...]
    treated_classes: tuple[str, ...]
    finding_classes: tuple[str, ...]
    distractor_exclusion: ChainRule
    weak_evidence: WeakEvidence
    adverse_effects: AnchorRule | None
    outcome_groups: tuple[tuple[str, ...], ...]
    categories: tuple[CategoryRule, ...]
    pinned: tuple[dict[str, Any], ...]
    populations: dict[str, dict[str, Any]]
    entity_profiles: dict[str, dict[str, Any]]
    labs: tuple[dict[str, Any], ...]
    narrative: dict[str, Any]
    distractor_share_max: float = 0.2
    clinical_scores: tuple[dict[str, Any], ...] = ()
    gold_path_shapes: tuple[tuple[str, ...], ...] = ()  # first matching shape wins, if declared
    scenario_id_format: str = ""  # the domain's scenario id scheme: how item n is numbered
    uncertainty: UncertaintyRule = UncertaintyRule()
    # intervention -> what it is indicated for, declared complete with a source ("not indicated")
    indication_scopes: dict[str, IndicationScope] = field(default_factory=dict)
    stated_background: tuple[StatedBackground, ...] = ()
    goals: tuple[dict[str, Any], ...] = ()  # stated priorities that break ties (goals.py)
    exclusive_findings: tuple[dict[str, Any], ...] = ()  # groups a patient holds one of

    def scenario_id(self, n: int) -> str:
        """The n-th item's id (1-based) in the domain's declared scheme."""
        return self.scenario_id_format.format(n=n)

    def category(self, name: str) -> CategoryRule:
        return next(c for c in self.categories if c.category == name)


def load_rules(domain: CompiledDomain) -> Rules:
    """Read scenario_rules.json; a domain without one cannot generate scenarios."""
    if not domain.has_scenario_rules:
        raise UserError(
            f"domain '{domain.name}' declares no scenario rules: add `scenarios: scenarios.yaml` "
            f"to domains/{domain.name}/domain.yaml and run `kgbench compile -d {domain.name}`"
        )
    doc = domain.document(ScenarioRules).model_dump()
    try:
        return _rules_from(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a hand-edited file
        raise IncompatibleArtifact(
            f"does not hold the scenario rules this kgbench reads ({type(exc).__name__}: "
            f"{str(exc)[:120]}); the file was edited or damaged: run `make compile "
            f"DOMAIN={domain.name}` (or `kgbench compile --domain {domain.name}`)",
            Location(str(domain.scenario_rules_path)),
        ) from None


def _rules_from(doc: dict[str, Any]) -> Rules:
    r = doc["rules"]
    weak = r["weak_evidence"]
    return Rules(
        domain=doc["domain"],
        source=doc["source"],
        scenario_schema_version=doc["scenario_schema_version"],
        seed=int(r["seed"]),
        per_category=int(r["per_category"]),
        target_classes=tuple(r["target_classes"]),
        default_population=r.get("default_population"),
        candidates=(int(r["candidates"]["min"]), int(r["candidates"]["max"])),
        childbearing_age=(
            (int(r["childbearing_age"]["min"]), int(r["childbearing_age"]["max"]))
            if r.get("childbearing_age")
            else None
        ),
        path_ranking=tuple(r["path_ranking"]),
        outcome_evidence=OutcomePolicy.from_dict(r["outcome_evidence"]),
        indication_source_types=tuple(r.get("indication_source_types") or ()),
        treated_classes=tuple(r.get("treated_classes") or ()),
        finding_classes=tuple(r.get("finding_classes") or ()),
        distractor_exclusion=ChainRule.from_dict(r["distractor_exclusion"]),
        weak_evidence=WeakEvidence(
            evidence_levels=tuple(weak["evidence_levels"]),
            unvalidated=bool(weak.get("unvalidated")),
            unsupported=bool(weak.get("unsupported")),
        ),
        adverse_effects=AnchorRule.from_dict(r.get("adverse_effects")),
        outcome_groups=tuple(tuple(g["members"]) for g in r.get("outcome_groups") or ()),
        categories=tuple(CategoryRule.from_dict(c) for c in r["categories"]),
        pinned=tuple(r.get("pinned") or ()),
        populations={p["population"]: p for p in r.get("populations") or ()},
        entity_profiles={p["entity"]: p for p in r.get("entity_profiles") or ()},
        labs=tuple(r.get("labs") or ()),
        narrative=r["narrative"],
        distractor_share_max=float(
            r["distractor_share_max"] if r.get("distractor_share_max") is not None else 0.2
        ),
        clinical_scores=tuple(r.get("clinical_scores") or ()),
        gold_path_shapes=tuple(tuple(str(s).split()) for s in r.get("gold_path_shapes") or ()),
        scenario_id_format=r["scenario_ids"]["format"],
        uncertainty=UncertaintyRule.from_dict(r.get("uncertainty")),
        indication_scopes={
            x["intervention_id"]: IndicationScope(tuple(x["indicated_for"]), x["evidence_id"])
            for x in r.get("indication_scopes") or ()
        },
        stated_background=tuple(
            StatedBackground(
                tuple(b["options"]),
                b["finding"],
                " ".join(str(b["absent"]).split()),
                b["evidence_id"],
            )
            for b in r.get("stated_background") or ()
        ),
        goals=tuple(r.get("goals") or ()),
        exclusive_findings=tuple(r.get("exclusive_findings") or ()),
    )

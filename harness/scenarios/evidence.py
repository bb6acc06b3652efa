"""Evidence-anchored judgement: may this intervention be the answer for this patient?

The one question every category asks, answered the way a clinician would and the same way
everywhere. An intervention qualifies for (target outcome, population) only through an
**outcome claim**: a validated causal claim from the intervention (or from a class declared
homogeneous that contains it) to the target or a declared composite containing it, for the
patient's population, at a declared certainty, backed by a study that studied it (a trial or a
meta-analysis) or a guideline recommendation of a declared class. A chain through a surrogate
(blood pressure, LDL cholesterol) explains the mechanism; it never qualifies an answer.

Against that, in order of precedence:
- a contraindication hitting any of the patient's findings (history included) excludes it;
- a validated harm or null result on the same outcome for the population blocks it;
- contradictory claims the domain declares `contested` leave it uncertain.

A claim on a composite outcome (MACE) speaks for a component (cardiovascular death) only
where the domain declares that its evidence supports that component (`component_credits`,
with the source that reports it); the default is no credit, in either direction.

Every candidate must have a **known** status, from data: a qualifying benefit claim, a null,
harm or contested claim, a benefit claim below the bar, a contraindication hit, a curated
`evidence_gap` record (a source saying no outcome trial or recommendation exists), or no
indication for any of the patient's conditions where the domain declares the intervention's
indications complete (`indication_scopes`, with a source). A candidate with none of these has
an unknown status: the graph is silent, and silence is never read as "no evidence" (it is
never offered).

Strength orders qualified claims: a study of the intervention itself (or its homogeneous
class) beats a guideline alone, then the claim's certainty, then the class of the
recommendation. Hop counts and rule order never decide.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .kg import KnowledgeGraph
from .narratives import lower_name
from .rules import IndicationScope, Rules

QUALIFIED = "outcome_evidence"
CONTRAINDICATED = "contraindicated"
HARM = "harm_evidence"
NULL = "null_evidence"
CONTESTED = "contested_evidence"
UNPROVEN = "no_outcome_evidence"
# Why an unproven candidate's status is known (the judgement's `basis`); none: unknown.
WEAK_CLAIM = "weak_claim"  # a benefit claim below the bar
EVIDENCE_GAP = "evidence_gap"  # a curated record: no outcome trial or recommendation exists
NOT_INDICATED = "not_indicated"  # declared indications, none of them the patient's
REC_RANK = {"class_1": 2, "class_2a": 1}


@dataclass(frozen=True)
class OutcomeClaim:
    """One outcome claim of an intervention, as it applies to one patient population."""

    assertion_id: str
    via_class: str | None  # the class it is inherited from, for a class-level claim
    effect: str  # benefit | no_effect | harm
    outcome: str  # the target itself or a composite that contains it
    qualifying: tuple[str, ...]  # sources that make it outcome evidence
    strength: tuple[int, int, int]  # (study of it, certainty, class of recommendation)
    validated: bool = True

    def describe(self, kg: KnowledgeGraph) -> str:
        a = kg.assertions[self.assertion_id]
        kinds = []
        for link in kg.links.get(self.assertion_id, ()):
            ev = kg.evidence[link["evidence_id"]]
            if link["evidence_id"] not in self.qualifying:
                continue
            text = f"{ev['source_type'].replace('_', '-')} {link['evidence_id']}"
            if link.get("recommendation_class"):
                text += f" ({link['recommendation_class'].replace('_', ' ')}"
                if link.get("level_of_evidence"):
                    text += f", level {link['level_of_evidence'].replace('_', '-')}"
                text += ")"
            kinds.append(text)
        where = f"class-level claim of {kg.name_of(self.via_class)}, " if self.via_class else ""
        return f"{where}{a['evidence_level']} certainty; " + "; ".join(kinds)


@dataclass(frozen=True)
class Recommendation:
    """A guideline recommendation of a declared class for an intervention, on an indication
    (INDICATED_FOR), not on an outcome: what a guideline recommends it for."""

    assertion_id: str
    evidence_id: str
    indication: str  # what it is recommended for (a condition or population id)
    recommendation_class: str
    level_of_evidence: str

    def describe(self) -> str:
        text = self.recommendation_class.replace("_", " ")
        if self.level_of_evidence:
            text += f", level {self.level_of_evidence.replace('_', '-')}"
        return f"{self.assertion_id}: guideline {self.evidence_id}, {text}"


@dataclass(frozen=True)
class Judgement:
    """The verdict on one candidate for one patient, with what it rests on."""

    intervention: str
    status: str
    claim: OutcomeClaim | None = None  # the strongest qualifying benefit claim
    claims: tuple[OutcomeClaim, ...] = ()  # every qualifying benefit claim, strongest first
    blocking: tuple[str, ...] = ()  # null, harm or contested assertion ids
    weak: tuple[tuple[str, str], ...] = ()  # (benefit claim below the bar, why)
    # the guideline recommendations a weak claim's text cites (for the patient's conditions)
    recommendations: tuple[Recommendation, ...] = ()
    contraindications: tuple[str, ...] = ()  # contraindication assertion ids that hit
    findings: tuple[str, ...] = ()  # the findings they hit
    basis: str = ""  # for an unproven candidate: why its status is known ("" = unknown)
    gap: dict[str, Any] | None = None  # the evidence_gap record it rests on, if any
    indications: tuple[str, ...] = ()  # for not_indicated: the indications it does have

    @property
    def qualified(self) -> bool:
        return self.status == QUALIFIED

    @property
    def known(self) -> bool:
        """Whether data, not the graph's silence, settles this candidate's status."""
        return self.status != UNPROVEN or bool(self.basis)


class OutcomeJudge:
    """Judgements over one graph and one domain's outcome-evidence rule (memoised)."""

    def __init__(self, kg: KnowledgeGraph, rules: Rules) -> None:
        self.kg = kg
        self.rules = rules
        self.policy = rules.outcome_evidence
        self._cache: dict[tuple, Judgement] = {}

    # populations -----------------------------------------------------------------------------

    def applies_in(self, population: str) -> set[str]:
        """The population and the populations its profile lists under `applies_with`.

        Deliberately not transitive: a domain lists every population whose claims hold for a
        patient of this one, so a null result scoped to a broad population (CABANA, ablation
        and mortality) does not silently reach a narrower one with its own evidence (CASTLE-AF
        in heart failure) through a chain of declarations."""
        profile = self.rules.populations.get(population) or {}
        return {population, *(profile.get("applies_with") or ())}

    def holds_in(self, assertion: dict[str, Any], population: str) -> bool:
        """Whether a claim speaks for patients of the population. A population that declares
        `own_evidence_roles` (pregnancy) accepts claims of those roles only when they were
        shown in it: a general outcome claim does not reach pregnant women."""
        pop = assertion["population_id"]
        own = (self.rules.populations.get(population) or {}).get("own_evidence_roles") or ()
        if self.kg.role(assertion) in own:
            return pop == population
        return pop is None or pop in self.applies_in(population)

    # claims ----------------------------------------------------------------------------------

    @cached_property
    def _superseded(self) -> frozenset[str]:
        """Claims that lost a declared conflict resolution (the other claim stands)."""
        out: set[str] = set()
        for c in self.kg.evidence_rules.get("conflicts") or ():
            if c["resolution"] != "contested":
                out |= set(c["assertions"]) - {c["resolution"]}
        return frozenset(out)

    @cached_property
    def _contested(self) -> frozenset[str]:
        out: set[str] = set()
        for c in self.kg.evidence_rules.get("conflicts") or ():
            if c["resolution"] == "contested":
                out |= set(c["assertions"])
        return frozenset(out)

    @cached_property
    def _credits(self) -> dict[str, frozenset[str]]:
        """Composite claim id -> the components its evidence is declared to support."""
        out: dict[str, set[str]] = {}
        for c in self.kg.evidence_rules.get("component_credits") or ():
            out.setdefault(c["assertion_id"], set()).update(c["components"])
        return {k: frozenset(v) for k, v in out.items()}

    def speaks_for(self, assertion: dict[str, Any], target: str) -> bool:
        """A claim on the target itself, or on a composite declared to credit the target."""
        if assertion["object_id"] == target:
            return True
        return target in self._credits.get(assertion["assertion_id"], ())

    def gap(self, intervention: str, target: str, population: str) -> dict[str, Any] | None:
        """The curated evidence_gap record for the intervention (or a class of it), the
        target and a population whose claims hold for this patient, if any."""
        own = {intervention, *self.kg.classes_of.get(intervention, ())}
        pops = self.applies_in(population) if population is not None else set()
        for g in self.kg.evidence_rules.get("evidence_gaps") or ():
            if g["intervention_id"] not in own or g["outcome_id"] != target:
                continue
            if g.get("population_id") is None or g["population_id"] in pops:
                return g
        return None

    def indication_scopes(self, intervention: str) -> list[IndicationScope]:
        """The declared indication scopes of the intervention and of its classes."""
        scopes = self.rules.indication_scopes
        own = [intervention, *sorted(self.kg.classes_of.get(intervention, ()))]
        return [scopes[i] for i in own if i in scopes]

    def not_indicated(
        self, intervention: str, findings: tuple[str, ...], population: str | None
    ) -> tuple[str, ...]:
        """What the intervention is indicated for, when the domain declares that list complete
        (`indication_scopes`, with its source) and none of it is one of the patient's
        conditions or her population; empty otherwise. A missing indication edge alone is
        never "not indicated": an intervention without a declared scope (own, or of a class of
        it) has no such status, whatever edges the graph lacks."""
        declared = self.indication_scopes(intervention)
        if not declared:
            return ()
        indicated = {x for scope in declared for x in scope.indicated_for}
        wanted = {*findings, *((population,) if population else ())}
        if population is not None:
            wanted |= self.applies_in(population)
        if indicated & wanted:
            return ()
        return tuple(sorted(indicated))

    def effect(self, assertion: dict[str, Any]) -> str | None:
        role = self.kg.role(assertion)
        if role == "null_effect":
            return "no_effect"
        if role != "causal":
            return None
        return {"decrease": "benefit", "increase": "harm"}.get(assertion["direction"])

    def studied(self, evidence_id: str, subject: str) -> bool:
        """A study qualifies a claim only when it studied the claim's subject (or, through a
        homogeneous class, a member of it): its own trial, never another drug's."""
        return self.kg.study_covers(evidence_id, subject)

    def outcome_claims(self, intervention: str, target: str, population: str) -> list[OutcomeClaim]:
        """Every validated outcome claim of the intervention (own or inherited) on the target or
        a composite containing it, holding in the population, with its qualifying sources."""
        outcomes = set(self.kg.outcome_ids(target))
        levels = self.kg.evidence_order
        out = []
        for a, via in self.kg.claims(intervention, ("causal", "null_effect")):
            if a["object_id"] not in outcomes or not self.speaks_for(a, target):
                continue
            if a["assertion_id"] in self._superseded or not self.holds_in(a, population):
                continue
            effect = self.effect(a)
            if effect is None:
                continue
            qualifying, study, rec = [], 0, 0
            for link in self.kg.links.get(a["assertion_id"], ()):
                ev = self.kg.evidence[link["evidence_id"]]
                if ev["source_type"] in self.policy.study_source_types and self.studied(
                    link["evidence_id"], a["subject_id"]
                ):
                    qualifying.append(link["evidence_id"])
                    study = 1
                elif ev["source_type"] in self.policy.guideline_source_types and (
                    link.get("recommendation_class") in self.policy.guideline_classes
                ):
                    qualifying.append(link["evidence_id"])
                    rec = max(rec, REC_RANK.get(link["recommendation_class"], 0))
            level = len(levels) - levels.index(a["evidence_level"])
            out.append(
                OutcomeClaim(
                    a["assertion_id"], via, effect, a["object_id"], tuple(qualifying),
                    (study, level, rec), bool(a["validated"]),
                )
            )  # fmt: skip
        return out

    def recommendations(
        self, intervention: str, findings: Iterable[str], population: str | None
    ) -> list[Recommendation]:
        """The guideline recommendations of a declared class for the intervention (own or
        class-level INDICATED_FOR claims holding in the population) on one of the patient's
        conditions or her population. They never qualify an answer (a recommendation for a
        condition is no claim on an outcome); they keep a shortfall's text true: "no
        recommendation" is said only where the patient's conditions have none."""
        wanted = set(findings)
        if population is not None:
            wanted |= self.applies_in(population)
        out = []
        for a, _ in self.kg.claims(intervention, ("therapeutic",)):
            if a["object_id"] not in wanted:
                continue
            if population is not None and not self.holds_in(a, population):
                continue
            for link in self.kg.links.get(a["assertion_id"], ()):
                ev = self.kg.evidence[link["evidence_id"]]
                if ev["source_type"] not in self.policy.guideline_source_types:
                    continue
                if link.get("recommendation_class") not in self.policy.guideline_classes:
                    continue
                out.append(
                    Recommendation(
                        a["assertion_id"], link["evidence_id"], a["object_id"],
                        link["recommendation_class"], link.get("level_of_evidence") or "",
                    )
                )  # fmt: skip
        return sorted(out, key=lambda r: (r.assertion_id, r.evidence_id))

    def shortfall(
        self,
        claim: OutcomeClaim,
        intervention: str | None = None,
        population: str | None = None,
        findings: Iterable[str] = (),
    ) -> str:
        """Why a benefit claim does not qualify, in words (empty when it does). The text says
        what is true of the graph: no qualifying source supports the claim (not that no study
        exists). Where a guideline does recommend the intervention for an indication of the
        patient, the text says so: a recommended option is never described as having no
        recommendation."""
        a = self.kg.assertions[claim.assertion_id]
        reasons = []
        if not claim.validated:
            reasons.append("not validated")
        if a["causal_status"] != "causal":
            reasons.append(a["causal_status"].replace("_", " "))
        if a["evidence_level"] not in self.policy.evidence_levels:
            reasons.append(f"{a['evidence_level'].replace('_', ' ')} certainty")
        if not claim.qualifying:
            # "no qualifying source supports it", never "no study of it": a trial may exist
            # that the graph does not hold or that does not meet the bar (cardiac
            # rehabilitation after ACS has been studied; review 2026-12-B, SCN_0075)
            target = lower_name(self.kg.name_of(claim.outcome))
            recs = self.recommendations(intervention or a["subject_id"], findings, population)
            if recs:
                said = "; ".join(
                    f"for {lower_name(self.kg.name_of(r.indication))} ({r.describe()})"
                    for r in recs
                )
                reasons.append(
                    f"recommended {said}, but no qualifying study or recommendation supports "
                    f"it on {target}"
                )
            else:
                reasons.append(
                    f"no qualifying study or guideline recommendation supports it on {target}"
                )
        if claim.assertion_id in self._contested:
            reasons.append("contested")
        return ", ".join(reasons)

    def qualifies(self, claim: OutcomeClaim) -> bool:
        a = self.kg.assertions[claim.assertion_id]
        return (
            claim.effect == "benefit"
            and claim.validated
            and bool(claim.qualifying)
            and a["causal_status"] == "causal"
            and a["evidence_level"] in self.policy.evidence_levels
            and claim.assertion_id not in self._contested
        )

    # contraindications -----------------------------------------------------------------------

    def contraindications(
        self, intervention: str, findings: Iterable[str], population: str | None = None
    ) -> list[tuple[str, str]]:
        """(assertion id, finding) for each contraindication (own or class-level) that hits one
        of the findings, or is declared for the patient's whole population."""
        wanted = set(findings)
        hits = []
        for a, _ in self.kg.claims(intervention, ("contraindication",)):
            scoped = a["population_id"] is not None and population is not None
            if scoped and not self.holds_in(a, population):
                continue  # a contraindication stated for another population
            if a["object_id"] in wanted:
                hits.append((a["assertion_id"], a["object_id"]))
            elif population is not None and a["population_id"] == population:
                hits.append((a["assertion_id"], population))
        return sorted(set(hits))

    # the verdict -----------------------------------------------------------------------------

    def judge(
        self, intervention: str, target: str, population: str, findings: Iterable[str] = ()
    ) -> Judgement:
        findings = tuple(sorted(set(findings)))
        key = (intervention, target, population, findings)
        if key not in self._cache:
            self._cache[key] = self._judge(intervention, target, population, findings)
        return self._cache[key]

    def _judge(
        self, intervention: str, target: str, population: str, findings: tuple[str, ...]
    ) -> Judgement:
        hits = self.contraindications(intervention, findings, population)
        if hits:
            return Judgement(
                intervention,
                CONTRAINDICATED,
                contraindications=tuple(h[0] for h in hits),
                findings=tuple(dict.fromkeys(h[1] for h in hits)),
            )
        claims = self.outcome_claims(intervention, target, population)
        validated = [c for c in claims if c.validated]
        harm = tuple(c.assertion_id for c in validated if c.effect == "harm")
        if harm:
            return Judgement(intervention, HARM, blocking=harm)
        null = tuple(c.assertion_id for c in validated if c.effect == "no_effect")
        if null:
            return Judgement(intervention, NULL, blocking=null)
        contested = tuple(c.assertion_id for c in claims if c.assertion_id in self._contested)
        good = [c for c in claims if self.qualifies(c)]
        if good:
            ranked = sorted(good, key=lambda c: (c.strength, c.via_class is None), reverse=True)
            ranked = [c for c in ranked if c.strength == ranked[0].strength]
            return Judgement(intervention, QUALIFIED, claim=ranked[0], claims=tuple(ranked))
        if contested:
            return Judgement(intervention, CONTESTED, blocking=contested)
        weak = tuple(
            (c.assertion_id, self.shortfall(c, intervention, population, findings))
            for c in claims
            if c.effect == "benefit"
        )
        gap = self.gap(intervention, target, population)
        if gap is not None:
            return Judgement(intervention, UNPROVEN, weak=weak, basis=EVIDENCE_GAP, gap=gap)
        if weak:
            unsourced = any(not c.qualifying for c in claims if c.effect == "benefit")
            cited = tuple(self.recommendations(intervention, findings, population))
            cited = cited if unsourced else ()  # only a claim without sources names them
            return Judgement(
                intervention, UNPROVEN, weak=weak, basis=WEAK_CLAIM, recommendations=cited
            )
        elsewhere = self.not_indicated(intervention, findings, population)
        if elsewhere:
            return Judgement(intervention, UNPROVEN, basis=NOT_INDICATED, indications=elsewhere)
        return Judgement(intervention, UNPROVEN)

"""Candidates and gold for one scenario instance, with the justification behind every verdict.

Distractors are plausible and wrong for this patient: each is judged by the same
`OutcomeJudge` as the preferred and must not qualify (no outcome evidence for this outcome and
population, a null or harm result, contested evidence, or a contraindication the patient has).
Plausibility tiers, best first: acting on the associated marker (confounded items); a
same-indication alternative or a real trap (indicated for, or contraindicated by, one of the
patient's findings); acting on something related to the target. An option that lowers a
sibling outcome is a last resort. Within a tier the least used option comes first, and no
option may be a distractor in more than the declared share of the domain's scenarios.

The gold is computed, never written by hand: the preferred (or none: abstain), the acceptable
answers (the preferred and its homogeneous classes; never a heterogeneous class, never a
contraindicated member), the outcome claims that qualify it, the explanatory path, the
preferred's adverse effects, the contraindications that hit this patient, the sources of the
preferred's own outcome claims and mechanism (another drug's trial never enters), and a
justification for every candidate.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .chains import ChainFinder
from .clinical import Clinical
from .evidence import (
    CONTRAINDICATED,
    EVIDENCE_GAP,
    NOT_INDICATED,
    QUALIFIED,
    Judgement,
    OutcomeJudge,
)
from .goals import GoalRule, Resolution
from .narratives import lower_name
from .patterns import UNQUALIFIED, Instance
from .rules import Rules

RULES_VERSION = "evidence-anchored 2.0"


class GoldError(Exception):
    """An instance whose final patient breaks the evidence rule (skipped, never published)."""


@dataclass(frozen=True)
class Distractor:
    intervention: str
    tier: int
    adds: tuple[str, ...] = ()  # findings the patient must have for the option to make sense


class GoldBuilder:
    LAST_RESORT = 3

    def __init__(self, clinical: Clinical, judge: OutcomeJudge, rules: Rules) -> None:
        self.clinical = clinical
        self.judge = judge
        self.kg = clinical.kg
        self.rules = rules
        self._pools: dict[tuple, tuple[Distractor, ...]] = {}
        self._judged_cache: dict[tuple, tuple[tuple[str, int | None, tuple[str, ...]], ...]] = {}
        self.used: Counter = Counter()  # distractor use so far: no option becomes a tell
        self.cap: int | None = None  # most uses of one option as a distractor (set per run)
        self.goals = GoalRule(judge, rules.goals)  # a stated goal may settle a tie (opt-in)

    # distractors ---------------------------------------------------------------------------

    def _adjacent(self, target: str) -> set[str]:
        near = {a["subject_id"] for a in self.kg.incoming.get(target, ())}
        near |= {a["object_id"] for a in self.kg.outgoing.get(target, ())}
        return near - {target}

    def _sibling(self, intervention: str, target: str, population: str) -> bool:
        """Qualified for another outcome of the target's declared family: a poor distractor."""
        family = {m for g in self.rules.outcome_groups if target in g for m in g} - {target}
        return any(self.judge.judge(intervention, o, population).qualified for o in family)

    def pool(self, inst: Instance) -> tuple[Distractor, ...]:
        """Eligible distractors for an instance, best tier first (ties by id)."""
        key = (inst.target, inst.population, inst.conditions, inst.core, inst.marker_actors)
        if key in self._pools:
            return self._pools[key]
        taken_classes = {c for s in inst.core for c in self.kg.kinds(s)}
        out: list[Distractor] = []
        for d, tier, adds in self._judged(inst.target, inst.population, inst.conditions):
            if d in inst.core or taken_classes & self.kg.kinds(d):
                continue
            if d in inst.marker_actors:
                tier = 0
            elif tier is None:
                continue
            if self._sibling(d, inst.target, inst.population):
                tier = self.LAST_RESORT
            out.append(Distractor(d, tier, adds))
        self._pools[key] = tuple(sorted(out, key=lambda x: (x.tier, x.intervention)))
        return self._pools[key]

    def _judged(
        self, target: str, population: str | None, conditions: tuple[str, ...]
    ) -> tuple[tuple[str, int | None, tuple[str, ...]], ...]:
        """Every intervention that may be offered for this target, population and patient, with
        its plausibility tier (None: plausible only as a marker actor) and the finding it
        needs. It depends on neither the instance's own options nor its marker actors, so the
        thousands of instances of a run share a few hundred of these (the example domain: 416 for 6,260
        pools); `pool` only filters and re-tiers it."""
        key = (target, population, conditions)
        if key in self._judged_cache:
            return self._judged_cache[key]
        targets = set(self.rules.target_classes)
        adjacent = self._adjacent(target)
        findings = set(conditions)
        out: list[tuple[str, int | None, tuple[str, ...]]] = []
        for d in self.kg.interventions:
            judged = self.judge.judge(d, target, population, conditions)
            status = judged.status
            if status not in (*UNQUALIFIED, CONTRAINDICATED) or not judged.known:
                continue  # an option the graph is silent about is never offered
            # A treatment for a finding the patient lacks only makes sense once she has it.
            treated = self.clinical.treats(d)
            adds = treated if treated and not set(treated) & findings else ()
            if adds and status == CONTRAINDICATED:
                continue
            reach = self.clinical.reach(d, population)
            tier: int | None = None
            if self._real_trap(judged) or self.clinical.indicated_for(d, findings, population):
                tier = 1
            elif (
                status == CONTRAINDICATED  # a trap that only restates who the patient is
                or reach & adjacent
                or any(self.kg.category(e) in targets for e in reach)
            ):
                tier = 2
            out.append((d, tier, tuple(adds[:1])))
        self._judged_cache[key] = tuple(out)
        return self._judged_cache[key]

    def _real_trap(self, verdict: Judgement) -> bool:
        """A contraindication is a real trap unless every finding it hits is declared a mere
        restatement of the patient's state (`trap: false`: a second anticoagulant for a patient
        already on one), never for a fetotoxic drug in pregnancy."""
        if verdict.status != CONTRAINDICATED:
            return False
        return any(
            (self.rules.entity_profiles.get(f) or {}).get("trap", True) for f in verdict.findings
        )

    def _open(self, d: Distractor) -> bool:
        return self.cap is None or self.used[d.intervention] < self.cap

    def feasible(self, inst: Instance) -> bool:
        """The pattern's own non-gold options are within the share cap, and there are enough
        distractors of distinct classes (within the cap) for the smallest candidate set."""
        if self.cap is not None and any(self.used[f] >= self.cap for f in inst.fixed):
            return False
        seen: set[str] = set()
        distinct = 0
        for d in self.pool(inst):
            own = self.kg.kinds(d.intervention)
            if self._open(d) and not own & seen:
                distinct += 1
                seen |= own
        return len(inst.core) + distinct >= self.rules.candidates[0]

    def candidates(self, inst: Instance, rng: random.Random) -> tuple[list[str], tuple[str, ...]]:
        """The pattern's options and seeded distractors, shuffled; and the findings the chosen
        distractors need the patient to have."""
        low, high = self.rules.candidates
        pool = [d for d in self.pool(inst) if self._open(d)]
        total = rng.randint(max(low, len(inst.core)), max(high, len(inst.core)))
        usual = sum(1 for d in pool if d.tier < self.LAST_RESORT)
        need = max(low - len(inst.core), min(total - len(inst.core), usual))
        need = max(0, min(need, len(pool)))
        rng.shuffle(pool)
        pool.sort(key=lambda d: (d.tier, self.used[d.intervention]))  # stable: ties stay random
        picked: list[Distractor] = []
        classes: set[str] = set()
        for d in pool:  # two distractors of one class would be one option twice
            own = self.kg.kinds(d.intervention)
            if len(picked) < need and not own & classes:
                picked.append(d)
                classes |= own
        chosen = [*inst.core, *(d.intervention for d in picked)]
        rng.shuffle(chosen)
        adds = tuple(dict.fromkeys(f for d in picked for f in d.adds))
        return chosen, adds

    def commit(self, inst: Instance, candidates: list[str]) -> None:
        """Count the distractors of a scenario that is kept."""
        self.used.update(c for c in candidates if c != inst.preferred)

    # gold ----------------------------------------------------------------------------------

    def verdicts(
        self, inst: Instance, candidates: list[str], conditions: tuple[str, ...]
    ) -> dict[str, Judgement]:
        """Every candidate judged for the final patient; raises GoldError when the item no
        longer stands (the preferred does not qualify, or another candidate does)."""
        out = {c: self.judge.judge(c, inst.target, inst.population, conditions) for c in candidates}
        unknown = sorted(c for c, j in out.items() if not j.known)
        if unknown:  # silence is not evidence: such an item is never built
            raise GoldError(f"unknown evidence status for {', '.join(unknown)}")
        qualified = sorted(c for c, j in out.items() if j.qualified)
        wanted = [inst.preferred] if inst.preferred else []
        settled = self.goals.resolve(qualified, inst.population, conditions)
        if settled is not None:  # a stated goal settles the tie; the others stay acceptable
            qualified = [settled.preferred]
        if qualified != wanted:
            raise GoldError(
                f"qualified candidates {qualified or 'none'}, expected {wanted or 'none'}"
            )
        return out

    def own_sources(self, assertion_id: str, preferred: str) -> tuple[str, ...]:
        """Sources of a path edge that speak for the preferred: never a study of another drug,
        never a trial behind a physiology edge (guidelines, reviews, cohorts of exposures stay)."""
        a = self.kg.assertions[assertion_id]
        keep = []
        for e in self.kg.supports.get(assertion_id, ()):
            ev = self.kg.evidence[e]
            physiology = a["subject_id"] not in (*self.kg.interventions, *self.kg.group_ids)
            if ev["source_type"] == "trial" and physiology:
                continue
            if ev.get("studied_interventions") and not self.kg.study_covers(e, preferred):
                continue
            keep.append(e)
        return tuple(keep)

    def gold(
        self, inst: Instance, candidates: list[str], conditions: tuple[str, ...]
    ) -> dict[str, Any]:
        verdicts = self.verdicts(inst, candidates, conditions)
        contraindications = sorted({i for j in verdicts.values() for i in j.contraindications})
        qualified = sorted(c for c, j in verdicts.items() if j.qualified)
        settled = self.goals.resolve(qualified, inst.population, conditions)
        justification = {
            "rules": RULES_VERSION,
            "candidates": [self._judgement(inst, c, verdicts[c], settled) for c in candidates],
        }
        if inst.preferred is None:
            return {
                "preferred_intervention": None,
                "acceptable_interventions": [],
                "outcome_assertion_ids": [],
                "causal_path_assertion_ids": [],
                "causal_paths": [],
                "adverse_effect_assertion_ids": [],
                "contraindication_assertion_ids": contraindications,
                "evidence_source_ids": [],
                "expects_uncertainty": self.rules.uncertainty.abstention,
                "justification": justification,
            }
        best = verdicts[inst.preferred]
        claims = best.claims
        tied = settled.acceptable if settled is not None else ()
        goal_claims = settled.served.claims if settled is not None else ()
        others = set(candidates) - {inst.preferred}
        classes = sorted(
            c
            for c in self.kg.classes_of.get(inst.preferred, ())
            if c in self.kg.homogeneous
            and not others & set(self.kg.classes[c]["member_ids"])
            and all(  # a class is acceptable only where every member is an answer here
                self.judge.judge(m, inst.target, inst.population, conditions).qualified
                for m in self.kg.classes[c]["member_ids"]
            )
        )
        path = list(inst.path.ids) if inst.path else []
        paths = self.causal_paths(inst)
        evidence = {e for c in (*claims, *goal_claims) for e in c.qualifying}
        # every gold chain is equally gold, so each one's sources are cited, not the first's only
        on_paths = {i for chain in (path, *paths) for i in chain}
        evidence |= {e for i in on_paths for e in self.own_sources(i, inst.preferred)}
        return {
            "preferred_intervention": inst.preferred,
            "acceptable_interventions": [inst.preferred, *tied, *classes],
            "outcome_assertion_ids": [c.assertion_id for c in (*claims, *goal_claims)],
            "causal_path_assertion_ids": path,
            "causal_paths": paths,
            "adverse_effect_assertion_ids": list(self.clinical.adverse_effects(inst.preferred)),
            "contraindication_assertion_ids": contraindications,
            "evidence_source_ids": sorted(evidence),
            "expects_uncertainty": bool(self.uncertainty(claims)),
            "justification": justification,
        }

    def uncertainty(self, claims: tuple[Any, ...]) -> list[str]:
        """Why the preferred's support leaves a correct answer uncertain (empty: it does not).
        The guideline links of its qualifying claims decide, by the domain's declared
        `uncertainty` rule: the best class is a weak one (2b), every level is a weak one (C
        only), or guidelines disagree on the class."""
        rule = self.rules.uncertainty
        why: list[str] = []
        links = [
            link
            for c in claims
            for link in self.kg.links.get(c.assertion_id, ())
            if link.get("recommendation_class") in rule.class_order
        ]
        if not links:
            return why
        classes = {link["recommendation_class"] for link in links}
        best = min(classes, key=rule.class_order.index)
        if best in rule.weak_classes:
            why.append(f"best recommendation {best}")
        levels = {link.get("level_of_evidence") or "" for link in links}
        if rule.weak_levels and levels <= set(rule.weak_levels):
            why.append("weak levels only: " + ", ".join(sorted(levels)))
        distinct_sources = len({link["evidence_id"] for link in links}) > 1
        if rule.guideline_conflict and len(classes) > 1 and distinct_sources:
            why.append("guidelines disagree: " + ", ".join(sorted(classes)))
        return why

    @cached_property
    def _every_shape(self) -> ChainFinder:
        """Chains as the condition section shows them, whatever the declared gold shapes."""
        return ChainFinder(self.kg)

    def causal_paths(self, inst: Instance) -> list[list[str]]:
        """Every validated chain of the category's kind from the preferred to the target that
        holds in the population, all equally gold: the instance's own path, and where it runs
        through intermediates, every other chain through intermediates (a one-step path is the
        outcome claim itself, and stays alone). Listed shortest first, then by ids: a listing
        order, not a preference."""
        if inst.path is None or inst.preferred is None:
            return []
        found = {inst.path.ids}
        if inst.path.hops > 1:
            rule = self.rules.category(inst.category).path
            for finder in (self.clinical.finder, self._every_shape):
                for c in finder.chains(inst.preferred, inst.target, rule):
                    valid = all(self.kg.assertions[i]["validated"] for i in c.ids)
                    if c.hops > 1 and valid and self.clinical.applies(c, inst.population):
                        found.add(c.ids)
        return [list(ids) for ids in sorted(found, key=lambda ids: (len(ids), ids))]

    def _apply_goal(
        self, entry: dict[str, Any], candidate: str, settled: Resolution, target: str
    ) -> None:
        """How a stated goal changes a qualified candidate's entry: the preferred names the goal
        and the claims that serve it; an equally qualified rival is acceptable and says why it
        is not preferred (issue 29 item 5)."""
        goal = lower_name(self.kg.name_of(settled.goal.finding))
        outcome = lower_name(self.kg.name_of(settled.goal.outcome))
        if candidate == settled.preferred:
            served = settled.served
            assert served.claim is not None
            entry["assertion_ids"] += [c.assertion_id for c in served.claims]
            entry["evidence_source_ids"] = sorted(
                {*entry["evidence_source_ids"], *(e for c in served.claims for e in c.qualifying)}
            )
            entry["finding_ids"] = [settled.goal.finding]
            rivals = ", ".join(self.kg.name_of(c) for c in settled.acceptable)
            entry["summary"] += (
                f" Equally qualified for {target} ({rivals}, also acceptable), it is preferred "
                f"for the patient's stated goal, {goal}: it is shown to lower {outcome} "
                f"({served.claim.assertion_id}: {served.claim.describe(self.kg)})."
            )
        elif candidate in settled.acceptable:
            preferred = self.kg.name_of(settled.preferred)
            entry["verdict"] = "acceptable"
            entry["finding_ids"] = [settled.goal.finding]
            entry["summary"] += (
                f" It is acceptable; {preferred}, equally qualified, is preferred because only "
                f"it has qualifying evidence for the patient's stated goal, {goal} (lowering "
                f"{outcome})."
            )

    def _judgement(
        self, inst: Instance, candidate: str, j: Judgement, settled: Resolution | None = None
    ) -> dict[str, Any]:
        """One candidate's gold entry: preferred with the claims that qualify it (and what a
        stated goal changes), or excluded with its reason and the evidence that excludes it."""
        name = self.kg.name_of(candidate)
        target = lower_name(self.kg.name_of(inst.target))
        entry: dict[str, Any] = {"intervention_id": candidate}
        if j.status == QUALIFIED:
            claim = j.claim
            assert claim is not None
            # without a population the claims speak for every patient: no qualifier to name
            scope = f" in {lower_name(self.kg.name_of(inst.population))}" if inst.population else ""
            entry.update(
                verdict="preferred",
                reason="outcome_evidence",
                assertion_ids=[c.assertion_id for c in j.claims],
                evidence_source_ids=sorted({e for c in j.claims for e in c.qualifying}),
                finding_ids=[],
                strength=claim.describe(self.kg),
                summary=(
                    f"{name} is shown to lower {target}{scope} "
                    f"({claim.assertion_id}: {claim.describe(self.kg)})."
                ),
            )
            if settled is not None:
                self._apply_goal(entry, candidate, settled, target)
            return entry
        entry["verdict"] = "excluded"
        entry["reason"] = j.status
        this = "in this population" if inst.population else "for this patient"
        entry.update(self._exclusion(inst, candidate, j, name, f"{target} {this}"))
        return entry

    def _exclusion(
        self, inst: Instance, candidate: str, j: Judgement, name: str, target: str
    ) -> dict[str, Any]:
        """Why an excluded candidate is excluded, as the ids that show it and a sentence
        (`target`: the target outcome with its population qualifier); the reason too where
        it is the judgement's basis rather than its status (an evidence gap, no indication)."""
        if j.status == CONTRAINDICATED:
            found = ", ".join(lower_name(self.kg.name_of(f)) for f in j.findings)
            return dict(
                assertion_ids=list(j.contraindications),
                evidence_source_ids=list(self.clinical.evidence_for(j.contraindications)),
                finding_ids=list(j.findings),
                summary=f"{name} is contraindicated for this patient ({found}; "
                + ", ".join(j.contraindications)
                + ").",
            )
        if j.status in ("null_evidence", "harm_evidence", "contested_evidence"):
            words = {
                "null_evidence": "was tested and not shown to lower",
                "harm_evidence": "was shown to increase",
                "contested_evidence": "has contested evidence on",
            }[j.status]
            return dict(
                assertion_ids=list(j.blocking),
                evidence_source_ids=list(self.clinical.evidence_for(j.blocking)),
                finding_ids=[],
                summary=f"{name} {words} {target} (" + ", ".join(j.blocking) + ").",
            )
        if j.basis == EVIDENCE_GAP:
            assert j.gap is not None
            return dict(
                reason=EVIDENCE_GAP,
                assertion_ids=[],
                evidence_source_ids=[j.gap["evidence_id"]],
                finding_ids=[],
                summary=(
                    f"{name} has no outcome trial or recommendation for {target} "
                    f"({j.gap['evidence_id']}: {j.gap['note']})"
                ),
            )
        if j.weak:
            below = "; ".join(f"{aid}: {why}" for aid, why in j.weak)
            cited = [r.assertion_id for r in j.recommendations]  # named in the text too
            return dict(
                assertion_ids=list(dict.fromkeys([*(aid for aid, _ in j.weak), *cited])),
                evidence_source_ids=sorted(
                    {
                        *self.clinical.evidence_for(a for a, _ in j.weak),
                        *(r.evidence_id for r in j.recommendations),
                    }
                ),
                finding_ids=[],
                summary=f"{name}'s outcome evidence for {target} does not meet the bar ({below}).",
            )
        if j.basis == NOT_INDICATED:
            where = ", ".join(lower_name(self.kg.name_of(i)) for i in j.indications)
            sources = sorted({s.evidence_id for s in self.judge.indication_scopes(candidate)})
            return dict(
                reason=NOT_INDICATED,
                assertion_ids=[],
                evidence_source_ids=sources,
                finding_ids=list(j.indications),
                summary=(
                    f"{name} is not indicated for this patient: its indications ({where}; "
                    f"{', '.join(sources)}) are not among the patient's conditions."
                ),
            )
        # unreachable for a built item (verdicts() refuses unknown statuses)
        return self._chain_only(inst, candidate, name, target)

    def _chain_only(self, inst: Instance, candidate: str, name: str, target: str) -> dict[str, Any]:
        """A candidate with no outcome evidence: at most a chain through intermediate effects,
        which does not make it an answer."""
        chains = [
            c
            for c in self.clinical.chains(
                candidate, inst.target, self.rules.distractor_exclusion, inst.population
            )
            if c.hops > 1
        ]
        via = chains[0].ids if chains else ()
        return dict(
            assertion_ids=list(via),
            evidence_source_ids=[],
            finding_ids=[],
            summary=(
                f"{name} has no outcome evidence for {target}"
                + (
                    f"; its chain ({' -> '.join(via)}) runs through intermediate effects "
                    "and does not make it an answer."
                    if via
                    else "."
                )
            ),
        )

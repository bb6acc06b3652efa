"""The generic graph patterns a category rule can name, each yielding scenario instances.

An instance is everything a pattern decides: the preferred intervention (None when the answer
is to abstain), the target outcome, the population, the explanatory path, the anchor
assertions, the findings the patient must have and the candidates the pattern itself requires
(a contraindicated option, a competitor that only has a surrogate chain). Distractors, the
patient and the wording are filled in later, the same way for all patterns.

Every pattern asks one judge (`evidence.OutcomeJudge`) whether an intervention is the answer
for the patient: the preferred must qualify through outcome evidence; the candidates a pattern
adds must not. The path is the preferred's mechanism (or its own outcome claim), an
explanation, never the reason it is correct.

Patterns (ScenarioPattern in spec/declarations.yaml):
  causal_chain       a qualified preferred, explained by a chain (via/avoid classes)
  multiple_pathways  a qualified preferred with several distinct chains to the target
  association        the patient has a marker associated (not causally) with the target
  competing          a qualified preferred against options with a surrogate chain only
  contraindication   an option that would qualify is contraindicated for this patient
  adverse_effect     a qualified preferred with an adverse effect the graph explains
  weak_evidence      no candidate qualifies: the answer is to abstain
  goal_tie           two candidates qualify for the target; the patient states a goal that
                     only the preferred has qualifying evidence for (the other is acceptable)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .chains import Chain, ChainFinder
from .clinical import Clinical
from .evidence import CONTRAINDICATED, QUALIFIED, Judgement, OutcomeJudge
from .goals import GoalRule
from .rules import CategoryRule, Rules


def population_order(population: str | None) -> tuple[bool, str]:
    """Sort key of populations: none (a domain without populations) first, then by id."""
    return (population is not None, population or "")


# Statuses of an option that is tempting but not the answer (never contraindicated).
UNQUALIFIED = ("no_outcome_evidence", "null_evidence", "harm_evidence", "contested_evidence")


@dataclass(frozen=True)
class Instance:
    category: str
    preferred: str | None  # None: no candidate is adequately supported (abstain)
    target: str
    population: str | None  # None: the domain declares no population for it
    path: Chain | None
    anchors: tuple[str, ...]
    conditions: tuple[str, ...]  # the patient's findings (entity ids), population's included
    fixed: tuple[str, ...] = ()  # candidates the pattern requires besides the preferred
    marker_actors: tuple[str, ...] = ()  # distractors acting on an associated marker
    expects_uncertainty: bool = False
    focus: str | None = None  # the finding the item turns on (titles name it)
    group: str = ""  # instances of one group are spread out when picking
    key: tuple = ()  # two instances with one key would be a repeat

    @property
    def core(self) -> tuple[str, ...]:
        return (*((self.preferred,) if self.preferred else ()), *self.fixed)


class Patterns:
    """Pattern kinds, bound to one graph and one domain's rules."""

    def __init__(
        self, finder: ChainFinder, clinical: Clinical, judge: OutcomeJudge, rules: Rules
    ) -> None:
        self.finder = finder
        self.kg = finder.kg
        self.clinical = clinical
        self.judge = judge
        self.rules = rules
        self.goals = GoalRule(judge, rules.goals)

    def instances(self, rule: CategoryRule) -> list[Instance]:
        kinds: dict[str, Callable[[CategoryRule], Iterator[Instance]]] = {
            "causal_chain": self.causal_chain,
            "multiple_pathways": self.multiple_pathways,
            "association": self.association,
            "competing": self.competing,
            "contraindication": self.contraindication,
            "adverse_effect": self.adverse_effect,
            "weak_evidence": self.weak_evidence,
            "goal_tie": self.goal_tie,
        }
        return list(kinds[rule.pattern](rule))

    # shared steps ------------------------------------------------------------------------------

    def targets(self, rule: CategoryRule) -> list[str]:
        kinds = set(rule.target_classes or self.rules.target_classes)
        return sorted(e for e, ent in self.kg.entities.items() if ent["category"] in kinds)

    def settings(self, start: str, target: str) -> list[str]:
        """Populations a scenario about (start, target) may be set in."""
        return [
            p
            for p in self.clinical.populations_for(start, target)
            if (p in self.rules.populations or p == self.rules.default_population)
            and self.clinical.target_allowed(target, p)
            and target not in self.clinical.implied_conditions(p)
        ]

    def conditions(
        self, preferred: str | None, population: str, findings: tuple[str, ...]
    ) -> tuple[str, ...]:
        """Population-implied findings, the pattern's findings, what the preferred treats,
        then the preferred's indication (a guideline-supported one first)."""
        out = [*self.clinical.implied_conditions(population), *findings]
        if preferred:
            out += self.clinical.treats(preferred)
            indications = sorted(
                self.clinical.indications(preferred, population),
                key=lambda a: (not self.clinical.guideline_supported(a), a["assertion_id"]),
            )
            if indications:
                out.append(indications[0]["object_id"])
        return tuple(dict.fromkeys(out))

    def verdict(
        self, intervention: str, target: str, population: str, conditions: tuple[str, ...]
    ) -> Judgement:
        return self.judge.judge(intervention, target, population, conditions)

    def explanation(self, chains: list[Chain], judgement: Judgement, target: str) -> Chain:
        """The gold path among the admissible chains: the preferred's own outcome claim when
        the ranking puts it first and it is one of them, else the best-ranked chain."""
        claim = judgement.claim
        if "outcome_claim_first" in self.rules.path_ranking and claim is not None:
            direct = next((c for c in chains if c.ids == (claim.assertion_id,)), None)
            if direct is not None:
                return direct
        return chains[0]

    def via_findings(self, chain: Chain, rule: CategoryRule) -> tuple[str, ...]:
        """Intermediate nodes of the required classes that a patient can have (a risk factor,
        not a biological process): the mediators the patient has."""
        kinds = set(rule.path.via_classes) & set(self.rules.finding_classes)
        return tuple(n for n in chain.intermediates if self.kg.category(n) in kinds)

    def admissible(self, inst: Instance) -> bool:
        implied = self.clinical.implied_conditions(inst.population)
        return inst.target not in implied and self.clinical.target_allowed(
            inst.target, inst.population
        )

    def _qualified_with_chain(
        self, rule: CategoryRule, start: str, target: str, pop: str, findings: tuple[str, ...] = ()
    ) -> tuple[Chain, Judgement, tuple[str, ...]] | None:
        """A qualified start explained by a chain of the rule's kind, with its patient's
        findings; None when either is missing."""
        chains = self.clinical.chains(start, target, rule.path, pop)
        if not chains:
            return None
        first = chains[0]
        conditions = self.conditions(start, pop, (*findings, *self.via_findings(first, rule)))
        judgement = self.verdict(start, target, pop, conditions)
        if not judgement.qualified:
            return None
        return self.explanation(chains, judgement, target), judgement, conditions

    # patterns ----------------------------------------------------------------------------------

    def causal_chain(self, rule: CategoryRule) -> Iterator[Instance]:
        for start in self.kg.interventions:
            for target in self.targets(rule):
                for pop in self.settings(start, target):
                    found = self._qualified_with_chain(rule, start, target, pop)
                    if found is None:
                        continue
                    chain, _judgement, conditions = found
                    via = self.via_findings(chain, rule)
                    yield Instance(
                        rule.category,
                        start,
                        target,
                        pop,
                        chain,
                        chain.ids,
                        conditions,
                        expects_uncertainty=rule.expects_uncertainty,
                        focus=(via or (None,))[0],
                        group=start,
                        key=(start, target),
                    )

    def multiple_pathways(self, rule: CategoryRule) -> Iterator[Instance]:
        for start in self.kg.interventions:
            for target in self.targets(rule):
                for pop in self.settings(start, target):
                    found = self._qualified_with_chain(rule, start, target, pop)
                    if found is None:
                        continue
                    chain, _judgement, conditions = found
                    routes: dict[str, Chain] = {}
                    for c in self.clinical.chains(start, target, rule.pathways or rule.path, pop):
                        if c.hops > 1:
                            routes.setdefault(c.nodes[-2], c)  # distinct final mediators
                    if len(routes) < rule.min_pathways:
                        continue
                    anchors = tuple(dict.fromkeys(i for c in routes.values() for i in c.ids))
                    yield Instance(
                        rule.category,
                        start,
                        target,
                        pop,
                        chain,
                        anchors,
                        conditions,
                        expects_uncertainty=rule.expects_uncertainty,
                        group=start,
                        key=(start, target),
                    )

    def _anchors(self, rule: CategoryRule) -> Iterator[dict]:
        assert rule.anchor is not None  # the compiler requires it for anchored patterns
        for a in self.kg.graph["assertions"]:
            if rule.anchor.matches(a, self.kg.role(a), self.kg.category(a["subject_id"])):
                yield a

    def _subjects(self, anchor: dict) -> tuple[str, ...]:
        """The interventions an anchor speaks about: its subject, or a class claim's members."""
        if anchor["subject_id"] in self.kg.group_ids:
            return tuple(anchor.get("member_ids") or ())
        return (anchor["subject_id"],)

    def association(self, rule: CategoryRule) -> Iterator[Instance]:
        for anchor in self._anchors(rule):
            marker, target = anchor["subject_id"], anchor["object_id"]
            if target not in self.targets(rule) or marker in self.kg.interventions:
                continue
            for start in self.kg.interventions:
                for pop in self.settings(start, target):
                    if not self.judge.holds_in(anchor, pop):
                        continue
                    chains = [
                        c
                        for c in self.clinical.chains(start, target, rule.path, pop)
                        if marker not in c.nodes
                    ]
                    if not chains:
                        continue
                    conditions = self.conditions(start, pop, (marker,))
                    judgement = self.verdict(start, target, pop, conditions)
                    if not judgement.qualified:
                        continue
                    actors = tuple(
                        d
                        for d in self.kg.interventions
                        if d != start
                        and self.finder.reaches(d, marker, self.rules.distractor_exclusion)
                        and self.verdict(d, target, pop, conditions).status in UNQUALIFIED
                    )
                    chain = self.explanation(chains, judgement, target)
                    yield Instance(
                        rule.category,
                        start,
                        target,
                        pop,
                        chain,
                        (anchor["assertion_id"],),
                        conditions,
                        marker_actors=actors if rule.marker_distractor else (),
                        expects_uncertainty=rule.expects_uncertainty,
                        focus=marker,
                        group=anchor["assertion_id"],
                        key=(anchor["assertion_id"], start),
                    )

    def competing(self, rule: CategoryRule) -> Iterator[Instance]:
        """A qualified option against options with a validated chain to the target (so they
        look as if they work) but no outcome evidence, or a null or harm result, for it."""
        low, high = rule.competitors
        high = min(high, self.rules.candidates[1])
        for target in self.targets(rule):
            pops = sorted(
                {p for s in self.kg.interventions for p in self.settings(s, target)},
                key=population_order,
            )  # None (a claim for every patient, no default population) sorts first
            for pop in pops:
                implied = self.clinical.implied_conditions(pop)
                surrogate = [
                    s
                    for s in self.kg.interventions
                    if self.clinical.chains(s, target, rule.path, pop)
                    and self.verdict(s, target, pop, self.conditions(None, pop, implied)).status
                    in UNQUALIFIED
                ]
                for start in self.kg.interventions:
                    found = self._qualified_with_chain(rule, start, target, pop)
                    if found is None:
                        continue
                    chain, _, base = found
                    for k in range(max(1, low - 1), high):
                        for group in itertools.combinations(surrogate, k):
                            inst = self._competition(rule, target, pop, start, chain, base, group)
                            if inst is not None:
                                yield inst

    def _competition(
        self,
        rule: CategoryRule,
        target: str,
        pop: str,
        start: str,
        chain: Chain,
        base: tuple[str, ...],
        group: tuple[str, ...],
    ) -> Instance | None:
        options = (start, *group)
        classes = [self.kg.kinds(s) for s in options]
        if any(a & b for a, b in itertools.combinations(classes, 2)):
            return None  # two options of one class are not a choice between interventions
        # What the competitors treat, the patient has: offering them must make sense.
        conditions = tuple(
            dict.fromkeys([*base, *(f for s in group for f in self.clinical.treats(s))])
        )
        if not self.verdict(start, target, pop, conditions).qualified:
            return None
        if any(self.verdict(s, target, pop, conditions).status not in UNQUALIFIED for s in group):
            return None
        rivals = [self.clinical.chains(s, target, rule.path, pop)[0] for s in group]
        anchors = tuple(dict.fromkeys(i for c in (chain, *rivals) for i in c.ids))
        return Instance(
            rule.category,
            start,
            target,
            pop,
            chain,
            anchors,
            conditions,
            fixed=group,
            expects_uncertainty=rule.expects_uncertainty,
            group=start,
            key=(target, pop, options),
        )

    def contraindication(self, rule: CategoryRule) -> Iterator[Instance]:
        """An option that would be the answer is contraindicated by a finding the patient has;
        the preferred is a qualified alternative that is not."""
        for anchor in self._anchors(rule):
            finding = anchor["object_id"]
            for ruled in self._subjects(anchor):
                ruled_classes = self.kg.kinds(ruled)
                for target in self.targets(rule):
                    for pop in self.settings(ruled, target):
                        if not self.judge.holds_in(anchor, pop):
                            continue  # the contraindication is stated for another population
                        tempting = self.verdict(ruled, target, pop, self.conditions(None, pop, ()))
                        if not tempting.qualified:
                            continue  # the ruled-out option would not be the answer anyway
                        for start in self.kg.interventions:
                            if start == ruled or ruled_classes & self.kg.kinds(start):
                                continue
                            inst = self._ruled_out(rule, anchor, ruled, finding, target, pop, start)
                            if inst is not None:
                                yield inst

    def _ruled_out(
        self,
        rule: CategoryRule,
        anchor: dict,
        ruled: str,
        finding: str,
        target: str,
        pop: str,
        start: str,
    ) -> Instance | None:
        found = self._qualified_with_chain(rule, start, target, pop, (finding,))
        if found is None:
            return None
        chain, _, conditions = found
        if self.verdict(ruled, target, pop, conditions).status != CONTRAINDICATED:
            return None
        return Instance(
            rule.category,
            start,
            target,
            pop,
            chain,
            (anchor["assertion_id"],),
            conditions,
            fixed=(ruled,),
            expects_uncertainty=rule.expects_uncertainty,
            focus=finding,
            group=anchor["assertion_id"],
            key=(anchor["assertion_id"], ruled, target, start),
        )

    def adverse_effect(self, rule: CategoryRule) -> Iterator[Instance]:
        for anchor in self._anchors(rule):
            effect = anchor["object_id"]
            for start in self._subjects(anchor):
                mechanism: tuple[str, ...] = ()
                if rule.mechanism is not None:
                    chains = self.finder.chains(start, effect, rule.mechanism)
                    best = self.finder.best(chains, self.rules.path_ranking)
                    if best is None:
                        continue
                    mechanism = best.ids
                salient = self._salient(effect, rule)
                findings = tuple(
                    f for f in salient if not self.clinical.contraindications(start, (f,))
                )[:1]
                for target in self.targets(rule):
                    for pop in self.settings(start, target):
                        found = self._qualified_with_chain(rule, start, target, pop, findings)
                        if found is None:
                            continue
                        chain, _, conditions = found
                        yield Instance(
                            rule.category,
                            start,
                            target,
                            pop,
                            chain,
                            (anchor["assertion_id"], *mechanism),
                            conditions,
                            expects_uncertainty=rule.expects_uncertainty,
                            focus=(findings or (None,))[0],
                            group=anchor["assertion_id"],
                            key=(anchor["assertion_id"], start, target),
                        )

    def _salient(self, effect: str, rule: CategoryRule) -> tuple[str, ...]:
        """Findings of the declared classes with a causal or associative link to the effect."""
        kinds = set(rule.salient_classes)
        return tuple(
            sorted(
                {
                    a["subject_id"]
                    for a in self.kg.incoming.get(effect, ())
                    if self.kg.role(a) in ("causal", "associative")
                    and self.kg.category(a["subject_id"]) in kinds
                }
            )
        )

    def weak_evidence(self, rule: CategoryRule) -> Iterator[Instance]:
        """No candidate is adequately supported: each has at most a weak or unvalidated chain
        to the target, or a null, harm or contested result; the answer is to abstain."""
        low = self.rules.candidates[0]
        for target in self.targets(rule):
            pops = sorted(
                {p for s in self.kg.interventions for p in self.settings(s, target)}
                | {self.rules.default_population},
                key=population_order,
            )  # populations without a profile never host a scenario (see settings)
            for pop in pops:
                if target in self.clinical.implied_conditions(pop) or not (
                    self.clinical.target_allowed(target, pop)
                ):
                    continue
                base = self.conditions(None, pop, ())
                tempting: dict[str, tuple[str, ...]] = {}
                for s in self.kg.interventions:
                    judgement = self.verdict(s, target, pop, base)
                    if judgement.status not in UNQUALIFIED:
                        continue
                    weak = [
                        c
                        for c in self.clinical.chains(s, target, rule.path, pop)
                        if any(self.clinical.is_weak(i) for i in c.ids)
                    ]
                    reasons = (*judgement.blocking, *(weak[0].ids if weak else ()))
                    if reasons:
                        tempting[s] = tuple(dict.fromkeys(reasons))
                for group in itertools.combinations(sorted(tempting), low):
                    classes = [self.kg.kinds(s) for s in group]
                    if any(a & b for a, b in itertools.combinations(classes, 2)):
                        continue
                    conditions = tuple(
                        dict.fromkeys([*base, *(f for s in group for f in self.clinical.treats(s))])
                    )
                    if any(
                        self.verdict(s, target, pop, conditions).status not in UNQUALIFIED
                        for s in group
                    ):
                        continue
                    anchors = tuple(dict.fromkeys(i for s in group for i in tempting[s]))
                    yield Instance(
                        rule.category,
                        None,
                        target,
                        pop,
                        None,
                        anchors,
                        conditions,
                        fixed=group,
                        expects_uncertainty=True,
                        group=f"{target}/{pop}",
                        key=(target, pop, group),
                    )

    def goal_tie(self, rule: CategoryRule) -> Iterator[Instance]:
        """Two candidates of different classes, each qualified for the target by its own
        outcome evidence, and a patient who states a goal (a declared goal finding) that only
        the preferred has qualifying evidence for: the goal settles the tie (goals.py), and the
        rival stays acceptable. Without the goal the item would be dropped as a tie."""
        for target in self.targets(rule):
            pops = sorted(
                {p for s in self.kg.interventions for p in self.settings(s, target)},
                key=population_order,
            )
            for goal in self.goals.goals:
                if goal.outcome == target:
                    continue  # the goal would be the target itself: no tie to settle
                for pop in pops:
                    for start in self.kg.interventions:
                        found = self._qualified_with_chain(
                            rule, start, target, pop, (goal.finding,)
                        )
                        if found is None:
                            continue
                        chain, _, base = found
                        for rival in self.kg.interventions:
                            inst = self._goal_rival(rule, target, pop, start, chain, base, rival)
                            if inst is not None:
                                yield inst

    def _goal_rival(
        self,
        rule: CategoryRule,
        target: str,
        pop: str,
        start: str,
        chain: Chain,
        base: tuple[str, ...],
        rival: str,
    ) -> Instance | None:
        if rival == start or self.kg.kinds(start) & self.kg.kinds(rival):
            return None  # one option twice is no choice
        conditions = tuple(dict.fromkeys([*base, *self.clinical.treats(rival)]))
        if not all(self.verdict(s, target, pop, conditions).qualified for s in (start, rival)):
            return None
        settled = self.goals.resolve(sorted((start, rival)), pop, conditions)
        if settled is None or settled.preferred != start:
            return None
        goal = settled.goal
        anchors = tuple(
            dict.fromkeys([*chain.ids, *(c.assertion_id for c in settled.served.claims)])
        )
        return Instance(
            rule.category,
            start,
            target,
            pop,
            chain,
            anchors,
            conditions,
            fixed=(rival,),
            expects_uncertainty=rule.expects_uncertainty,
            focus=goal.finding,
            group=start,
            key=(target, pop, start, rival, goal.finding),
        )


__all__ = ["QUALIFIED", "Instance", "Patterns"]

"""The generic graph patterns a category rule can name, each yielding scenario instances.

An instance is everything a pattern decides: the preferred intervention, the target outcome,
the population, the gold path, the anchor assertions, the findings the patient must have and
any candidates the pattern itself requires (a contraindicated option, competing options).
Distractors, the patient's profile and the wording are filled in later, the same way for all
patterns. Every pattern enumerates its matches in a deterministic order; the generator picks
among them with the seeded random generator.

Patterns (ScenarioPattern in spec/declarations.yaml):
  causal_chain       the preferred intervention's chain to the target (via/avoid classes)
  multiple_pathways  several distinct chains of the preferred intervention to the target
  association        a non-causal association with the target; the preferred acts causally
  competing          several candidates with adequate chains; the declared tie-break decides
  contraindication   a candidate with a chain to the target is ruled out for this patient
  adverse_effect     the preferred intervention's adverse effect and the mechanism behind it
  weak_evidence      the only chains to the target rest on weak or missing evidence
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .clinical import Clinical
from .paths import Chain, ChainFinder
from .rules import CategoryRule, Rules


@dataclass(frozen=True)
class Instance:
    category: str
    preferred: str
    target: str
    population: str
    path: Chain
    anchors: tuple[str, ...]
    conditions: tuple[str, ...]  # the patient's findings (entity ids), population's included
    fixed: tuple[str, ...] = ()  # candidates the pattern requires besides the preferred
    competitors: tuple[str, ...] = ()  # acceptable candidates besides the preferred
    marker_actors: tuple[str, ...] = ()  # distractors acting on an associated marker
    expects_uncertainty: bool = False
    focus: str | None = None  # the finding the item turns on (titles name it)
    group: str = ""  # instances of one group are spread out when picking
    key: tuple = ()  # two instances with one key would be a repeat

    @property
    def core(self) -> tuple[str, ...]:
        return (self.preferred, *self.fixed, *self.competitors)


class Patterns:
    """Pattern kinds, bound to one graph and one domain's rules."""

    def __init__(self, finder: ChainFinder, clinical: Clinical, rules: Rules) -> None:
        self.finder = finder
        self.kg = finder.kg
        self.clinical = clinical
        self.rules = rules

    def instances(self, rule: CategoryRule) -> list[Instance]:
        kinds: dict[str, Callable[[CategoryRule], Iterator[Instance]]] = {
            "causal_chain": self.causal_chain,
            "multiple_pathways": self.multiple_pathways,
            "association": self.association,
            "competing": self.competing,
            "contraindication": self.contraindication,
            "adverse_effect": self.adverse_effect,
            "weak_evidence": self.weak_evidence,
        }
        return list(kinds[rule.pattern](rule))

    # shared steps ------------------------------------------------------------------------------

    def targets(self, rule: CategoryRule) -> list[str]:
        kinds = set(rule.target_classes or self.rules.target_classes)
        return sorted(e for e, ent in self.kg.entities.items() if ent["category"] in kinds)

    def ranked(self, start: str, target: str, rule: CategoryRule) -> list[Chain]:
        chains = self.finder.chains(start, target, rule.path)
        return sorted(chains, key=lambda c: self.finder.rank_key(c, self.rules.path_ranking))

    def placed(
        self, start: str, target: str, rule: CategoryRule, findings: tuple[str, ...] = ()
    ) -> tuple[Chain, str] | None:
        """The best chain that applies to some population, and that population."""
        for chain in self.ranked(start, target, rule):
            pop = self.clinical.population_for(chain, start, findings)
            if pop is not None:
                return chain, pop
        return None

    def conditions(
        self, preferred: str, population: str, findings: tuple[str, ...]
    ) -> tuple[str, ...]:
        """Population-implied findings, the pattern's findings, what the preferred treats,
        then the preferred's indication."""
        out = [*self.clinical.implied_conditions(population), *findings]
        out += self.clinical.treats(preferred)
        indications = sorted(
            self.clinical.indications(preferred, population),
            key=lambda a: (not self.clinical.guideline_supported(a), a["assertion_id"]),
        )
        if indications:
            out.append(indications[0]["object_id"])
        return tuple(dict.fromkeys(out))

    def eligible(
        self, rule: CategoryRule, intervention: str, conditions: tuple[str, ...], population: str
    ) -> bool:
        """May this intervention be a preferred (or competing) answer for this patient?"""
        if self.clinical.ruled_out(intervention, conditions, population):
            return False
        if not self.clinical.shown_in(intervention, population):
            return False
        return not (
            rule.exclude_modified
            and self.clinical.modified(intervention, (population, *conditions))
        )

    def admissible(self, inst: Instance) -> bool:
        """Instance-level checks every pattern shares."""
        implied = self.clinical.implied_conditions(inst.population)
        return inst.target not in implied and self.clinical.target_allowed(
            inst.target, inst.population
        )

    def via_findings(self, chain: Chain, rule: CategoryRule) -> tuple[str, ...]:
        """Intermediate nodes of the required classes that a patient can have (a risk factor,
        not a biological process): the mediators the patient has."""
        kinds = set(rule.path.via_classes) & set(self.rules.finding_classes)
        return tuple(n for n in chain.intermediates if self.kg.category(n) in kinds)

    # patterns ----------------------------------------------------------------------------------

    def causal_chain(self, rule: CategoryRule) -> Iterator[Instance]:
        for start in self.kg.interventions:
            for target in self.targets(rule):
                found = self.placed(start, target, rule)
                if found is None:
                    continue
                chain, pop = found
                via = self.via_findings(chain, rule)
                conditions = self.conditions(start, pop, via)
                if not self.eligible(rule, start, conditions, pop):
                    continue
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
                found = self.placed(start, target, rule)
                if found is None:
                    continue
                chain, pop = found
                routes: dict[str, Chain] = {}
                alternatives = self.finder.chains(start, target, rule.pathways or rule.path)
                for c in sorted(
                    alternatives, key=lambda c: self.finder.rank_key(c, self.rules.path_ranking)
                ):
                    if self.clinical.applies(c, pop):
                        routes.setdefault(c.nodes[-2], c)  # distinct final mediators
                if len(routes) < rule.min_pathways:
                    continue
                conditions = self.conditions(start, pop, self.via_findings(chain, rule))
                if not self.eligible(rule, start, conditions, pop):
                    continue
                others = [c for m, c in routes.items() if m != chain.nodes[-2]]
                anchors = tuple(dict.fromkeys(i for c in (chain, *others) for i in c.ids))
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

    def association(self, rule: CategoryRule) -> Iterator[Instance]:
        for anchor in self._anchors(rule):
            marker, target = anchor["subject_id"], anchor["object_id"]
            if target not in self.targets(rule) or marker in self.kg.interventions:
                continue
            actors = tuple(
                d
                for d in self.kg.interventions
                if self.finder.reaches(d, marker, self.rules.distractor_exclusion)
                and not self.clinical.has_validated_chain(d, target)
            )
            for start in self.kg.interventions:
                options = [c for c in self.ranked(start, target, rule) if marker not in c.nodes]
                placed = next(
                    (
                        (c, p)
                        for c in options
                        if (p := self.clinical.population_for(c, start, (marker,))) is not None
                        and self.clinical.assertion_applies(anchor, p)
                    ),
                    None,
                )
                if placed is None:
                    continue
                chain, pop = placed
                conditions = self.conditions(start, pop, (marker,))
                if not self.eligible(rule, start, conditions, pop):
                    continue
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
        low, high = rule.competitors
        high = min(high, self.rules.candidates[1])
        for target in self.targets(rule):
            placed = {s: self.placed(s, target, rule) for s in self.kg.interventions}
            pops = sorted({p[1] for p in placed.values() if p} | {self.rules.default_population})
            for pop in pops:
                implied = self.clinical.implied_conditions(pop)
                options: dict[str, Chain] = {}
                for start in self.kg.interventions:
                    chain = next(
                        (
                            c
                            for c in self.ranked(start, target, rule)
                            if self.clinical.applies(c, pop)
                        ),
                        None,
                    )
                    if chain is not None and self.eligible(rule, start, implied, pop):
                        options[start] = chain
                for k in range(low, high + 1):
                    for group in itertools.combinations(sorted(options), k):
                        inst = self._competition(rule, target, pop, group, options)
                        if inst is not None:
                            yield inst

    def _competition(
        self,
        rule: CategoryRule,
        target: str,
        pop: str,
        group: tuple[str, ...],
        options: dict[str, Chain],
    ) -> Instance | None:
        classes = [set(self.kg.classes_of.get(s, ())) for s in group]
        if any(a & b for a, b in itertools.combinations(classes, 2)):
            return None  # two options of one class are not a choice between interventions
        # Only what the patient has independently of the options (her population's findings,
        # and the risk factors lifestyle options treat) may favour one option's indication.
        findings: list[str] = list(self.clinical.implied_conditions(pop))
        for s in group:
            findings += self.clinical.treats(s)
        conditions = tuple(dict.fromkeys(findings))
        if any(not self.eligible(rule, s, conditions, pop) for s in group):
            return None
        keys = {s: self.clinical.preference_key(s, options[s], conditions, pop) for s in group}
        ranked = sorted(group, key=lambda s: keys[s])
        best = ranked[0]
        order = self.rules.preference_order

        def clinical(s: str) -> tuple:
            return tuple(v for k, v in zip(order, keys[s], strict=True) if k != "intervention_id")

        if rule.strict_preference and any(clinical(s) == clinical(best) for s in ranked[1:]):
            return None  # only the id tie-break would decide: not a defensible preference
        others = tuple(s for s in ranked[1:])
        anchors = tuple(dict.fromkeys(i for s in ranked for i in options[s].ids))
        return Instance(
            rule.category,
            best,
            target,
            pop,
            options[best],
            anchors,
            conditions,
            competitors=others,
            expects_uncertainty=rule.expects_uncertainty,
            group=best,
            key=(target, pop, group),
        )

    def contraindication(self, rule: CategoryRule) -> Iterator[Instance]:
        for anchor in self._anchors(rule):
            ruled, finding = anchor["subject_id"], anchor["object_id"]
            ruled_classes = set(self.kg.classes_of.get(ruled, ()))
            for target in self.targets(rule):
                if not self.ranked(ruled, target, rule):
                    continue
                for start in self.kg.interventions:
                    if start == ruled or ruled_classes & set(self.kg.classes_of.get(start, ())):
                        continue
                    inst = self._ruled_out(rule, anchor, ruled, finding, target, start)
                    if inst is not None:
                        yield inst

    def _ruled_out(
        self, rule: CategoryRule, anchor: dict, ruled: str, finding: str, target: str, start: str
    ) -> Instance | None:
        for chain in self.ranked(start, target, rule):
            pop = anchor["population_id"] or self.clinical.population_for(chain, start, (finding,))
            if pop is None or not self.clinical.applies(chain, pop):
                continue
            if not any(self.clinical.applies(c, pop) for c in self.ranked(ruled, target, rule)):
                return None  # the ruled-out option would not be tempting here
            conditions = self.conditions(start, pop, (finding,))
            if not self.eligible(rule, start, conditions, pop):
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
                key=(anchor["assertion_id"], target, start),
            )
        return None

    def adverse_effect(self, rule: CategoryRule) -> Iterator[Instance]:
        for anchor in self._anchors(rule):
            start, effect = anchor["subject_id"], anchor["object_id"]
            mechanism: tuple[str, ...] = ()
            if rule.mechanism is not None:
                chains = self.finder.chains(start, effect, rule.mechanism)
                best = self.finder.best(chains, self.rules.path_ranking)
                if best is None:
                    continue
                mechanism = best.ids
            salient = self._salient(effect, rule)
            for target in self.targets(rule):
                found = self.placed(start, target, rule, salient)
                if found is None:
                    continue
                chain, pop = found
                findings = tuple(
                    f for f in salient if not self.clinical.contraindications(start, (f,))
                )[:1]
                conditions = self.conditions(start, pop, findings)
                if not self.eligible(rule, start, conditions, pop):
                    continue
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
                    key=(anchor["assertion_id"], target),
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
        for start in self.kg.interventions:
            for target in self.targets(rule):
                if self.clinical.has_adequate_chain(start, target):
                    continue
                weak = [
                    c
                    for c in self.ranked(start, target, rule)
                    if any(self.clinical.is_weak(i) for i in c.ids)
                ]
                placed = next(
                    (
                        (c, p)
                        for c in weak
                        if (p := self.clinical.population_for(c, start)) is not None
                    ),
                    None,
                )
                if placed is None:
                    continue
                chain, pop = placed
                conditions = self.conditions(start, pop, ())
                if not self.eligible(rule, start, conditions, pop):
                    continue
                anchors = tuple(i for i in chain.ids if self.clinical.is_weak(i))
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

"""Clinical judgments the generator makes over the graph, each driven by the domain's rules.

Which population a chain speaks for, whether an intervention is indicated (by a guideline) for
a patient's condition, ruled out by a contraindication, modified by the patient's context,
or has any validated chain to an outcome; which intervention the declared tie-break prefers;
which adverse-effect assertions and evidence sources belong in the gold. Kept apart from the
pattern code so every category answers these questions the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .kg import KnowledgeGraph
from .paths import Chain, ChainFinder
from .rules import Rules


class Clinical:
    def __init__(self, kg: KnowledgeGraph, finder: ChainFinder, rules: Rules) -> None:
        self.kg = kg
        self.finder = finder
        self.rules = rules
        self._plausible_ends: dict[str, set[str]] = {}

    # populations -----------------------------------------------------------------------------

    def applies_in(self, population: str) -> set[str]:
        """Populations whose assertions hold for a patient of `population`."""
        profile = self.rules.populations.get(population) or {}
        return {population, *(profile.get("applies_with") or ())}

    def applies(self, chain: Chain, population: str) -> bool:
        return set(self.finder.populations(chain)) <= self.applies_in(population)

    def assertion_applies(self, assertion: dict[str, Any], population: str) -> bool:
        pop = assertion["population_id"]
        return pop is None or pop in self.applies_in(population)

    def population_for(
        self, chain: Chain, preferred: str, findings: Iterable[str] = ()
    ) -> str | None:
        """The population a scenario built on `chain` speaks for.

        In order: a population the chain itself is restricted to; the population of the
        preferred intervention's indication; the declared population of one of the scenario's
        findings; the domain's default. None when the chain cannot apply to any of them.
        """
        options = [*self.finder.populations(chain)]
        indications = self.kg.out_role(preferred, ("therapeutic",))
        options += sorted(a["population_id"] for a in indications if a["population_id"])
        for f in [*findings, *sorted(a["object_id"] for a in indications)]:
            pop = (self.rules.entity_profiles.get(f) or {}).get("population")
            if pop:
                options.append(pop)
        options.append(self.rules.default_population)
        return next((p for p in options if self.applies(chain, p)), None)

    def shown_in(self, intervention: str, population: str) -> bool:
        """Whether the population demands its own evidence, and the intervention has it."""
        roles = (self.rules.populations.get(population) or {}).get("own_evidence_roles")
        if not roles:
            return True
        return any(a["population_id"] == population for a in self.kg.out_role(intervention, roles))

    def target_allowed(self, target: str, population: str) -> bool:
        allowed = (self.rules.populations.get(population) or {}).get("target_outcomes")
        return not allowed or target in allowed

    def implied_conditions(self, population: str) -> tuple[str, ...]:
        return tuple((self.rules.populations.get(population) or {}).get("condition_ids") or ())

    # indications, contraindications, modifiers -------------------------------------------------

    def indications(self, intervention: str, population: str) -> list[dict[str, Any]]:
        """Therapeutic assertions of the intervention that hold in the population."""
        return [
            a
            for a in self.kg.out_role(intervention, ("therapeutic",))
            if a["validated"] and self.assertion_applies(a, population)
        ]

    def guideline_supported(self, assertion: dict[str, Any]) -> bool:
        kinds = set(self.rules.indication_source_types)
        return any(
            self.kg.evidence[e]["source_type"] in kinds
            for e in self.kg.supports.get(assertion["assertion_id"], ())
        )

    def guideline_indicated(
        self, intervention: str, conditions: Iterable[str], population: str
    ) -> bool:
        wanted = set(conditions)
        return any(
            a["object_id"] in wanted and self.guideline_supported(a)
            for a in self.indications(intervention, population)
        )

    def contraindications(self, intervention: str, conditions: Iterable[str]) -> list[str]:
        """Contraindication assertions of the intervention that hit one of the conditions."""
        wanted = set(conditions)
        return [
            a["assertion_id"]
            for a in self.kg.out_role(intervention, ("contraindication",))
            if a["object_id"] in wanted
        ]

    def contraindicated_in(self, intervention: str, population: str) -> list[str]:
        """Contraindication assertions restricted to exactly this population."""
        return [
            a["assertion_id"]
            for a in self.kg.out_role(intervention, ("contraindication",))
            if a["population_id"] == population
        ]

    def ruled_out(self, intervention: str, conditions: Iterable[str], population: str) -> bool:
        """Not to be the answer for this patient: a contraindication hits one of her findings,
        or one is declared for her whole population (conservative: empagliflozin's dialysis
        contraindication, stated for adults with CKD, keeps it from being the preferred answer
        there, though the gold cites only contraindications that hit a finding)."""
        conditions = list(conditions)
        return bool(
            self.contraindications(intervention, conditions)
            or self.contraindicated_in(intervention, population)
        )

    def modified(self, intervention: str, context: Iterable[str]) -> bool:
        """Whether a modifier assertion from the patient's context acts on the intervention."""
        ctx = set(context)
        return any(
            a["object_id"] == intervention for c in ctx for a in self.kg.out_role(c, ("modifier",))
        )

    def treats(self, intervention: str) -> tuple[str, ...]:
        """Findings (of the declared treated classes) the intervention directly decreases."""
        kinds = set(self.rules.treated_classes)
        return tuple(
            sorted(
                a["object_id"]
                for a in self.kg.out_role(intervention, ("causal",))
                if a["validated"]
                and a["direction"] == "decrease"
                and self.kg.category(a["object_id"]) in kinds
            )
        )

    # chains ------------------------------------------------------------------------------------

    def has_validated_chain(
        self, intervention: str, target: str, population: str | None = None
    ) -> bool:
        """Any chain of the distractor-exclusion kind to the target that holds for the
        population (every population when None). A chain whose steps are restricted to other
        populations (aspirin's benefit in established vascular disease) does not make an
        intervention right for this patient."""
        chains = self.finder.chains(intervention, target, self.rules.distractor_exclusion)
        return any(population is None or self.applies(c, population) for c in chains)

    def has_adequate_chain(self, intervention: str, target: str) -> bool:
        return self.finder.reaches(intervention, target, self.rules.adequate_chain)

    def reach(self, intervention: str) -> set[str]:
        """Entities the intervention acts on by any chain over the distractor-exclusion roles,
        validated or not: what makes it a plausible option to think of."""
        if intervention not in self._plausible_ends:
            rule = replace(self.rules.distractor_exclusion, validated_only=False)
            chains = self.finder.walk(intervention, rule)
            self._plausible_ends[intervention] = {c.end for c in chains}
        return self._plausible_ends[intervention]

    def acts_on_family(self, intervention: str, target: str) -> bool:
        """Whether the intervention has a validated chain to another outcome of the target's
        declared family (lowering myocardial infarction makes it a poor distractor for death)."""
        family = {m for g in self.rules.outcome_groups if target in g for m in g} - {target}
        if not family:
            return False
        chains = self.finder.walk(intervention, self.rules.distractor_exclusion)
        return any(c.end in family for c in chains)

    def is_weak(self, assertion_id: str) -> bool:
        a = self.kg.assertions[assertion_id]
        weak = self.rules.weak_evidence
        return (
            a["evidence_level"] in weak.evidence_levels
            or (weak.unvalidated and not a["validated"])
            or (weak.unsupported and not self.kg.supports.get(assertion_id))
        )

    # preference and gold pieces ----------------------------------------------------------------

    def support(self, intervention: str, chain: Chain, population: str) -> Chain:
        """The intervention's best-supported chain to the chain's end in the population: the
        strongest weakest link, then the fewest steps, among the gold path and every adequate
        chain (a trial's direct outcome claim can beat a longer mechanistic path)."""
        options = [
            c
            for c in self.finder.chains(intervention, chain.end, self.rules.adequate_chain)
            if self.applies(c, population)
        ]
        return min([chain, *options], key=lambda c: (-self.finder.weakest(c), c.hops, c.ids))

    def outcome_trial(self, intervention: str, target: str, population: str) -> bool:
        """Evidence-based medicine's first question: was the option shown to change this outcome?

        True when a validated causal claim from the intervention straight to the target outcome,
        applying to the patient's population, is supported by a trial or a meta-analysis (an
        outcome trial), rather than inferred through a surrogate such as blood pressure.
        """
        for a in self.kg.outgoing.get(intervention, ()):
            if a["object_id"] != target or self.kg.role(a) != "causal" or not a["validated"]:
                continue
            if not self.assertion_applies(a, population):
                continue
            kinds = {
                self.kg.evidence[e]["source_type"]
                for e in self.kg.supports.get(a["assertion_id"], ())
            }
            if kinds & set(self.rules.outcome_trial_source_types):
                return True
        return False

    def preference_key(
        self, intervention: str, chain: Chain, conditions: Iterable[str], population: str
    ) -> tuple:
        """Sort key of the declared preference order (smaller is preferred)."""
        conditions = list(conditions)
        best = self.support(intervention, chain, population)
        parts: list = []
        for key in self.rules.preference_order:
            if key == "outcome_trial":
                parts.append(0 if self.outcome_trial(intervention, chain.end, population) else 1)
            elif key == "guideline_indication":
                parts.append(
                    0 if self.guideline_indicated(intervention, conditions, population) else 1
                )
            elif key == "strongest_evidence":
                parts.append(-self.finder.weakest(best))
            elif key == "fewest_hops":
                parts.append(best.hops)
            elif key == "intervention_id":
                parts.append(intervention)
        return tuple(parts)

    def adverse_effects(self, intervention: str) -> tuple[str, ...]:
        """The intervention's adverse-effect assertions that the declared filter admits."""
        rule = self.rules.adverse_effects
        out = []
        for a in self.kg.outgoing.get(intervention, ()):
            role = self.kg.role(a)
            if rule is None:
                if role == "adverse_effect":
                    out.append(a["assertion_id"])
            elif rule.matches(a, role, self.kg.category(intervention)):
                out.append(a["assertion_id"])
        return tuple(sorted(out))

    def evidence_for(self, ids: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted({e for i in ids for e in self.kg.supports.get(i, ())}))

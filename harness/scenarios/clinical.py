"""Clinical questions the generator asks of the graph besides "is it the answer?".

Which findings a population implies, whether an intervention is indicated for a patient's
condition, what it treats, which chains explain its effect, which adverse effects and sources
belong in the gold. Whether an intervention may be the answer is `evidence.OutcomeJudge`'s
question alone; this module never decides it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .chains import Chain, ChainFinder
from .evidence import OutcomeJudge
from .kg import KnowledgeGraph
from .rules import ChainRule, Rules


class Clinical:
    def __init__(
        self, kg: KnowledgeGraph, finder: ChainFinder, rules: Rules, judge: OutcomeJudge
    ) -> None:
        self.kg = kg
        self.finder = finder
        self.rules = rules
        self.judge = judge
        self._plausible_ends: dict[tuple[str, str], set[str]] = {}

    # populations -----------------------------------------------------------------------------

    def applies_in(self, population: str) -> set[str]:
        return self.judge.applies_in(population)

    def applies(self, chain: Chain, population: str) -> bool:
        return set(self.finder.populations(chain)) <= self.applies_in(population)

    def implied_conditions(self, population: str) -> tuple[str, ...]:
        return tuple((self.rules.populations.get(population) or {}).get("condition_ids") or ())

    def target_allowed(self, target: str, population: str) -> bool:
        allowed = (self.rules.populations.get(population) or {}).get("target_outcomes")
        return not allowed or target in allowed

    def populations_for(self, intervention: str, target: str) -> list[str]:
        """Populations a scenario about the intervention and the target may be set in: those
        its outcome claims name (the patient must be one the evidence studied), then the
        declared default."""
        named = {
            a["population_id"]
            for a, _ in self.kg.claims(intervention, ("causal", "null_effect"))
            if a["object_id"] in self.kg.outcome_ids(target)
        }
        pops = sorted(p for p in named if p)
        if None in named or not pops:
            pops.append(self.rules.default_population)
        return list(dict.fromkeys(pops))

    # indications and treatments --------------------------------------------------------------

    def indications(self, intervention: str, population: str) -> list[dict[str, Any]]:
        """Validated therapeutic assertions (own or class-level) that hold in the population."""
        return [
            a
            for a, _ in self.kg.claims(intervention, ("therapeutic",))
            if a["validated"] and self.judge.holds_in(a, population)
        ]

    def guideline_supported(self, assertion: dict[str, Any]) -> bool:
        kinds = set(self.rules.indication_source_types)
        return any(
            self.kg.evidence[e]["source_type"] in kinds
            for e in self.kg.supports.get(assertion["assertion_id"], ())
        )

    def indicated_for(self, intervention: str, conditions: Iterable[str], population: str) -> bool:
        wanted = set(conditions)
        return any(a["object_id"] in wanted for a in self.indications(intervention, population))

    def treats(self, intervention: str) -> tuple[str, ...]:
        """Findings (of the declared treated classes) the intervention directly decreases."""
        kinds = set(self.rules.treated_classes)
        return tuple(
            sorted(
                a["object_id"]
                for a, _ in self.kg.claims(intervention, ("causal",))
                if a["validated"]
                and a["direction"] == "decrease"
                and self.kg.category(a["object_id"]) in kinds
            )
        )

    def contraindications(self, intervention: str, conditions: Iterable[str]) -> list[str]:
        """Contraindication assertions (own or class-level) hitting one of the conditions."""
        return [aid for aid, _ in self.judge.contraindications(intervention, conditions)]

    # chains ----------------------------------------------------------------------------------

    def chains(
        self, intervention: str, target: str, rule: ChainRule, population: str
    ) -> list[Chain]:
        """The intervention's chains of the rule's kind that hold in the population, best first
        by the declared path ranking."""
        found = [
            c for c in self.finder.chains(intervention, target, rule) if self.applies(c, population)
        ]
        return sorted(found, key=lambda c: self.finder.rank_key(c, self.rules.path_ranking))

    def has_validated_chain(self, intervention: str, target: str, population: str) -> bool:
        """Any chain of the distractor-exclusion kind (by default: validated) to the target."""
        rule = self.rules.distractor_exclusion
        return any(
            self.applies(c, population) for c in self.finder.chains(intervention, target, rule)
        )

    def reach(self, intervention: str, population: str) -> set[str]:
        """Entities the intervention acts on through chains of the distractor-exclusion kind (by
        default validated) that hold in the population: what makes it a plausible option for
        this patient (renal denervation, whose blood-pressure effect is shown in resistant
        hypertension, does not reach blood pressure in a normotensive patient)."""
        key = (intervention, population)
        if key not in self._plausible_ends:
            self._plausible_ends[key] = {
                c.end
                for c in self.finder.walk(intervention, self.rules.distractor_exclusion)
                if self.applies(c, population)
            }
        return self._plausible_ends[key]

    def is_weak(self, assertion_id: str) -> bool:
        a = self.kg.assertions[assertion_id]
        weak = self.rules.weak_evidence
        return (
            a["evidence_level"] in weak.evidence_levels
            or (weak.unvalidated and not a["validated"])
            or (weak.unsupported and not self.kg.supports.get(assertion_id))
        )

    # gold pieces -----------------------------------------------------------------------------

    def adverse_effects(self, intervention: str) -> tuple[str, ...]:
        """The intervention's adverse-effect assertions (own or class-level) the filter admits."""
        rule = self.rules.adverse_effects
        out = []
        for a, _ in self.kg.claims(intervention, ("adverse_effect",)):
            if rule is None or rule.matches(a, "adverse_effect", self.kg.category(intervention)):
                out.append(a["assertion_id"])
        return tuple(sorted(out))

    def evidence_for(self, ids: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted({e for i in ids for e in self.kg.supports.get(i, ())}))

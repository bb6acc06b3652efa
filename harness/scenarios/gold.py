"""Candidates and gold for one scenario instance.

Distractors must be clinically plausible and must not be right: a distractor has no chain of
the distractor-exclusion kind to the target (by default: no validated chain at all), is not
ruled out for the patient (a contraindication would change the gold), shares no intervention
class with an acceptable option, and acts on something related to the scenario. Plausibility
tiers, best first: an intervention acting on the associated marker (confounded items), one
indicated for a condition the patient has, one acting on an outcome related to the target
(adjacent to it, or of the target classes); within a tier the least used so far comes first,
so that no distractor recurs often enough to become a tell.

The gold is computed, never written by hand: the preferred intervention, the acceptable ones
with their classes (a class counts only when no non-acceptable candidate belongs to it), the
gold path, the preferred's adverse-effect assertions, the contraindication assertions that hit
this patient, the evidence sources that support the path, and the expected uncertainty.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .clinical import Clinical
from .patterns import Instance
from .rules import Rules


@dataclass(frozen=True)
class Distractor:
    intervention: str
    tier: int
    adds: tuple[str, ...] = ()  # findings the patient must have for the option to make sense


class GoldBuilder:
    TIERS = ("marker", "indicated", "related")  # then: lowers a sibling outcome

    def __init__(self, clinical: Clinical, rules: Rules) -> None:
        self.clinical = clinical
        self.kg = clinical.kg
        self.rules = rules
        self._pools: dict[tuple, tuple[Distractor, ...]] = {}
        self.used: Counter = Counter()  # distractor use so far: no option becomes a tell

    def _adjacent(self, target: str) -> set[str]:
        near = {a["subject_id"] for a in self.kg.incoming.get(target, ())}
        near |= {a["object_id"] for a in self.kg.outgoing.get(target, ())}
        return near - {target}

    def pool(self, inst: Instance) -> tuple[Distractor, ...]:
        """Eligible distractors for an instance, best tier first (ties by id)."""
        key = (inst.target, inst.population, inst.conditions, inst.core, inst.marker_actors)
        if key in self._pools:
            return self._pools[key]
        taken = set(inst.core)
        taken_classes = {c for s in inst.core for c in self.kg.classes_of.get(s, ())}
        targets = set(self.rules.target_classes)
        adjacent = self._adjacent(inst.target)
        indicated_for = set(inst.conditions)
        out: list[Distractor] = []
        for d in self.kg.interventions:
            if d in taken or taken_classes & set(self.kg.classes_of.get(d, ())):
                continue
            if self.clinical.has_validated_chain(d, inst.target, inst.population):
                continue
            if self.clinical.contraindications(d, inst.conditions):
                continue
            # A treatment for a finding the patient lacks only makes sense once she has it.
            treated = self.clinical.treats(d)
            adds = treated if treated and not set(treated) & indicated_for else ()
            reach = self.clinical.reach(d)
            if d in inst.marker_actors:
                tier = 0
            elif any(
                a["object_id"] in indicated_for for a in self.kg.out_role(d, ("therapeutic",))
            ):
                tier = 1
            elif reach & adjacent or any(self.kg.category(e) in targets for e in reach):
                tier = 2
            else:
                continue
            if self.clinical.acts_on_family(d, inst.target):
                tier = len(self.TIERS)  # last resort: it lowers a sibling outcome
            out.append(Distractor(d, tier, adds[:1]))
        self._pools[key] = tuple(sorted(out, key=lambda x: (x.tier, x.intervention)))
        return self._pools[key]

    def feasible(self, inst: Instance) -> bool:
        """Enough distractors of distinct classes for the smallest candidate set."""
        seen: set[str] = set()
        distinct = 0
        for d in self.pool(inst):
            own = set(self.kg.classes_of.get(d.intervention, ()))
            if not own & seen:
                distinct += 1
                seen |= own
        return len(inst.core) + distinct >= self.rules.candidates[0]

    def candidates(self, inst: Instance, rng: random.Random) -> tuple[list[str], tuple[str, ...]]:
        """The preferred, the pattern's required options and seeded distractors, shuffled;
        and the findings the chosen distractors need the patient to have."""
        low, high = self.rules.candidates
        pool = list(self.pool(inst))
        total = rng.randint(max(low, len(inst.core)), max(high, len(inst.core)))
        # Last-resort distractors make up the minimum, never an optional fourth option.
        usual = sum(1 for d in pool if d.tier < len(self.TIERS))
        need = max(low - len(inst.core), min(total - len(inst.core), usual))
        need = max(0, min(need, len(pool)))
        rng.shuffle(pool)
        pool.sort(key=lambda d: (d.tier, self.used[d.intervention]))  # stable: ties stay random
        picked: list[Distractor] = []
        classes: set[str] = set()
        for d in pool:  # two distractors of one class would be one option twice
            own = set(self.kg.classes_of.get(d.intervention, ()))
            if len(picked) < need and not own & classes:
                picked.append(d)
                classes |= own
        self.used.update(d.intervention for d in picked)
        chosen = [*inst.core, *(d.intervention for d in picked)]
        rng.shuffle(chosen)
        adds = tuple(dict.fromkeys(f for d in picked for f in d.adds))
        return chosen, adds

    def gold(self, inst: Instance, candidates: list[str]) -> dict[str, Any]:
        acceptable = [inst.preferred, *sorted(inst.competitors)]
        outsiders = set(candidates) - set(acceptable)
        classes = sorted(
            {
                c
                for s in acceptable
                for c in self.kg.classes_of.get(s, ())
                if not outsiders & set(self.kg.classes[c]["member_ids"])
            }
        )
        contraindications = sorted(
            {i for s in candidates for i in self.clinical.contraindications(s, inst.conditions)}
        )
        return {
            "preferred_intervention": inst.preferred,
            "acceptable_interventions": [*acceptable, *classes],
            "causal_path_assertion_ids": list(inst.path.ids),
            "adverse_effect_assertion_ids": list(self.clinical.adverse_effects(inst.preferred)),
            "contraindication_assertion_ids": contraindications,
            "evidence_source_ids": list(self.clinical.evidence_for(inst.path.ids)),
            "expects_uncertainty": inst.expects_uncertainty,
        }

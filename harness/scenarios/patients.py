"""Patient profiles: age, sex, pregnancy status and measurements, from declared rules.

A population's profile gives the age range and the sexes a patient may have; a finding's
profile may make her pregnant; lab rules name the measurements that matter when one of their
entities is part of the scenario (a condition, the population, a node of the gold path, the
target), with a value drawn from the declared range. Pregnancy status is stated for women of
childbearing age when it matters (a candidate is contraindicated in pregnancy).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .rules import Rules


@dataclass(frozen=True)
class Patient:
    age: int
    sex: str
    pregnancy_status: str
    labs: tuple[tuple[dict[str, Any], int], ...]  # (lab value, decimals for the narrative)
    pregnancy_matters: bool


class PatientMaker:
    def __init__(self, rules: Rules) -> None:
        self.rules = rules

    def pregnancy_findings(self) -> set[str]:
        return {
            e
            for e, prof in self.rules.entity_profiles.items()
            if prof.get("pregnancy_status") == "pregnant"
        }

    def make(
        self,
        rng: random.Random,
        population: str,
        conditions: tuple[str, ...],
        relevant: tuple[str, ...],
        pregnancy_matters: bool,
    ) -> Patient:
        profile = self.rules.populations.get(population) or self.rules.populations.get(
            self.rules.default_population, {}
        )
        pregnant = profile.get("pregnancy_status") == "pregnant" or bool(
            self.pregnancy_findings() & set(conditions)
        )
        sexes = ["female"] if pregnant else sorted(profile.get("sexes") or ["female", "male"])
        sex = rng.choice(sexes)
        age_range = profile.get("age") or {"min": 40, "max": 75}
        age = rng.randint(int(age_range["min"]), int(age_range["max"]))
        if pregnant:
            status = "pregnant"
        elif sex == "female" and self._childbearing(age):
            status = "not_pregnant"
        else:
            status = "not_applicable"
        return Patient(
            age=age,
            sex=sex,
            pregnancy_status=status,
            labs=self.labs(rng, relevant),
            pregnancy_matters=pregnant or (status == "not_pregnant" and pregnancy_matters),
        )

    def _childbearing(self, age: int) -> bool:
        span = self.rules.childbearing_age
        return span is not None and span[0] <= age <= span[1]

    def labs(self, rng: random.Random, relevant: tuple[str, ...]) -> tuple[tuple[dict, int], ...]:
        """One value per lab name, from the first declared rule whose entities are relevant."""
        wanted = set(relevant)
        out: list[tuple[dict, int]] = []
        seen: set[str] = set()
        for rule in self.rules.labs:
            if rule["name"] in seen or not wanted & set(rule["when"]):
                continue
            seen.add(rule["name"])
            decimals = int(rule.get("decimals") or 0)
            value = round(rng.uniform(float(rule["min"]), float(rule["max"])), decimals)
            if not decimals:
                value = int(value)
            out.append(({"name": rule["name"], "value": value, "unit": rule["unit"]}, decimals))
        return tuple(out)

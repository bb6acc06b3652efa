"""Patient profiles: age, sex, pregnancy status, findings and measurements, from declared rules.

A population's profile gives the age range and the sexes a patient may have; a finding's
profile may make her pregnant; lab rules name the measurements that matter when one of their
entities is part of the scenario (a condition, the population, a node of the gold path, the
target), with a value drawn from the declared range. Pregnancy status is stated for women of
childbearing age when it matters (a candidate is contraindicated in pregnancy).

Clinical scores (CHA2DS2-VASc) are never drawn at random: they are computed from the findings,
age and sex the vignette lists, by the formula the domain declares. A population defined by a
score threshold gets score findings (from the formula's components) until the patient meets
it, so the printed score, the listed findings and the indication threshold always agree.
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
    findings: tuple[str, ...] = ()  # the scenario's findings plus those a score threshold adds


def score_value(score: dict[str, Any], findings: set[str], age: int, sex: str | None) -> int:
    """The declared formula: the sum of the points of every component that applies."""
    total = 0
    for comp in score["components"]:
        applies = True
        if comp.get("findings"):
            applies = bool(set(comp["findings"]) & findings)
        if applies and comp.get("age"):
            band = comp["age"]
            applies = int(band["min"]) <= age <= int(band["max"])
        if applies and comp.get("sex"):
            applies = comp["sex"] == sex
        if applies:
            total += int(comp["points"])
    return total


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
        for f in conditions:  # a finding may imply the sex (female sex as a risk marker)
            implied = (self.rules.entity_profiles.get(f) or {}).get("sexes")
            if implied:
                sexes = [x for x in sexes if x in implied]
        if not sexes:
            raise ValueError(f"the findings {', '.join(conditions)} allow no sex in {population}")
        sex = rng.choice(sexes)
        age_range = profile.get("age") or {"min": 40, "max": 75}
        low, high = int(age_range["min"]), int(age_range["max"])
        if pregnant and self.rules.childbearing_age:  # no pregnant 67-year-old
            low = max(low, self.rules.childbearing_age[0])
            high = min(high, self.rules.childbearing_age[1])
            if low > high:
                raise ValueError(f"population {population} has no childbearing age for a pregnancy")
        age = rng.randint(low, high)
        if pregnant:
            status = "pregnant"
        elif sex == "female" and self._childbearing(age):
            status = "not_pregnant"
        else:
            status = "not_applicable"
        findings = self.meet_thresholds(rng, profile, conditions, age, sex)
        relevant = (*relevant, *findings)
        return Patient(
            age=age,
            sex=sex,
            pregnancy_status=status,
            labs=(*self.labs(rng, relevant), *self.scores(relevant, set(findings), age, sex)),
            pregnancy_matters=pregnant or (status == "not_pregnant" and pregnancy_matters),
            findings=findings,
        )

    def _score(self, name: str) -> dict[str, Any]:
        return next(s for s in self.rules.clinical_scores if s["name"] == name)

    def meet_thresholds(
        self,
        rng: random.Random,
        profile: dict[str, Any],
        conditions: tuple[str, ...],
        age: int,
        sex: str,
    ) -> tuple[str, ...]:
        """The findings, plus score findings (the formula's own, in a seeded order) until every
        threshold of the population is met; a threshold it cannot meet is a declaration error."""
        findings = list(conditions)
        for t in profile.get("score_thresholds") or ():
            score = self._score(t["score"])
            floor = int(
                t["female_min"] if sex == "female" and t.get("female_min") is not None else t["min"]
            )
            # one finding per component that does not apply yet: each added finding raises
            # the score (no second heart-failure finding for the same point)
            options = [
                comp["findings"]
                for comp in score["components"]
                if comp.get("findings") and not set(comp["findings"]) & set(findings)
            ]
            rng.shuffle(options)
            while score_value(score, set(findings), age, sex) < floor and options:
                findings.append(rng.choice(sorted(options.pop())))
            value = score_value(score, set(findings), age, sex)
            if value < floor or (t.get("max") is not None and value > int(t["max"])):
                raise ValueError(
                    f"population {profile.get('population')}: {score['name']} {value} cannot "
                    f"meet its threshold for a {age}-year-old {sex} patient"
                )
        return tuple(dict.fromkeys(findings))

    def scores(
        self, relevant: tuple[str, ...], findings: set[str], age: int, sex: str
    ) -> tuple[tuple[dict, int], ...]:
        wanted = set(relevant)
        return tuple(
            ({"name": s["name"], "value": score_value(s, findings, age, sex), "unit": s["unit"]}, 0)
            for s in self.rules.clinical_scores
            if wanted & set(s["when"])
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

"""Pinned scenarios: fixed by the spec (the paper's walk-through), gold computed all the same.

A pinned scenario declares its category, candidates, preferred intervention, target,
population and patient; the generator still judges every candidate by the evidence rule and
derives the gold path (the category's path rule, applicable to the population), adverse
effects, contraindications, evidence and acceptable classes from the graph, so a pinned item
can never drift from the graph it is scored against, and a pin whose preferred does not rest on
outcome evidence is an error.
"""

from __future__ import annotations

from typing import Any

from kgbench.errors import UserError

from .evidence import OutcomeJudge
from .narratives import Wording
from .patterns import Instance, Patterns
from .rules import CategoryRule


def _decimals(value: float) -> int:
    """Decimals a declared lab value was written with (138 -> 0, 5.6 -> 1)."""
    value = float(value)
    return 0 if value.is_integer() else len(repr(value).split(".")[1])


class Pins:
    def __init__(self, patterns: Patterns, judge: OutcomeJudge, wording: Wording, source: str):
        self.patterns = patterns
        self.clinical = patterns.clinical
        self.judge = judge
        self.wording = wording
        self.source = source

    def instance(self, pin: dict[str, Any], rule: CategoryRule) -> tuple[Instance, list[str]]:
        """The instance of a pinned scenario and its candidates, in declared order."""
        where = f"pinned scenario {pin['scenario_id']} in {self.source}"
        preferred, target = pin["preferred"], pin["target_outcome"]
        pop = pin.get("population") or self.judge.rules.default_population
        conditions = tuple(pin["patient"].get("condition_ids") or ())
        judgement = self.judge.judge(preferred, target, pop, conditions)
        if not judgement.qualified:
            from .audit import what_would_qualify

            hint = ""
            if judgement.status == "no_outcome_evidence":
                hint = "; " + what_would_qualify(self.judge, preferred, target, pop)
            raise UserError(
                f"{where}: the preferred {preferred} does not rest on outcome evidence for "
                f"{target} in {pop or 'any population'} ({judgement.status.replace('_', ' ')})"
                + hint
            )
        chains = self.clinical.chains(preferred, target, rule.path, pop)
        if not chains:
            raise UserError(
                f"{where}: no chain of the {rule.category} kind from {preferred} to {target} "
                f"applies to {pop or 'any population'}"
            )
        chain = self.patterns.explanation(chains, judgement, target)
        fixed = tuple(c for c in pin["candidates"] if c != preferred)
        inst = Instance(
            rule.category,
            preferred,
            target,
            pop,
            chain,
            chain.ids,
            conditions,
            fixed=fixed,
            expects_uncertainty=rule.expects_uncertainty,
            group=preferred,
            key=(preferred, target),
        )
        return inst, list(pin["candidates"])

    def patient(self, pin: dict[str, Any], inst: Instance) -> dict[str, Any]:
        """The declared patient, with the narrative written the same way as generated ones."""
        declared = pin["patient"]
        labs = [
            (
                {"name": lab["name"], "value": lab["value"], "unit": lab["unit"]},
                _decimals(lab["value"]),
            )
            for lab in declared.get("labs") or ()
        ]
        status = declared.get("pregnancy_status") or "not_applicable"
        narrative = self.wording.narrative(
            declared["age"],
            declared.get("sex"),
            inst.population,
            inst.conditions,
            labs,
            status if status != "not_applicable" else None,
            declared.get("notes"),
            absent=self.wording.stated_background(pin["candidates"], inst.conditions),
        )
        patient = {
            "age": declared["age"],
            "sex": declared.get("sex"),
            "condition_ids": list(inst.conditions),
            "labs": [lab for lab, _ in labs],
            "pregnancy_status": status,
            "narrative": narrative,
        }
        if patient["sex"] is None:  # not stated by the source: left out, worded neutrally
            del patient["sex"]
        return patient

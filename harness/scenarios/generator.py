"""`kgbench generate`: category-balanced scenarios computed from the compiled graph.

For each declared category, in declaration order: its pinned scenarios first (`pinned`), then
instances of its pattern (`patterns`) that are admissible and have enough plausible
distractors (`gold`), spread out (`selection`) with a random generator seeded by
(seed, category), so categories do not disturb each other. Two instances with the same key
are never both taken; asking for more than the graph supports is an error naming the
category. Ids run SCN_0001.. in category blocks.

The output is a pure function of generated/<domain>/ and the seed, validated against the
scenario schema and the graph before it is written (atomically).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from kgbench.errors import UserError

from ..jsonio import atomic_write_bytes
from .clinical import Clinical
from .files import jsonl_bytes
from .gold import GoldBuilder
from .kg import KnowledgeGraph
from .narratives import Wording, capitalise
from .paths import ChainFinder
from .patients import PatientMaker
from .patterns import Instance, Patterns
from .pinned import Pins
from .rules import CategoryRule, Rules, load_rules
from .selection import spread
from .validation import validate_records

ID_WIDTH = 4


@dataclass
class Generator:
    domain: CompiledDomain
    seed: int | None = None
    rules: Rules = field(init=False)

    def __post_init__(self) -> None:
        self.rules = load_rules(self.domain)
        if self.seed is None:
            self.seed = self.rules.seed
        self.kg = KnowledgeGraph(self.domain)
        self.finder = ChainFinder(self.kg)
        self.clinical = Clinical(self.kg, self.finder, self.rules)
        self.patterns = Patterns(self.finder, self.clinical, self.rules)
        self.gold = GoldBuilder(self.clinical, self.rules)
        self.patients = PatientMaker(self.rules)
        names = {e: ent["name"] for e, ent in self.kg.entities.items()}
        self.wording = Wording(
            names, self.rules.entity_profiles, self.rules.populations, self.rules.narrative
        )
        self.pins = Pins(self.patterns, self.clinical, self.wording, self.rules.source)

    # selection ---------------------------------------------------------------------------------

    def rng(self, category: str) -> random.Random:
        return random.Random(f"{self.seed}/{category}")

    def pick(
        self, rule: CategoryRule, n: int, rng: random.Random, used_pairs: Counter
    ) -> list[Instance]:
        if n <= 0:
            return []
        matched = self.patterns.instances(rule)
        if not matched:
            raise UserError(
                f"category '{rule.category}' (pattern {rule.pattern}): the rule matches nothing "
                f"in the graph of domain '{self.domain.name}'; relax it in {self.rules.source}"
            )
        pool = sorted(
            (i for i in matched if self.patterns.admissible(i) and self.gold.feasible(i)),
            key=lambda i: (i.key, i.path.ids),
        )
        unique = list({i.key: i for i in reversed(pool)}.values())[::-1]
        if len(unique) < n:
            raise UserError(
                f"category '{rule.category}': {n} scenarios requested, but the graph supports "
                f"only {len(unique)} distinct scenarios without repeats ({len(matched)} pattern "
                "matches, fewer with enough plausible distractors); lower --per-category or "
                f"relax the rule in {self.rules.source}"
            )
        return spread(unique, n, rng, used_pairs)

    # assembly ----------------------------------------------------------------------------------

    def scenario(
        self,
        rule: CategoryRule,
        inst: Instance,
        candidates: list[str],
        rng: random.Random,
        scenario_id: str,
        source: str,
        patient: dict[str, Any] | None = None,
        title: str | None = None,
        decision: str | None = None,
    ) -> dict[str, Any]:
        gold = self.gold.gold(inst, candidates)
        focus = inst.focus or next(iter(inst.conditions), None)
        words = {
            "target": self.wording.outcome(inst.target),
            "population": self.wording.population(inst.population),
            "condition": self.wording.phrase(focus) if focus else "",
        }
        if patient is None:
            patient = self.make_patient(inst, candidates, rng)
        record = {
            "schema_version": self.rules.scenario_schema_version,
            "scenario_id": scenario_id,
            "domain": self.domain.name,
            "category": rule.category,
            "title": capitalise((title or rule.title).format(**words)),
            "patient": patient,
            "decision_target": capitalise((decision or rule.decision).format(**words)),
            "target_outcome_id": inst.target,
            "population_id": inst.population,
            "candidates": [{"intervention_id": c, "label": self.kg.name_of(c)} for c in candidates],
            "gold": gold,
            "anchor_assertion_ids": list(inst.anchors),
            "source": source,
        }
        return record

    def pregnancy_matters(self, candidates: list[str]) -> bool:
        pregnancy = self.patients.pregnancy_findings()
        return any(self.clinical.contraindications(c, pregnancy) for c in candidates)

    def make_patient(
        self, inst: Instance, candidates: list[str], rng: random.Random
    ) -> dict[str, Any]:
        relevant = (*inst.conditions, inst.population, *inst.path.nodes, inst.target)
        p = self.patients.make(
            rng, inst.population, inst.conditions, relevant, self.pregnancy_matters(candidates)
        )
        narrative = self.wording.narrative(
            p.age,
            p.sex,
            inst.population,
            inst.conditions,
            p.labs,
            p.pregnancy_status if p.pregnancy_matters else None,
        )
        return {
            "age": p.age,
            "sex": p.sex,
            "condition_ids": list(inst.conditions),
            "labs": [lab for lab, _ in p.labs],
            "pregnancy_status": p.pregnancy_status,
            "narrative": narrative,
        }

    def generate(self, per_category: int | None = None) -> list[dict[str, Any]]:
        n = per_category if per_category is not None else self.rules.per_category
        if n < 1:
            raise UserError(f"--per-category must be at least 1, got {n}")
        records: list[dict[str, Any]] = []
        used_pairs: Counter = Counter()
        source = f"generated by kgbench generate (seed {self.seed})"
        for rule in self.rules.categories:
            rng = self.rng(rule.category)
            pins = [p for p in self.rules.pinned if p["category"] == rule.category]
            if len(pins) > n:
                raise UserError(
                    f"category '{rule.category}' pins {len(pins)} scenarios in "
                    f"{self.rules.source}, more than the {n} requested"
                )
            for pin in pins:
                sid = _scenario_id(len(records) + 1)
                if pin["scenario_id"] != sid:
                    raise UserError(
                        f"pinned scenario {pin['scenario_id']} in {self.rules.source} would be "
                        f"numbered {sid}: pinned scenarios come first in their category's block, "
                        "in category order"
                    )
                inst, candidates = self.pins.instance(pin, rule)
                used_pairs[(inst.preferred, inst.target)] += 1
                records.append(
                    self.scenario(
                        rule,
                        inst,
                        candidates,
                        rng,
                        sid,
                        f"pinned in {self.rules.source}; gold computed from the graph",
                        patient=self.pins.patient(pin, inst),
                        title=pin["title"],
                        decision=pin.get("decision"),
                    )
                )
            for inst in self.pick(rule, n - len(pins), rng, used_pairs):
                candidates, adds = self.gold.candidates(inst, rng)
                if adds:
                    inst = replace(inst, conditions=tuple(dict.fromkeys((*inst.conditions, *adds))))
                sid = _scenario_id(len(records) + 1)
                records.append(self.scenario(rule, inst, candidates, rng, sid, source))
        problems = validate_records(self.domain, [(i + 1, r) for i, r in enumerate(records)])
        if problems:  # a broken invariant of the generator, not a user error
            raise AssertionError(
                "generated scenarios fail validation:\n" + "\n".join(map(str, problems))
            )
        return records


def _scenario_id(n: int) -> str:
    return f"SCN_{n:0{ID_WIDTH}d}"


def default_output(domain: CompiledDomain) -> Path:
    return domain.root / "scenarios" / "scenarios.jsonl"


def generate_file(
    domain: CompiledDomain,
    seed: int | None = None,
    per_category: int | None = None,
    out: Path | None = None,
) -> tuple[Path, list[dict[str, Any]]]:
    """Generate and write scenarios (JSON Lines, atomically); returns the path and records."""
    records = Generator(domain, seed).generate(per_category)
    path = out or default_output(domain)
    atomic_write_bytes(path, jsonl_bytes(records))
    return path, records

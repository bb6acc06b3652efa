"""`kgbench generate`: category-balanced scenarios whose gold rests on outcome evidence.

For each declared category, in declaration order: its pinned scenarios first (`pinned`), then
instances of its pattern (`patterns`) that are admissible and have enough plausible
distractors (`gold`), in a spread-out order (`selection`) drawn with a random generator seeded
by (seed, category), so categories do not disturb each other. Each instance gets its
candidates, then its patient (whose computed scores may add findings), then its gold; an
instance whose final patient breaks the evidence rule (the preferred no longer qualifies, or
another candidate does) is skipped, never published. Asking for more than the graph supports
is an error naming the category and the evidence it lacks. Ids run 1.. in category blocks,
written in the domain's scenario id scheme (SCN_0001 unless it declares its own).

The output is a pure function of generated/<domain>/ and the seed, validated against the
scenario schema and the graph before it is written (atomically). `GenerationReport` says, per
category, how many instances matched, how many were kept or skipped and why, and how many
items depend on rule order (by construction none: an item with two equally supported
candidates is never generated).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from kgbench.errors import UserError
from kgbench.io import atomic_write_bytes, jsonl_bytes

from ..scenario_files import generated_set
from .audit import WRONG_ANSWER, ItemJudge
from .chains import ChainFinder
from .clinical import Clinical
from .evidence import OutcomeJudge
from .exclusive import clashes, exclusions
from .gold import GoldBuilder, GoldError
from .kg import KnowledgeGraph
from .memo import memoise_distractor_questions
from .narratives import Wording, capitalise
from .patients import PatientMaker
from .patterns import Instance, Patterns
from .pinned import Pins
from .rules import CategoryRule, Rules, load_rules
from .selection import picks
from .validation import validate_records


@dataclass
class CategoryStats:
    category: str
    matched: int = 0
    eligible: int = 0  # admissible, with enough distractors, distinct keys
    kept: int = 0
    skipped: Counter = field(default_factory=Counter)


@dataclass
class GenerationReport:
    categories: list[CategoryStats] = field(default_factory=list)
    rule_order_dependent: int = 0
    unknown_statuses: int = 0  # offered candidates whose evidence status is unknown (target 0)
    distractor_use: Counter = field(default_factory=Counter)
    distractor_cap: int = 0

    def lines(self) -> list[str]:
        out = []
        for c in self.categories:
            skipped = ", ".join(f"{n} {why}" for why, n in sorted(c.skipped.items())) or "none"
            out.append(
                f"{c.category}: {c.kept} kept of {c.eligible} eligible ({c.matched} matches); "
                f"skipped: {skipped}"
            )
        most = self.distractor_use.most_common(1)
        if most:
            out.append(
                f"most frequent distractor: {most[0][0]} in {most[0][1]} scenarios "
                f"(cap {self.distractor_cap})"
            )
        out.append(f"items whose gold depends on rule order: {self.rule_order_dependent}")
        out.append(f"offered candidates with unknown evidence status: {self.unknown_statuses}")
        return out


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
        self.finder = ChainFinder(self.kg, self.rules.gold_path_shapes)
        self.judge = OutcomeJudge(self.kg, self.rules)
        self.clinical = Clinical(self.kg, self.finder, self.rules, self.judge)
        self.patterns = Patterns(self.finder, self.clinical, self.judge, self.rules)
        self.gold = GoldBuilder(self.clinical, self.judge, self.rules)
        memoise_distractor_questions(self.kg, self.judge, self.clinical, self.gold)
        self.patients = PatientMaker(self.rules)
        names = {e: ent["name"] for e, ent in self.kg.entities.items()}
        self.wording = Wording(
            names,
            self.rules.entity_profiles,
            self.rules.populations,
            self.rules.narrative,
            self.rules.stated_background,
        )
        self.pins = Pins(self.patterns, self.judge, self.wording, self.rules.source)
        self.report = GenerationReport()
        self.excluded = exclusions(self.rules, self.kg)

    def rng(self, category: str) -> random.Random:
        return random.Random(f"{self.seed}/{category}")

    # selection ---------------------------------------------------------------------------------

    def pool(self, rule: CategoryRule, stats: CategoryStats) -> list[Instance]:
        matched = self.patterns.instances(rule)
        stats.matched = len(matched)
        if not matched:
            raise UserError(
                f"category '{rule.category}' (pattern {rule.pattern}): no instance in the graph "
                f"of domain '{self.domain.name}'. {_missing(rule)} Relax the rule in "
                f"{self.rules.source} or add the evidence."
            )
        pool = sorted(
            (i for i in matched if self.patterns.admissible(i) and self.gold.feasible(i)),
            key=lambda i: (_orderable(i.key), i.path.ids if i.path else ()),
        )
        unique = list({i.key: i for i in reversed(pool)}.values())[::-1]
        stats.eligible = len(unique)
        return unique

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
        if patient is None:
            patient = self.make_patient(inst, candidates, rng)
        conditions = tuple(patient["condition_ids"])
        self.consistent(conditions, inst)
        gold = self.gold.gold(inst, candidates, conditions)
        focus = inst.focus or next(iter(inst.conditions), None)
        words = {
            "target": self.wording.outcome(inst.target),
            "population": self.wording.population(inst.population) if inst.population else "",
            "condition": self.wording.phrase(focus) if focus else "",
        }
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
        if inst.population is None:  # a domain without populations: the field is left out
            del record["population_id"]
        return record

    def consistent(self, conditions: tuple[str, ...], inst: Instance) -> None:
        """No finding the patient has excludes another finding, her population or the target
        (`incompatible_with` in entity_profiles, `exclusive_findings`); raises GoldError when
        one does."""
        for f, hit in clashes(self.excluded, conditions, (inst.population, inst.target)):
            raise GoldError(f"inconsistent findings: {f} with {', '.join(hit)}")

    def pregnancy_matters(self, candidates: list[str]) -> bool:
        pregnancy = self.patients.pregnancy_findings()
        return any(self.clinical.contraindications(c, pregnancy) for c in candidates)

    def make_patient(
        self, inst: Instance, candidates: list[str], rng: random.Random
    ) -> dict[str, Any]:
        relevant = (
            *inst.conditions,
            inst.population,
            *(inst.path.nodes if inst.path else ()),
            inst.target,
        )
        try:
            p = self.patients.make(
                rng, inst.population, inst.conditions, relevant, self.pregnancy_matters(candidates)
            )
        except ValueError as exc:  # a score threshold the population cannot meet
            raise GoldError(str(exc)) from None
        narrative = self.wording.narrative(
            p.age,
            p.sex,
            inst.population,
            p.findings,
            p.labs,
            p.pregnancy_status if p.pregnancy_matters else None,
            absent=self.wording.stated_background(candidates, p.findings),
        )
        return {
            "age": p.age,
            "sex": p.sex,
            "condition_ids": list(p.findings),
            "labs": [lab for lab, _ in p.labs],
            "pregnancy_status": p.pregnancy_status,
            "narrative": narrative,
        }

    def generate(self, per_category: int | None = None) -> list[dict[str, Any]]:
        n = per_category if per_category is not None else self.rules.per_category
        if n < 1:
            raise UserError(f"--per-category must be at least 1, got {n}")
        total = n * len(self.rules.categories)
        self.gold.cap = max(1, int(self.rules.distractor_share_max * total))
        self.report = GenerationReport(distractor_cap=self.gold.cap)
        records: list[dict[str, Any]] = []
        used_pairs: Counter = Counter()
        source = f"generated by kgbench generate (seed {self.seed})"
        for rule in self.rules.categories:
            stats = CategoryStats(rule.category)
            self.report.categories.append(stats)
            rng = self.rng(rule.category)
            pins = [p for p in self.rules.pinned if p["category"] == rule.category]
            if len(pins) > n:
                raise UserError(
                    f"category '{rule.category}' pins {len(pins)} scenarios in "
                    f"{self.rules.source}, more than the {n} requested"
                )
            for pin in pins:
                sid = self.rules.scenario_id(len(records) + 1)
                if pin["scenario_id"] != sid:
                    raise UserError(
                        f"pinned scenario {pin['scenario_id']} in {self.rules.source} would be "
                        f"numbered {sid}: pinned scenarios come first in their category's block, "
                        "in category order"
                    )
                inst, candidates = self.pins.instance(pin, rule)
                try:
                    record = self.scenario(
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
                except GoldError as exc:
                    raise UserError(
                        f"pinned scenario {pin['scenario_id']} in {self.rules.source}: {exc}"
                    ) from None
                used_pairs[(inst.preferred, inst.target)] += 1
                self.gold.commit(inst, candidates)
                stats.kept += 1
                records.append(record)
            records.extend(
                self._category(rule, n, len(pins), rng, used_pairs, stats, source, records)
            )
        item_judge = ItemJudge(self.domain, judge=self.judge)
        self.report.rule_order_dependent = rule_order_dependent(item_judge, records)
        self.report.unknown_statuses = unknown_statuses(self.judge, records)
        self.report.distractor_use = Counter(self.gold.used)
        problems = validate_records(
            self.domain, [(i + 1, r) for i, r in enumerate(records)], item_judge=item_judge
        )
        if problems:  # a broken invariant of the generator, not a user error
            raise AssertionError(
                "generated scenarios fail validation:\n" + "\n".join(map(str, problems))
            )
        return records

    def _category(
        self,
        rule: CategoryRule,
        requested: int,
        pinned: int,
        rng: random.Random,
        used_pairs: Counter,
        stats: CategoryStats,
        source: str,
        records: list[dict[str, Any]],
    ) -> list[dict[str, Any]]:
        n = requested - pinned
        if n <= 0:
            return []
        unique = self.pool(rule, stats)
        order = picks(unique, rng, Counter(used_pairs))
        out: list[dict[str, Any]] = []
        for inst in order:
            if len(out) == n:
                break
            if not self.gold.feasible(inst):
                stats.skipped["distractor cap"] += 1
                continue
            candidates, adds = self.gold.candidates(inst, rng)
            if len(candidates) < self.rules.candidates[0]:
                stats.skipped["too few distractors"] += 1
                continue
            if adds:
                inst = replace(inst, conditions=tuple(dict.fromkeys((*inst.conditions, *adds))))
            sid = self.rules.scenario_id(len(records) + len(out) + 1)
            try:
                record = self.scenario(rule, inst, candidates, rng, sid, source)
            except GoldError as exc:
                stats.skipped[str(exc).split(",")[0]] += 1
                continue
            used_pairs[(inst.preferred, inst.target)] += 1
            self.gold.commit(inst, candidates)
            stats.kept += 1
            out.append(record)
        if len(out) < n:
            raise UserError(
                f"category '{rule.category}': {requested} scenarios requested"
                + (f" ({pinned} pinned)" if pinned else "")
                + f", but the graph supports only {len(out) + pinned} "
                f"({stats.matched} pattern matches, {stats.eligible} eligible; "
                f"skipped: {dict(stats.skipped) or 'none'}). {_missing(rule)} Lower "
                f"--per-category, relax the rule in {self.rules.source}, or add the evidence."
            )
        return out


def _missing(rule: CategoryRule) -> str:
    """What evidence a category needs, in words (for the message when it finds too little)."""
    needs = {
        "causal_chain": "a qualified preferred (an outcome claim on the target for the "
        "population, backed by a trial or meta-analysis that studied it or a class 1/2a "
        "guideline recommendation) explained by a validated chain of the rule's kind",
        "multiple_pathways": "a qualified preferred with several validated chains through "
        "distinct final mediators",
        "association": "an associational (not causal) link from a marker to the target and a "
        "qualified preferred whose chain avoids the marker",
        "competing": "a qualified preferred and, in the same population, options with a "
        "validated chain to the target but no outcome evidence (or a null result) for it",
        "contraindication": "an option qualified for the target that a patient finding "
        "contraindicates, and a qualified alternative it does not",
        "adverse_effect": "a qualified preferred with a validated adverse effect and the "
        "mechanism behind it",
        "weak_evidence": "enough options with only weak, unvalidated or null evidence for a "
        "target, and none qualified",
        "goal_tie": "two options of different classes qualified for the target and a declared "
        "goal (scenarios.yaml goals) whose outcome only one of them has a qualifying claim on",
    }
    return f"It needs {needs.get(rule.pattern, 'instances')}."


def rule_order_dependent(judge: ItemJudge | OutcomeJudge, records: list[dict[str, Any]]) -> int:
    """Items whose gold a tie-break would decide, or whose answer is not the one the rules
    give: re-judged independently of how the item was built, by the judgement every gate
    shares (`audit.ItemJudge`)."""
    if isinstance(judge, OutcomeJudge):
        judge = ItemJudge(judge.kg.domain, judge=judge)
    return sum(1 for r in records if judge.item(r).outcome in WRONG_ANSWER)


def unknown_statuses(judge: OutcomeJudge, records: list[dict[str, Any]]) -> int:
    """Offered candidates whose evidence status the graph cannot settle, re-judged
    independently of how the items were built (the gold builder refuses them: target 0)."""
    return sum(
        1
        for r in records
        for c in r["candidates"]
        if not judge.judge(
            c["intervention_id"],
            r["target_outcome_id"],
            judge.kg.domain.population_of(r),
            tuple(r["patient"]["condition_ids"]),
        ).known
    )


def generate_file(
    domain: CompiledDomain,
    seed: int | None = None,
    per_category: int | None = None,
    out: Path | None = None,
) -> tuple[Path, list[dict[str, Any]], GenerationReport]:
    """Generate and write scenarios (JSON Lines, atomically); returns path, records, report."""
    gen = Generator(domain, seed)
    records = gen.generate(per_category)
    path = out or generated_set(domain)
    atomic_write_bytes(path, jsonl_bytes(records))
    return path, records, gen.report


def _orderable(key: tuple) -> tuple:
    """An instance key that sorts when a part is None in some keys and text in others (a
    population-less claim beside claims with a population: `make fuzz` found the TypeError).
    None sorts first; keys without None sort exactly as before, so no domain's items move."""
    return tuple((False, "") if part is None else (True, part) for part in key)

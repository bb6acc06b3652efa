"""The one judgement of an existing item (generated, hand-written, released) by the
evidence-anchored rules and the current graph; `kgbench audit` reports it set by set.

Every gate asks `ItemJudge.item`: `check-scenarios` and `publish` (through
`validation.validate_records`) refuse an item it does not leave unchanged, `audit` counts its
outcomes, `explain` prints its verdicts (an item without a written justification gets the one
computed now), and the generator's rule-order count re-judges its own output with it. So a
hand-written gold that the graph's own null result blocks fails every gate, not only audit.

For each item: which candidates qualify for the patient now, and what that means for its gold:
unchanged; the answer becomes an abstention (no candidate rests on outcome evidence); the answer
becomes another candidate; the item would not be generated (two candidates equally supported, so
a tie-break would decide); the gold accepted a contraindicated option or a heterogeneous class.
It reads the items' candidates, target, population and listed findings, so it works on 1.x
releases as well as new ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace
from typing import Any

from harness.compiled import CompiledDomain

from .evidence import Judgement, OutcomeJudge
from .goals import GoalRule, Resolution
from .kg import KnowledgeGraph
from .rules import load_rules

UNCHANGED = "unchanged"
ABSTAIN = "answer becomes abstain"
CHANGES = "answer changes"
TIE = "dropped: tie"
NARROWED = "acceptable set narrowed"
OUTCOMES = (UNCHANGED, ABSTAIN, CHANGES, TIE, NARROWED)
# outcomes where the gold's answer itself is not what the rules give
WRONG_ANSWER = (ABSTAIN, CHANGES, TIE)


@dataclass(frozen=True)
class ItemAudit:
    scenario_id: str
    category: str
    outcome: str
    old: str | None
    new: str | None  # the qualified candidate, None for abstain, "tie" for several
    detail: str
    verdicts: dict[str, Judgement] = field(default_factory=dict, compare=False, repr=False)
    record: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def unknown(self) -> tuple[str, ...]:
        """Candidates whose evidence status the graph cannot settle (target: none)."""
        return tuple(c for c, j in self.verdicts.items() if not j.known)


class ItemJudge:
    """Judges items of one compiled domain (memoised through one OutcomeJudge)."""

    def __init__(
        self,
        domain: CompiledDomain,
        kg: KnowledgeGraph | None = None,
        judge: OutcomeJudge | None = None,
    ) -> None:
        self.domain = domain
        self.kg = judge.kg if judge is not None else kg or KnowledgeGraph(domain)
        self.rules = judge.rules if judge is not None else load_rules(domain)
        self.judge = judge or OutcomeJudge(self.kg, self.rules)
        self.goals = GoalRule(self.judge, self.rules.goals)

    def verdicts(self, record: dict[str, Any]) -> dict[str, Judgement]:
        findings = tuple(record["patient"].get("condition_ids") or ())
        population = self.domain.population_of(record)
        return {
            c["intervention_id"]: self.judge.judge(
                c["intervention_id"], record["target_outcome_id"], population, findings
            )
            for c in record["candidates"]
        }

    def resolution(
        self, record: dict[str, Any], verdicts: dict[str, Judgement] | None = None
    ) -> Resolution | None:
        """The patient's stated goal settling a tie among the qualified candidates (goals.py);
        None when there is no tie, no stated goal, or the goal does not settle it."""
        verdicts = verdicts if verdicts is not None else self.verdicts(record)
        qualified = sorted(c for c, j in verdicts.items() if j.qualified)
        findings = tuple(record["patient"].get("condition_ids") or ())
        return self.goals.resolve(qualified, self.domain.population_of(record), findings)

    def item(self, record: dict[str, Any]) -> ItemAudit:
        kg = self.kg
        gold = record["gold"]
        verdicts = self.verdicts(record)
        qualified = sorted(c for c, j in verdicts.items() if j.qualified)
        settled = self.resolution(record, verdicts)
        if settled is not None:  # a stated goal picks one; the others stay acceptable
            qualified = [settled.preferred]
        old = gold.get("preferred_intervention")
        acceptable = gold.get("acceptable_interventions") or ()
        wildcards = [a for a in acceptable if a in kg.group_ids and a not in kg.homogeneous]
        contraindicated = [
            a for a in acceptable if a in verdicts and verdicts[a].status == "contraindicated"
        ]
        if len(qualified) > 1:
            outcome, new = TIE, "tie"
            detail = "equally qualified: " + ", ".join(qualified)
        elif not qualified and old is not None:
            status = verdicts[old].status if old in verdicts else "not a candidate"
            outcome, new, detail = ABSTAIN, None, f"{old}: {status}"
        elif qualified and qualified[0] != old:
            outcome, new = CHANGES, qualified[0]
            detail = f"{old or 'abstain'} -> {new}"
            if settled is not None:
                detail += f" (the stated goal {settled.goal.finding} settles the tie)"
            elif old in verdicts:
                detail += f" ({old}: {verdicts[old].status})"
        elif wildcards or contraindicated:
            outcome, new = NARROWED, old
            detail = "removed " + ", ".join([*wildcards, *contraindicated])
        else:
            outcome, new, detail = UNCHANGED, old, ""
        return ItemAudit(
            record["scenario_id"], record["category"], outcome, old, new, detail, verdicts, record
        )

    def problem(self, item: ItemAudit) -> str | None:
        """The judgement as a check-scenarios message, when the gold's answer is not the one
        the rules give (None otherwise; a narrowed acceptable set has its own messages)."""
        if item.outcome not in WRONG_ANSWER:
            return None
        blocked = ""
        old = item.verdicts.get(item.old) if item.old else None
        if old is not None and not old.qualified:
            why = old.status.replace("_", " ")
            ids = [*old.blocking, *old.contraindications, *(a for a, _ in old.weak)]
            blocked = f"'{item.old}' is not qualified for this patient ({why}"
            blocked += f": {', '.join(ids)}); " if ids else "); "
        if item.outcome == TIE:
            goals = ""
            if self.goals.goals:  # the domain declares goals, but none settles this tie
                goals = (
                    "; no goal the patient states ("
                    + ", ".join(g.finding for g in self.goals.goals)
                    + " in condition_ids) is served by exactly one of them"
                )
            return (
                f"{blocked}{item.detail}: the gold would rest on a tie-break, not on evidence"
                f"{goals} (kgbench explain shows each verdict)"
            )
        hint = ""
        if old is not None and old.status == "no_outcome_evidence" and item.old:
            population = self.domain.population_of(item.record)
            target = item.record["target_outcome_id"]
            hint = "; " + what_would_qualify(self.judge, item.old, target, population)
            chains = [
                c
                for c in self._builder.clinical.chains(
                    item.old, target, self.rules.distractor_exclusion, population
                )
                if c.hops > 1
            ]
            if chains:  # name the chain it does have: it explains, it does not qualify
                hint += f" (its chain {' -> '.join(chains[0].ids)} is a mechanism)"
        if item.new is None:
            return (
                f"{blocked}no candidate rests on outcome evidence for this patient, so the "
                "answer is to abstain (preferred null, nothing acceptable, expects_uncertainty)"
                + hint
            )
        return (
            f"{blocked}the evidence rules give '{item.new}' (outcome evidence: "
            f"{', '.join(c.assertion_id for c in item.verdicts[item.new].claims)}), "
            f"not {repr(item.old) if item.old else 'abstention'}{hint}"
        )

    # justification of an item that carries none (hand-written) --------------------------------

    @cached_property
    def _builder(self):
        from .chains import ChainFinder
        from .clinical import Clinical
        from .gold import GoldBuilder

        finder = ChainFinder(self.kg, self.rules.gold_path_shapes)
        clinical = Clinical(self.kg, finder, self.rules, self.judge)
        return GoldBuilder(clinical, self.judge, self.rules)

    def justification(self, record: dict[str, Any]) -> dict[str, Any]:
        """The justification the generator would write for the item's candidates (each
        candidate's verdict, reason, assertions, sources and summary), computed now."""
        from .gold import RULES_VERSION

        verdicts = self.verdicts(record)
        inst = SimpleNamespace(
            target=record["target_outcome_id"], population=self.domain.population_of(record)
        )
        settled = self.resolution(record, verdicts)
        return {
            "rules": f"{RULES_VERSION} (computed now; the item carries no justification)",
            "candidates": [
                self._builder._judgement(inst, c, verdicts[c], settled)  # type: ignore[arg-type]
                for c in verdicts
            ],
        }


def what_would_qualify(
    judge: OutcomeJudge, candidate: str, target: str, population: str | None
) -> str:
    """For a candidate with no qualifying outcome claim: the claim that would qualify it (issue
    29 item 6: a surrogate target such as HbA1c needs a direct claim too), and why the claims
    it has fall short."""
    kg, policy = judge.kg, judge.policy
    where = f" in {kg.name_of(population)} ({population})" if population else ""
    text = (
        f"{kg.name_of(candidate)} ({candidate}) has no qualifying outcome claim on "
        f"{kg.name_of(target)} ({target}){where}; a direct claim would qualify it: "
        f"{candidate} (or a homogeneous class of it) lowering {target}, validated, causal, at "
        f"{' or '.join(policy.evidence_levels)} certainty, supported by a "
        f"{' or '.join(policy.study_source_types)} that studied {candidate} or a "
        f"{' or '.join(policy.guideline_source_types)} link with recommendation class "
        f"{' or '.join(policy.guideline_classes)}; a mechanism chain never does"
    )
    weak = judge.judge(candidate, target, population, ()).weak  # type: ignore[arg-type]
    if weak:
        text += " (its claims fall short: " + "; ".join(f"{a}: {why}" for a, why in weak) + ")"
    return text


def audit(domain: CompiledDomain, records: list[dict[str, Any]]) -> list[ItemAudit]:
    judge = ItemJudge(domain)
    return [judge.item(r) for r in records]


def summary(items: list[ItemAudit]) -> list[tuple[str, Counter]]:
    """Per category (in order of appearance), how many items fall under each outcome."""
    by: dict[str, Counter] = {}
    for i in items:
        by.setdefault(i.category, Counter())[i.outcome] += 1
    return list(by.items())

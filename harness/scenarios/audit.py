"""`kgbench audit`: re-judge an existing scenario set (a release, a hand-written file) by the
evidence-anchored rules and the current graph, item by item.

For each item: which candidates qualify for the patient now, and what that means for its gold:
unchanged; the answer becomes an abstention (no candidate rests on outcome evidence); the answer
becomes another candidate; the item would not be generated (two candidates equally supported, so
a tie-break would decide); the gold accepted a contraindicated option or a heterogeneous class.
It reads the items' candidates, target, population and listed findings, so it works on 1.x
releases as well as new ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from harness.compiled import CompiledDomain

from .evidence import OutcomeJudge
from .kg import KnowledgeGraph
from .rules import load_rules

OUTCOMES = (
    "unchanged",
    "answer becomes abstain",
    "answer changes",
    "dropped: tie",
    "acceptable set narrowed",
)


@dataclass(frozen=True)
class ItemAudit:
    scenario_id: str
    category: str
    outcome: str
    old: str | None
    new: str | None  # the qualified candidate, None for abstain, "tie" for several
    detail: str
    unknown: tuple[str, ...] = ()  # candidates whose evidence status the graph cannot settle


def audit(domain: CompiledDomain, records: list[dict[str, Any]]) -> list[ItemAudit]:
    kg = KnowledgeGraph(domain)
    judge = OutcomeJudge(kg, load_rules(domain))
    out = []
    for r in records:
        gold = r["gold"]
        findings = tuple(r["patient"].get("condition_ids") or ())
        verdicts = {
            c["intervention_id"]: judge.judge(
                c["intervention_id"], r["target_outcome_id"], domain.population_of(r), findings
            )
            for c in r["candidates"]
        }
        qualified = sorted(c for c, j in verdicts.items() if j.qualified)
        old = gold.get("preferred_intervention")
        wildcards = [
            a
            for a in gold.get("acceptable_interventions") or ()
            if a in kg.group_ids and a not in kg.homogeneous
        ]
        contraindicated = [
            a
            for a in gold.get("acceptable_interventions") or ()
            if a in verdicts and verdicts[a].status == "contraindicated"
        ]
        if len(qualified) > 1:
            outcome, new, detail = (
                "dropped: tie",
                "tie",
                "equally qualified: " + ", ".join(qualified),
            )
        elif not qualified and old is not None:
            status = verdicts[old].status if old in verdicts else "not a candidate"
            outcome, new, detail = "answer becomes abstain", None, f"{old}: {status}"
        elif qualified and qualified[0] != old:
            outcome, new = "answer changes", qualified[0]
            detail = f"{old or 'abstain'} -> {new}"
        elif wildcards or contraindicated:
            outcome, new = "acceptable set narrowed", old
            detail = "removed " + ", ".join([*wildcards, *contraindicated])
        else:
            outcome, new, detail = "unchanged", old, ""
        unknown = tuple(c for c, j in verdicts.items() if not j.known)
        out.append(ItemAudit(r["scenario_id"], r["category"], outcome, old, new, detail, unknown))
    return out


def summary(items: list[ItemAudit]) -> list[tuple[str, Counter]]:
    """Per category (in order of appearance), how many items fall under each outcome."""
    by: dict[str, Counter] = {}
    for i in items:
        by.setdefault(i.category, Counter())[i.outcome] += 1
    return list(by.items())

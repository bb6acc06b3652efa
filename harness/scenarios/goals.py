"""Patient goals: the one rule that may settle a tie between equally qualified candidates.

A domain may declare goal findings in scenarios.yaml (`goals`): a priority the patient states
(weight loss), held as a finding, and the outcome it points to (excess body weight). When
several candidates are qualified for the target (each by its own outcome evidence, so the
benchmark would otherwise drop the item as a tie), the candidate that the same outcome-evidence
rule also qualifies for lowering the outcome of a goal the patient states is preferred, and
the other qualified candidates stay acceptable. Serving a goal takes a direct, trial- or
recommendation-backed claim on its outcome, exactly as qualifying for a target does; a
mechanism chain never does.

Without a stated goal, or when no candidate or more than one serves the stated goals, nothing
is resolved: the tie rule stands. A domain without `goals` is judged exactly as before.
Every gate asks this module through `audit.ItemJudge` and the gold builder, so the generator,
`check-scenarios`, `audit` and `explain` agree on a goal-resolved item.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .evidence import Judgement, OutcomeJudge


@dataclass(frozen=True)
class Goal:
    finding: str  # the goal finding the patient holds (a condition id)
    outcome: str  # the outcome the goal points to

    @classmethod
    def declared(cls, goals: Iterable[dict]) -> tuple[Goal, ...]:
        return tuple(cls(g["finding"], g["outcome"]) for g in goals)


@dataclass(frozen=True)
class Resolution:
    """A tie settled by a stated goal: the preferred, the goal it serves (with the judgement
    that qualifies it for the goal's outcome) and the other qualified candidates (acceptable)."""

    preferred: str
    goal: Goal
    served: Judgement
    acceptable: tuple[str, ...]


class GoalRule:
    """The declared goals of one domain, judged by its one OutcomeJudge."""

    def __init__(self, judge: OutcomeJudge, goals: Iterable[dict]) -> None:
        self.judge = judge
        self.goals = Goal.declared(goals)

    def stated(self, findings: Iterable[str]) -> tuple[Goal, ...]:
        """The declared goals among the patient's findings, in declaration order."""
        held = set(findings)
        return tuple(g for g in self.goals if g.finding in held)

    def serves(
        self, candidate: str, goal: Goal, population: str | None, findings: Sequence[str]
    ) -> Judgement:
        return self.judge.judge(candidate, goal.outcome, population, tuple(findings))  # type: ignore[arg-type]

    def resolve(
        self, qualified: Sequence[str], population: str | None, findings: Sequence[str]
    ) -> Resolution | None:
        """The qualified candidate that alone serves a stated goal, or None (the tie stands:
        fewer than two qualified, no goal stated, or none or several serving the goals)."""
        goals = self.stated(findings)
        if len(qualified) < 2 or not goals:
            return None
        serving: dict[str, tuple[Goal, Judgement]] = {}
        for c in qualified:
            for g in goals:
                j = self.serves(c, g, population, findings)
                if j.qualified:
                    serving.setdefault(c, (g, j))
        if len(serving) != 1:
            return None
        ((preferred, (goal, served)),) = serving.items()
        others = tuple(sorted(c for c in qualified if c != preferred))
        return Resolution(preferred, goal, served, others)

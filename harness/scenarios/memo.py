"""Memoising the pure graph questions that the distractor pools ask over and over.

Checking which instances of a category are feasible builds a distractor pool per instance
(`GoldBuilder.pool`), and each pool asks the same questions of every intervention: what it
treats, whether it is indicated for the patient's findings in the population, whether it
qualifies for a sibling outcome. On the larger bundled domain that was 6,110 pools and about
400,000 such questions, nearly all repeats. Their answers depend only on the graph and the rules, which do
not change during a run, so each is computed once per distinct question. The wrapper sits on
the instances (the composition root installs it), so the modules that own the questions keep
their plain definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any


def memoise(
    owner: object,
    name: str,
    key: Callable[..., Hashable] | None = None,
    freeze: Callable[[Any], Any] | None = None,
) -> None:
    """Replace `owner.name` (a method whose answer depends only on its arguments) by a
    memoised one. `key` turns the arguments into a hashable key (default: the arguments).
    The answers are shared between calls, so they must be immutable (tuples, booleans), or
    made so by `freeze` (a set becomes a frozenset)."""
    method = getattr(owner, name)
    cache: dict[Hashable, Any] = {}

    def memoised(*args: Any, **kwargs: Any) -> Any:
        if kwargs:  # keyword calls are rare: answered, not memoised
            return method(*args, **kwargs)
        k = key(*args) if key is not None else args
        try:
            return cache[k]
        except KeyError:
            answer = method(*args)
            cache[k] = answer = freeze(answer) if freeze is not None else answer
            return answer
        except TypeError:  # an unhashable argument (a set of findings): answered, not memoised
            return method(*args)

    memoised.__doc__ = method.__doc__
    setattr(owner, name, memoised)


def memoise_distractor_questions(kg: object, judge: object, clinical: object, gold: object) -> None:
    """The questions `GoldBuilder.pool` asks per intervention, memoised on these instances.
    `OutcomeJudge.judge` keeps its own cache, keyed by the sorted set of findings; the memo in
    front of it answers a repeat with the very same arguments without re-sorting them."""
    memoise(kg, "kinds", freeze=frozenset)
    memoise(judge, "judge")
    memoise(clinical, "treats")
    memoise(clinical, "indicated_for", key=lambda d, found, pop: (d, frozenset(found), pop))
    memoise(gold, "_sibling")

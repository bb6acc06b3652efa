"""Scenario selection: the heap picks exactly what the plain greedy scan picks, and the memo in
front of the distractor questions answers exactly what the questions answer."""

from __future__ import annotations

import random
from collections import Counter
from itertools import islice

import pytest

from harness.scenarios.memo import memoise
from harness.scenarios.patterns import Instance
from harness.scenarios.selection import picks, spread


def reference_spread(
    pool: list[Instance], n: int, rng: random.Random, used_pairs: Counter
) -> list[Instance]:
    """The straightforward definition: one full scan of the pool per pick, for the least
    used group, then preferred, then (preferred, target) pair, then target, then shuffled
    position."""
    unique = list(pool)
    rng.shuffle(unique)
    chosen: list[Instance] = []
    groups: Counter = Counter()
    preferred: Counter = Counter()
    targets: Counter = Counter()
    while len(chosen) < n:
        j = min(
            range(len(unique)),
            key=lambda k: (
                groups[unique[k].group],
                preferred[unique[k].preferred],
                used_pairs[(unique[k].preferred, unique[k].target)],
                targets[unique[k].target],
                k,
            ),
        )
        inst = unique.pop(j)
        chosen.append(inst)
        groups[inst.group] += 1
        preferred[inst.preferred] += 1
        targets[inst.target] += 1
        used_pairs[(inst.preferred, inst.target)] += 1
    return chosen


def random_pool(rnd: random.Random, size: int, spread_of_values: int) -> list[Instance]:
    """Instances whose group, preferred and target repeat a lot (few distinct values), so
    counts tie and rise often: the cases where a stale heap key would show."""
    values = max(1, spread_of_values)
    pool = []
    for i in range(size):
        preferred = rnd.choice([None, *(f"DRG_{k}" for k in range(values))])
        pool.append(
            Instance(
                category="c",
                preferred=preferred,
                target=f"OUT_{rnd.randrange(values)}",
                population=None,
                path=None,
                anchors=(f"ASR_{i}",),
                conditions=(),
                group=rnd.choice([preferred or "", f"ANC_{rnd.randrange(values)}"]),
                key=(i,),
            )
        )
    return pool


@pytest.mark.parametrize("trial", range(40))
def test_heap_selection_equals_the_greedy_scan(trial: int) -> None:
    rnd = random.Random(trial)
    pool = random_pool(rnd, rnd.randrange(1, 120), rnd.randrange(1, 12))
    prior = Counter(
        {(f"DRG_{rnd.randrange(5)}", f"OUT_{rnd.randrange(5)}"): rnd.randrange(3) for _ in range(4)}
    )
    n = rnd.randrange(1, len(pool) + 1)
    ref_pairs, fast_pairs = Counter(prior), Counter(prior)
    expected = reference_spread(pool, n, random.Random(f"seed/{trial}"), ref_pairs)
    got = spread(pool, n, random.Random(f"seed/{trial}"), fast_pairs)
    assert [i.key for i in got] == [i.key for i in expected]
    assert fast_pairs == ref_pairs  # the shared pair counts advance alike


def test_lazy_picks_are_a_prefix_of_the_full_order_and_shuffle_up_front() -> None:
    rnd = random.Random(5)
    pool = random_pool(rnd, 300, 4)
    full = spread(pool, len(pool), random.Random(9), Counter())
    rng = random.Random(9)
    lazy = picks(pool, rng, Counter())
    after_shuffle = rng.random()  # the generator draws from rng before asking for a pick
    check = random.Random(9)
    check.shuffle(list(pool))
    assert after_shuffle == check.random()
    assert [i.key for i in islice(lazy, 10)] == [i.key for i in full[:10]]
    assert sorted(i.key for i in full) == sorted(i.key for i in pool)  # each instance once


def test_picks_no_instance_twice_and_prefers_the_unused_group() -> None:
    def inst(i: int, group: str) -> Instance:
        return Instance("c", f"DRG_{i}", f"OUT_{i}", None, None, (), (), group=group, key=(i,))

    pool = [inst(0, "A"), inst(1, "A"), inst(2, "A"), inst(3, "B")]
    first_two = spread(pool, 2, random.Random(1), Counter())
    # whichever A comes first, the second pick is B: an unused group beats a used one
    assert {i.group for i in first_two} == {"A", "B"}
    assert len({i.key for i in spread(pool, 4, random.Random(1), Counter())}) == 4


class Questions:
    def __init__(self) -> None:
        self.asked: Counter = Counter()

    def kinds(self, d: str) -> set[str]:
        self.asked[("kinds", d)] += 1
        return {f"class of {d}"}

    def indicated_for(self, d: str, found, pop: str) -> bool:
        self.asked[("indicated_for", d)] += 1
        return d in set(found)


def test_memo_answers_what_the_method_answers_and_asks_once() -> None:
    plain, memo = Questions(), Questions()
    memoise(memo, "kinds", freeze=frozenset)
    memoise(memo, "indicated_for", key=lambda d, found, pop: (d, frozenset(found), pop))
    for d in ["a", "b", "a", "a"]:
        assert memo.kinds(d) == plain.kinds(d)
    assert isinstance(memo.kinds("a"), frozenset)  # a shared answer cannot be changed
    assert memo.asked[("kinds", "a")] == 1
    # a set and a list of the same findings are one question; other findings another
    assert memo.indicated_for("a", {"a", "x"}, "P") is True
    assert memo.indicated_for("a", ["x", "a"], "P") is True
    assert memo.indicated_for("a", ["x"], "P") is False
    assert memo.asked[("indicated_for", "a")] == 2


def test_memo_answers_unhashable_and_keyword_calls_without_keeping_them() -> None:
    memo = Questions()
    memoise(memo, "indicated_for")  # default key: the arguments, here a set (unhashable)
    assert memo.indicated_for("a", {"a"}, "P") is True
    assert memo.indicated_for("a", {"a"}, "P") is True
    assert memo.asked[("indicated_for", "a")] == 2
    assert memo.indicated_for("b", found=("b",), pop="P") is True

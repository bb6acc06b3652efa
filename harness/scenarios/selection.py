"""Picking N distinct, spread-out instances of a category with a seeded random generator.

The pool is shuffled once, then filled greedily: an instance whose group (its anchor or
preferred intervention), preferred intervention, (intervention, target) pair (across the
categories generated so far) or target was used less comes first; the shuffled position
breaks ties. So the same graph and seed give the same pick, and no intervention or anchor
dominates a category while others are unused.

The greedy choice is a heap with lazy re-keying, not a scan of the pool per pick (a pool of
5,252 instances took 13.8 M key evaluations to order in full). Use counts only grow, so a
stored key is never above its instance's current key: when the smallest stored key is still
current, its instance is the scan's choice, ties included (the shuffled position is the last
element of every key, and the positions are distinct). `picks` yields lazily, so a caller that
needs the first ten of a large pool pays for ten picks.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter
from collections.abc import Iterator
from itertools import islice

from .patterns import Instance


def picks(pool: list[Instance], rng: random.Random, used_pairs: Counter) -> Iterator[Instance]:
    """Every instance of `pool`, most spread-out first; updates `used_pairs` as each is
    yielded. The pool is shuffled here, before the first pick is asked for."""
    order = list(pool)
    rng.shuffle(order)
    return _greedy(order, used_pairs)


def spread(pool: list[Instance], n: int, rng: random.Random, used_pairs: Counter) -> list[Instance]:
    """`n` instances from `pool` (which holds at least `n`); updates `used_pairs`."""
    return list(islice(picks(pool, rng, used_pairs), n))


def _greedy(order: list[Instance], used_pairs: Counter) -> Iterator[Instance]:
    groups: Counter = Counter()
    preferred: Counter = Counter()
    targets: Counter = Counter()

    def key(pos: int, inst: Instance) -> tuple[int, int, int, int, int]:
        return (
            groups[inst.group],
            preferred[inst.preferred],
            used_pairs[(inst.preferred, inst.target)],
            targets[inst.target],
            pos,
        )

    heap = [(key(pos, inst), inst) for pos, inst in enumerate(order)]
    heapq.heapify(heap)
    while heap:
        stored, inst = heap[0]
        current = key(stored[-1], inst)
        if current != stored:  # a count rose since it was keyed: file it again
            heapq.heapreplace(heap, (current, inst))
            continue
        heapq.heappop(heap)
        groups[inst.group] += 1
        preferred[inst.preferred] += 1
        targets[inst.target] += 1
        used_pairs[(inst.preferred, inst.target)] += 1
        yield inst

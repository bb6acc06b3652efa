"""Picking N distinct, spread-out instances of a category with a seeded random generator.

The pool is shuffled once, then filled greedily: an instance whose group (its anchor or
preferred intervention), preferred intervention, (intervention, target) pair (across the
categories generated so far) or target was used less comes first; the shuffled position
breaks ties. So the same graph and seed give the same pick, and no intervention or anchor
dominates a category while others are unused.
"""

from __future__ import annotations

import random
from collections import Counter

from .patterns import Instance


def spread(pool: list[Instance], n: int, rng: random.Random, used_pairs: Counter) -> list[Instance]:
    """`n` instances from `pool` (which holds at least `n`); updates `used_pairs`."""
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

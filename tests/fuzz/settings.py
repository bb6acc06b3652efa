"""How hard the fuzz targets push: a brief, reproducible pass in `make test`, a long random
one in `make fuzz`, sized by time.

- `make test`: `KGBENCH_FUZZ_EXAMPLES` examples per cheap target (default 40), fewer for the
  dear ones (`budget`'s divisor), derandomized, so it is the same run every time.
- `make fuzz`: `KGBENCH_FUZZ_SECONDS` CPU seconds per target (the Makefile's FUZZ_SECONDS)
  and `KGBENCH_FUZZ_RANDOM=1`, so every run explores new inputs (failures are kept in
  .hypothesis/ and replayed first next time). Each target gets as many examples as fit its
  seconds at its measured cost per example (`ms`, CPU milliseconds, declared beside each
  target; tests/fuzz/README.md says how they were measured, and every random run prints
  them again at its end, tests/fuzz/conftest.py). CPU time, unlike wall time, does not
  depend on what else the machine runs, so the budget holds on a shared machine too; there
  the wall time is longer by the share of the cores the run gets.
- `KGBENCH_FUZZ_RANDOM=1` with `KGBENCH_FUZZ_EXAMPLES` and no seconds: a count per target, as
  before (the divisors apply).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("KGBENCH_FUZZ_EXAMPLES", "40"))
RANDOM = os.environ.get("KGBENCH_FUZZ_RANDOM", "") not in ("", "0")
SECONDS = float(os.environ.get("KGBENCH_FUZZ_SECONDS", "0") or 0)

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not RANDOM,
    database=None if not RANDOM else settings.default.database,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)


def examples(ms: float, divisor: int = 1, floor: int = 3, cap: int | None = None) -> int:
    """A target's examples: with KGBENCH_FUZZ_SECONDS, those seconds over its cost of `ms`
    CPU milliseconds per example; else KGBENCH_FUZZ_EXAMPLES // `divisor` (at most `cap`
    when derandomized: `make test`'s pass of a dear target), at least `floor`."""
    if SECONDS > 0:
        return max(floor, int(SECONDS * 1000 / ms))
    count = EXAMPLES // divisor
    if cap is not None and not RANDOM:
        count = min(count, cap)
    return max(floor, count)


def budget(ms: float, divisor: int = 1, floor: int = 3, cap: int | None = None) -> settings:
    """FUZZ with `examples(...)` examples: the decorator every target wears."""
    return settings(FUZZ, max_examples=examples(ms, divisor, floor, cap))

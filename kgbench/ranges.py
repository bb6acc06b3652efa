"""The declared range of every numeric value a user gives kgbench, checked where it enters.

A command-line option or a declaration that takes a number takes it within a finite range
declared here, once, so the command line, the study file and the reference server agree.
NaN and infinity are refused everywhere: NaN passes every `lo <= x <= hi` check written as
two negated comparisons (a study's `error_rate: .nan` silently ran another baseline) and is
not JSON (`--temperature nan` was written into run.json as a bare `NaN`). An integer far past
any sensible value is refused before it is used (`--replicates 1000000000` grew memory
without bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kgbench.errors import Location, UserError


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    integer: bool = False
    what: str = ""

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a finite number"
        low = int(self.low) if self.integer else self.low
        high = int(self.high) if self.integer else self.high
        return f"{kind} from {low} to {high}"


RANGES: dict[str, Range] = {
    # kgbench run (and the study file's sampling)
    "replicates": Range(1, 100, integer=True),
    "temperature": Range(0.0, 2.0),  # the OpenAI chat API's own range
    "timeout": Range(0.001, 86_400.0),
    "price": Range(0.0, 1_000_000.0),  # USD per 1M tokens
    "concurrency": Range(1, 1024, integer=True),
    "max_attempts": Range(1, 100, integer=True),
    "max_tokens": Range(1, 10_000_000, integer=True),
    "backoff": Range(0.0, 86_400.0),
    "poll": Range(0.001, 86_400.0),
    # reference server
    "port": Range(0, 65_535, integer=True),
    "latency_ms": Range(0.0, 600_000.0),
    "rate": Range(0.0, 1.0),  # error and fault rates
    # statistics
    "bootstrap": Range(100, 1_000_000, integer=True),
    # graph loading
    "batch_size": Range(1, 1_000_000, integer=True),
}


def check(
    name: str, value: float | int | None, kind: str, location: Location | None = None
) -> float | int | None:
    """`value` if it lies in the declared range `kind`, else one UserError naming `name`;
    None (an option not given) passes."""
    if value is None:
        return None
    bounds = RANGES[kind]
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and bounds.low <= value <= bounds.high
        and (not bounds.integer or float(value).is_integer())
    )
    if not ok:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
        raise UserError(f"{name} must be {bounds.describe()}, got {shown}", location)
    return value

"""Adaptive concurrency (AIMD) and retry backoff.

The concurrency limit starts at the maximum, halves on a 429 and grows by one after a run
of successes as long as the current limit, never above the maximum: the TCP recipe, which
finds the rate a server tolerates without a configuration knob. A burst of 429s from
requests that were already in flight when the limit dropped counts as one signal (each
decrease opens a new epoch; a 429 from an older epoch does not halve again).

`AIMDController` is pure (no clock, no asyncio) so it can be unit-tested; `AdaptiveLimiter`
wraps it for asyncio; `backoff_delay` is exponential backoff with full jitter.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field


@dataclass
class AIMDController:
    max_limit: int
    limit: int = 0
    epoch: int = 0
    streak: int = 0
    decreases: int = 0
    history: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.max_limit < 1:
            raise ValueError("max_limit must be at least 1")
        self.limit = self.limit or self.max_limit

    def on_success(self) -> None:
        self.streak += 1
        if self.streak >= self.limit and self.limit < self.max_limit:
            self.limit += 1
            self.streak = 0
            self.history.append(self.limit)

    def on_rate_limited(self, started_epoch: int) -> bool:
        """Halve the limit unless this 429 belongs to an epoch already answered; True if it
        decreased."""
        self.streak = 0
        if started_epoch < self.epoch:
            return False
        self.limit = max(1, self.limit // 2)
        self.epoch += 1
        self.decreases += 1
        self.history.append(self.limit)
        return True


class AdaptiveLimiter:
    """An asyncio semaphore whose size follows an AIMDController."""

    def __init__(self, controller: AIMDController) -> None:
        self.controller = controller
        self.in_flight = 0
        self._cond = asyncio.Condition()

    @property
    def limit(self) -> int:
        return self.controller.limit

    async def acquire(self) -> int:
        """Wait for a slot; return the epoch the request starts in."""
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.controller.limit)
            self.in_flight += 1
            return self.controller.epoch

    async def release(self, outcome: str, epoch: int) -> None:
        """`outcome` is `ok`, `rate_limited` or anything else (neutral)."""
        async with self._cond:
            self.in_flight -= 1
            if outcome == "ok":
                self.controller.on_success()
            elif outcome == "rate_limited":
                self.controller.on_rate_limited(epoch)
            self._cond.notify_all()


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Full jitter: uniform in [0, min(cap, base * 2**attempt)] for the 0-based retry number."""
    ceiling = min(cap, base * (2**attempt))
    return (rng or random).uniform(0, ceiling)

"""Deterministic fault injection for the reference server.

Whether a request fails is a pure function of (seed, request body, how many times the server
has seen that body), not of arrival order: concurrent clients interleave differently on every
run, yet the same seed still injects the same faults into the same requests.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

FAULT_KINDS = ("429", "500", "drop", "timeout", "malformed", "truncated")
"""Every kind the server can inject; `malformed` and `truncated` are answers, not errors."""


def parse_fault_kinds(text: str) -> tuple[str, ...]:
    """Parse `429,500,drop` into a tuple; unknown names raise ValueError naming the known ones."""
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in FAULT_KINDS]
    if unknown:
        raise ValueError(
            f"unknown fault kind(s) {', '.join(unknown)}; known: {', '.join(FAULT_KINDS)}"
        )
    return kinds


@dataclass(frozen=True)
class FaultPlan:
    """Inject one of `kinds` into a fraction `rate` of requests, reproducibly from `seed`."""

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 0

    def decide(self, body_digest: str, nth: int) -> str | None:
        """The fault for the `nth` (0-based) sighting of a body with this digest, or None."""
        if self.rate <= 0 or not self.kinds:
            return None
        h = hashlib.sha256(f"{self.seed}:{body_digest}:{nth}".encode()).digest()
        draw = int.from_bytes(h[:8], "big") / 2**64
        if draw >= self.rate:
            return None
        return self.kinds[int.from_bytes(h[8:12], "big") % len(self.kinds)]

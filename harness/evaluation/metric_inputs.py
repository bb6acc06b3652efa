"""What a metric kind reads besides the two values it compares: the lexicon, the retrieved
context, the whole response and gold, and the metric's own declaration.

A module of its own so that the kind modules (harness.evaluation.metrics, harness.evaluation.claims) share it
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.evaluation.lexicon import Lexicon
from kgbench.contract import Metric


@dataclass(frozen=True)
class MetricInputs:
    lexicon: Lexicon
    context: dict[str, Any] | None
    response: dict[str, Any]
    gold: dict[str, Any] | None = None  # the whole gold (the chain kinds read its chains)
    spec: Metric | None = None  # the metric being scored (its reading, its claim_support)

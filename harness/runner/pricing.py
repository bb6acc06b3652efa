"""Cost estimates: USD per 1M input/output tokens, from --price-in/--price-out or a table.

The table holds list prices of known OpenAI models (standard tier, as published in 2025); it
goes stale, so the summary always says where a price came from, and an unknown model costs 0
with a warning rather than a guess. The Batch API is billed at half price on api.openai.com.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .spec import ModelSpec

PRICES_PER_1M: dict[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "o1": (15.00, 60.00),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
}
BATCH_DISCOUNT = 0.5
_DATED = re.compile(r"^-\d{4}-\d{2}-\d{2}$|^-\d{4}$")


@dataclass(frozen=True)
class Prices:
    """Per-1M-token prices and where they came from (`user`, `table`, `unknown`, `endpoint`, `free`)."""

    per_1m_in: float
    per_1m_out: float
    source: str

    def cost(self, usage: dict | None, batch: bool = False, spec: ModelSpec | None = None) -> float:
        if not usage:
            return 0.0
        tokens_in = int(usage.get("prompt_tokens") or 0)
        tokens_out = int(usage.get("completion_tokens") or 0)
        cost = (tokens_in * self.per_1m_in + tokens_out * self.per_1m_out) / 1_000_000
        if batch and spec is not None and spec.is_openai_platform:
            cost *= BATCH_DISCOUNT
        return round(cost, 8)

    def describe(self) -> str:
        where = {
            "user": "from --price-in/--price-out",
            "table": "list price from the built-in table; override with --price-in/--price-out",
            "unknown": "unknown model: cost counted as 0; pass --price-in/--price-out",
            "free": "reference responder",
            "endpoint": "custom endpoint: cost counted as 0; pass --price-in/--price-out",
        }[self.source]
        return f"${self.per_1m_in:g} in / ${self.per_1m_out:g} out per 1M tokens ({where})"


def table_price(model: str) -> tuple[float, float] | None:
    """The table entry for a model name, allowing a date suffix (`gpt-4o-2024-08-06`)."""
    if model in PRICES_PER_1M:
        return PRICES_PER_1M[model]
    for name in sorted(PRICES_PER_1M, key=len, reverse=True):
        if model.startswith(name) and _DATED.match(model[len(name) :]):
            return PRICES_PER_1M[name]
    return None


def resolve_prices(spec: ModelSpec, price_in: float | None, price_out: float | None) -> Prices:
    if spec.is_reference:
        return Prices(0.0, 0.0, "free")
    if price_in is not None or price_out is not None:
        return Prices(price_in or 0.0, price_out or 0.0, "user")
    if not spec.is_openai_platform:
        return Prices(0.0, 0.0, "endpoint")
    found = table_price(spec.name)
    if found is None:
        return Prices(0.0, 0.0, "unknown")
    return Prices(found[0], found[1], "table")

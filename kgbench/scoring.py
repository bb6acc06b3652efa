"""kgbench's public scoring API, version 1: score answers with a compiled domain's panel.

This is what generated/<domain>/scorer.py stands on, and what code outside kgbench should
call. It is small and stable on purpose: the names below and their signatures change only
with a new major `API_VERSION` (the generated stub states the version it was written for,
and `open_panel` refuses one it does not serve), while the harness behind it may change
freely. The panel itself is data: metrics.json of the compiled domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgbench.contract import SCORING_API_VERSION
from kgbench.errors import UserError

API_VERSION = SCORING_API_VERSION  # declared once, in the contract the compiler writes from


@dataclass(frozen=True)
class Panel:
    """A compiled domain's metric panel, ready to score (see `open_panel`)."""

    domain: str
    metric_names: tuple[str, ...]
    unparseable_policy: str
    _scorer: Any  # harness.evaluation.compiled_scorer.CompiledScorer: an implementation detail

    def score(
        self, gold: dict[str, Any], response: Any, context: dict[str, Any] | None
    ) -> dict[str, float | None]:
        """Metric name -> value (None where undefined) for one answer, under the declared
        unparseable-answer policy; `response` may be the parsed object or the raw text."""
        return dict(self.details(gold, response, context)["scores"])

    def details(
        self, gold: dict[str, Any], response: Any, context: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The scores with how the answer was read: `parse_status` (ok, schema_error,
        extracted, unparseable), `problems`, and cited `unknown_ids`."""
        from harness.evaluation.scoring import apply_policy

        item = self._scorer.score(gold, response, context)
        return {
            "scores": apply_policy(item.scores, item.parse_status, self.unparseable_policy),
            "parse_status": item.parse_status,
            "problems": list(item.problems),
            "unknown_ids": list(item.unknown_ids),
        }


def open_panel(compiled_dir: str | Path, api: str = API_VERSION) -> Panel:
    """The panel of a compiled domain folder (generated/<domain>/), checked against the
    contract; `api` is the API version the caller was written for."""
    if api.split(".")[0] != API_VERSION:
        raise UserError(
            f"this scorer was written for kgbench.scoring API {api}; this kgbench serves "
            f"API {API_VERSION}: compile the domain again with this kgbench"
        )
    from harness.compiled import CompiledDomain
    from harness.evaluation.compiled_scorer import load_compiled_scorer

    compiled = CompiledDomain.open(Path(compiled_dir))
    scorer = load_compiled_scorer(compiled)
    return Panel(
        domain=compiled.name,
        metric_names=tuple(m.name for m in scorer.metrics),
        unparseable_policy=scorer.policy,
        _scorer=scorer,
    )


__all__ = ["API_VERSION", "Panel", "open_panel"]

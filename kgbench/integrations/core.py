"""The one adapter core the harness integrations share: items and scores.

`KgbenchEval(release, condition)` reads a gold release folder (verified: a tampered release
is refused), renders each scenario's prompt under the condition exactly as `kgbench prompts`
does (PromptRenderer over the compiled domain; grounded conditions read the contexts a run
folder holds, written by `kgbench extract`), and scores an answer with the compiled domain's
panel through `kgbench.scoring` (the API generated scorer.py stubs use), so an inspect-ai or
lm-eval item gets the scores `kgbench score` gives the same answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgbench.errors import UserError


@dataclass(frozen=True)
class EvalItem:
    """One (scenario, condition): what a harness sends and what scoring needs."""

    prompt_id: str  # <scenario>/<condition>, as in prompts/prompts.jsonl
    scenario_id: str
    condition: str
    category: str
    prompt: str  # the user message, byte for byte kgbench's

    def as_doc(self) -> dict[str, Any]:
        """A flat record (lm-eval docs, inspect metadata)."""
        return {
            "prompt_id": self.prompt_id,
            "scenario_id": self.scenario_id,
            "condition": self.condition,
            "category": self.category,
            "prompt": self.prompt,
        }


class KgbenchEval:
    """The items of a release under one condition, and their scorer."""

    def __init__(
        self,
        release: str | Path,
        condition: str = "C1",
        run_dir: str | Path | None = None,
        compiled: str | Path | None = None,
    ) -> None:
        from harness.compiled import CompiledDomain
        from harness.evaluation.prompts import PromptRenderer
        from harness.release import read_release
        from kgbench.scoring import open_panel

        release_dir = Path(release)
        self.release = read_release(release_dir)
        manifest = self.release.manifest
        root = Path(compiled) if compiled else release_dir.resolve().parent.parent
        self.domain = CompiledDomain.open(root)
        compiled_manifest = self.domain.json("manifest.json")
        if (compiled_manifest.get("domain"), compiled_manifest.get("domain_version")) != (
            manifest.get("domain"),
            manifest.get("domain_version"),
        ):
            raise UserError(
                f"{release_dir}: release of {manifest.get('domain')} "
                f"{manifest.get('domain_version')}, but {root} is compiled from "
                f"{compiled_manifest.get('domain')} {compiled_manifest.get('domain_version')}: "
                "score a release with the domain version it was made from"
            )
        self.renderer = PromptRenderer(self.domain)
        known = {c.id: c for c in self.renderer.conditions}
        if condition not in known:
            raise UserError(
                f"unknown condition '{condition}'; domain '{self.domain.name}' declares "
                + ", ".join(known)
            )
        if known[condition].verify is not None:
            raise UserError(
                f"condition {condition} is a multi-step agent (verify-and-revise), not one "
                "prompt per item: run it with `kgbench verify`"
            )
        self.condition = condition
        self.grounded = self.renderer.is_grounded(condition)
        if self.grounded and run_dir is None:
            raise UserError(
                f"condition {condition} is grounded: name the run folder whose contexts "
                "`kgbench extract` wrote (run_dir)"
            )
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.panel = open_panel(root)
        self.scenarios = {s["scenario_id"]: s for s in self.release.scenarios}
        self._contexts: dict[str, dict[str, Any] | None] = {}
        self._items: dict[str, EvalItem] | None = None

    def context(self, scenario_id: str) -> dict[str, Any] | None:
        if not self.grounded:
            return None
        if scenario_id not in self._contexts:
            from harness.runfolder import RunFolder

            assert self.run_dir is not None
            self._contexts[scenario_id] = RunFolder(self.run_dir).context(
                scenario_id, self.condition
            )
        return self._contexts[scenario_id]

    def items(self) -> list[EvalItem]:
        """Every scenario of the release, in release order."""
        if self._items is None:
            out = {}
            for sid, scenario in self.scenarios.items():
                prompt = self.renderer.render(scenario, self.condition, self.context(sid))
                item = EvalItem(
                    f"{sid}/{self.condition}",
                    sid,
                    self.condition,
                    str(scenario.get("category", "uncategorised")),
                    prompt,
                )
                out[item.prompt_id] = item
            self._items = out
        return list(self._items.values())

    def item(self, prompt_id: str) -> EvalItem:
        self.items()
        assert self._items is not None
        if prompt_id not in self._items:
            raise UserError(f"no item {prompt_id!r} in release {self.release.version}")
        return self._items[prompt_id]

    @property
    def metric_names(self) -> tuple[str, ...]:
        return self.panel.metric_names

    def score(self, scenario_id: str, answer: Any) -> dict[str, Any]:
        """The panel's scores of one answer (raw text or parsed object), with how it was read:
        {"scores": {metric: value or None}, "parse_status", "problems", "unknown_ids"}."""
        scenario = self.scenarios[scenario_id]
        return self.panel.details(scenario["gold"], answer, self.context(scenario_id))


def defined_mean(values: Iterable[float | None]) -> float:
    """The mean over items where the metric is defined (None is undefined, not zero), as
    `kgbench score` averages; NaN when it is defined nowhere."""
    kept = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return math.fsum(kept) / len(kept) if kept else math.nan

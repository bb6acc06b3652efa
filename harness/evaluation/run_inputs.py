"""What scoring reads from a run folder (`RunInputs`), loaded once for every model, and the
one rule for which compiled domain a run is scored with (`domain_of`: the run folder's own,
harness.runfolder.RunFolder.compiled), so no second decider reads a domain name elsewhere.

Also the size of what each condition was given (`context_volume`), reported beside the
scores so a reader can hold volume apart from content.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from harness.runfolder import Prompt, RunFolder
from kgbench.contract import Condition
from kgbench.errors import UserError

from .compiled_scorer import CompiledScorer, load_compiled_scorer
from .responses_log import ResponsesLog


def domain_of(run: RunFolder, domain: str | Path | CompiledDomain | None = None) -> CompiledDomain:
    """The compiled domain a run is scored with: `domain` when given (a name, a folder or a
    handle; it must be the run's own), else the one its run.json records, else the one its
    scenarios name. The rule is RunFolder.compiled's: scoring and the report's provenance
    ask it here, and read no domain name of their own."""
    return run.compiled(domain)


@dataclass
class RunInputs:
    """What scoring reads from a run folder, loaded once for every model."""

    folder: RunFolder
    domain: str | CompiledDomain | None = None
    _contexts: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)

    @cached_property
    def scenarios(self) -> dict[str, dict[str, Any]]:
        return self.folder.scenarios_by_id()

    @cached_property
    def compiled(self) -> CompiledDomain:
        return domain_of(self.folder, self.domain)

    @cached_property
    def scorer(self) -> CompiledScorer:
        """The scorer of the run's domain, read afresh for each run (not `scorer_of`'s cache):
        a run is scored with the compile it finds now."""
        return load_compiled_scorer(self.compiled)

    @cached_property
    def conditions(self) -> list[Condition]:
        return list(self.compiled.conditions)

    @cached_property
    def all_prompts(self) -> list[Prompt]:
        """Every prompt of the run: prompts.jsonl's, then the verify-and-revise answer prompts
        (prompts/verify.jsonl, written by `kgbench verify`; none when C5 did not run)."""
        known = {c.id for c in self.conditions}
        declared = {p.id for p in self.compiled.presentations}
        out = []
        for p in [*self.folder.prompts(), *self.folder.verify_prompts()]:
            if p.scenario_id not in self.scenarios or p.condition not in known:
                raise UserError(
                    f"prompt {p.prompt_id} does not belong to this run's scenarios and "
                    f"conditions; re-run `kgbench prompts --run-dir {self.folder.path}`"
                )
            if p.presentation is not None and p.presentation not in declared:
                # review 2026-12 ord.bogus-presentation: it was scored as if it were absent
                raise UserError(
                    f"prompt {p.prompt_id} names the presentation {p.presentation!r}, which "
                    f"this domain does not declare ({', '.join(sorted(declared)) or 'none'}); "
                    f"re-run `kgbench prompts --run-dir {self.folder.path} --order-variants`"
                )
            out.append(p)
        return out

    @cached_property
    def prompts(self) -> list[Prompt]:
        """The panel's prompts: the original presentation of each (scenario, condition)."""
        return [p for p in self.all_prompts if p.presentation is None]

    @cached_property
    def order_prompts(self) -> list[Prompt]:
        """The reordered or relabelled presentations (`kgbench prompts --order-variants`),
        scored apart from the panel by `order_figures`."""
        return [p for p in self.all_prompts if p.presentation is not None]

    def context(self, scenario_id: str, condition: str) -> dict[str, Any] | None:
        """The extracted context of a grounded condition (read once), None for C1."""
        key = (scenario_id, condition)
        if key not in self._contexts:
            grounded = any(
                c.id == condition and (c.grounded or c.verify is not None) for c in self.conditions
            )
            loaded = self.folder.context(scenario_id, condition) if grounded else None
            self._contexts[key] = loaded
        return self._contexts[key]

    @cached_property
    def declared_replicates(self) -> int | None:
        """run.json's `replicates`, when it declares them."""
        if not self.folder.run_json.exists():
            return None
        return self.folder.description.replicates

    def log_replicates(self, log_path: Path) -> int | None:
        """The declared replicates of one log: run.json's, else the runner's own record of
        its settings (responses/<log>.run.json), else None."""
        if self.declared_replicates is not None:
            return self.declared_replicates
        meta = self.folder.log_settings_of(log_path)
        settings = meta.get("settings") if isinstance(meta.get("settings"), dict) else {}
        return _positive_int(settings.get("replicates"))

    def replicates(self, logs: Iterable[ResponsesLog]) -> int:
        """How many replicates each prompt is expected to have (items per prompt).

        Every log's records were already bounded by its declared replicates (or by
        MAX_UNDECLARED_REPLICATES), so a corrupt `replicate` can never inflate this.
        """
        seen = [rep + 1 for log in logs for (_, rep) in log.records]
        return max([self.declared_replicates or 1, *seen])


def _positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


CONTEXT_HEAD = "# Grounded context"
CONTEXT_END = "# Answer format"


def context_block_chars(text: str) -> int:
    """Characters of a prompt's grounded context block (from its heading to the answer
    format); 0 for a prompt without one (C1). Linear: two `str.find`."""
    start = text.find(CONTEXT_HEAD)
    if start < 0:
        return 0
    end = text.find(CONTEXT_END, start)
    return (end if end >= 0 else len(text)) - start


def context_volume(inputs: RunInputs) -> dict[str, dict[str, float | int]]:
    """Per condition, the mean size of what the model was given: characters of the grounded
    context block and assertions in the extracted context, over the panel's prompts. The
    conditions vary in volume (C4's block can be ten times C2's), which the paper
    says it holds apart from content: reported beside the scores so a reader can see it.
    A volume-matched control (C6, C7) adds how many of its prompts came within the declared
    tolerance of the reference condition's length (`matched` of `prompts`, `reference`)."""
    sums: dict[str, list[float]] = {}
    matched: dict[str, tuple[str, int]] = {}
    for prompt in inputs.prompts:
        context = inputs.context(prompt.scenario_id, prompt.condition)
        held = context.get("assertions") if isinstance(context, dict) else None
        row = sums.setdefault(prompt.condition, [0.0, 0.0, 0.0])
        row[0] += context_block_chars(prompt.text)
        row[1] += len(held) if isinstance(held, dict) else 0
        row[2] += 1
        record = context.get("volume_match") if isinstance(context, dict) else None
        if isinstance(record, dict):
            reference, n = matched.get(prompt.condition, (str(record.get("reference")), 0))
            matched[prompt.condition] = (reference, n + (record.get("matched") is True))
    return {
        cond: {
            "characters": round(chars / n, 1),
            "assertions": round(asserted / n, 2),
            "prompts": int(n),
            **(
                {"reference": matched[cond][0], "matched": matched[cond][1]}
                if cond in matched
                else {}
            ),
        }
        for cond, (chars, asserted, n) in sums.items()
        if n
    }

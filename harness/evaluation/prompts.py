"""Prompt rendering (`kgbench prompts`): one prompt per (scenario, condition), deterministically.

The compiled frame (`generated/<domain>/prompts/frame.j2`) holds everything the conditions
share: role, task, scenario header, candidate options, answer fields and the JSON Schema. Only
`context_block` differs, rendered from `prompts/context_<condition>.j2` and the extracted
subgraph; a condition without sections (C1) gets no block at all. That isolation is what lets
a difference between conditions be attributed to the grounded context (paper section 3.4).

The run folder itself (where scenarios, contexts and prompts live, run.json) belongs to
`harness.runfolder`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2

from harness.compiled import CompiledDomain
from harness.prompt_file import Prompt
from harness.runfolder import RunFolder
from kgbench.contract import Condition
from kgbench.errors import Location, UserError
from kgbench.io import sha256_text

# --- rendering ----------------------------------------------------------------------------


class PromptRenderer:
    """Renders a compiled domain's prompts; one instance per domain (templates load once)."""

    def __init__(self, domain: CompiledDomain) -> None:
        self.domain = domain
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(domain.prompts_dir)),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )

    @cached_property
    def conditions(self) -> list[Condition]:
        """The domain's conditions in declaration order (conditions.json)."""
        return list(self.domain.conditions)

    @cached_property
    def condition_ids(self) -> list[str]:
        return [c.id for c in self.conditions]

    def is_grounded(self, condition: str) -> bool:
        for c in self.conditions:
            if c.id == condition:
                return c.grounded
        known = ", ".join(self.condition_ids)
        raise UserError(
            f"unknown condition '{condition}'; domain '{self.domain.name}' declares {known}"
        )

    @cached_property
    def _absent_fields(self) -> tuple[frozenset[str], frozenset[str]]:
        graph = self.domain.graph
        assertion_keys = frozenset(k for a in graph.get("assertions", []) for k in a)
        evidence_keys = frozenset(k for e in graph.get("evidence_sources", []) for k in e)
        link_keys = frozenset(k for s in graph.get("supports", []) for k in s)  # per SUPPORTS link
        return assertion_keys, evidence_keys | (link_keys - {"assertion_id"})

    def _complete(self, context: dict[str, Any]) -> dict[str, Any]:
        """The context with every graph property present, null where the graph has none.

        Neo4j does not store null properties, so an extracted assertion has no
        `population_id` key where kg.json has null; the templates address such fields by
        attribute under StrictUndefined. Filling them with None gives the same text the
        template would give for a null, without weakening StrictUndefined elsewhere.
        """
        assertion_keys, evidence_keys = self._absent_fields
        out = copy.copy(context)
        assertions = context.get("assertions")
        if isinstance(assertions, dict):
            filled = {}
            for aid, a in assertions.items():
                if isinstance(a, dict):
                    a = {**dict.fromkeys(assertion_keys), **a}
                    if isinstance(a.get("evidence"), list):
                        a["evidence"] = [
                            {**dict.fromkeys(evidence_keys), **e} if isinstance(e, dict) else e
                            for e in a["evidence"]
                        ]
                filled[aid] = a
            out["assertions"] = filled
        return out

    def context_block(self, condition: str, context: dict[str, Any] | None, where: str = "") -> str:
        """The grounded-context block of one condition; "" for a condition without sections."""
        if not self.is_grounded(condition):
            return ""
        if context is None:
            raise UserError(f"condition {condition} is grounded and needs an extracted context")
        try:
            template = self.env.get_template(f"context_{condition}.j2")
            return template.render(context=self._complete(context))
        except jinja2.TemplateNotFound:
            raise UserError(
                f"{self.domain.root}/prompts/context_{condition}.j2 is missing; recompile the domain"
            ) from None
        except (jinja2.UndefinedError, TypeError, KeyError, AttributeError) as exc:
            raise UserError(
                f"context does not match the extracted-context contract ({exc}); "
                "re-run `kgbench extract`",
                Location(where) if where else None,
            ) from None

    def target_outcome(self, scenario: dict[str, Any]) -> str:
        target = scenario.get("target_outcome_id")
        entity = self.domain.entities.get(target) if isinstance(target, str) else None
        if entity is None:
            raise UserError(
                f"scenario {scenario.get('scenario_id')}: target outcome {target!r} is not an "
                f"entity of domain '{self.domain.name}'"
            )
        return entity["name"]

    def render(
        self,
        scenario: dict[str, Any],
        condition: str,
        context: dict[str, Any] | None,
        where: str = "",
    ) -> str:
        """The full prompt text of one (scenario, condition)."""
        block = self.context_block(condition, context, where)
        try:
            return self.env.get_template("frame.j2").render(
                scenario=scenario, target_outcome=self.target_outcome(scenario), context_block=block
            )
        except jinja2.UndefinedError as exc:
            raise UserError(
                f"scenario {scenario.get('scenario_id')} lacks a field the prompt needs ({exc})"
            ) from None


def prompt_record(scenario_id: str, condition: str, content: str) -> Prompt:
    return Prompt(
        prompt_id=f"{scenario_id}/{condition}",
        scenario_id=scenario_id,
        condition=condition,
        messages=[{"role": "user", "content": content}],
        sha256=sha256_text(content),
    )


def build_prompts(
    run_dir: Path,
    domain: str | Path | CompiledDomain | None = None,
    conditions: Sequence[str] | None = None,
    order_variants: bool = False,
) -> tuple[Path, int]:
    """Render every (scenario, condition) of a run into prompts/prompts.jsonl, atomically,
    and (re)write run.json for the compiled domain the prompts came from.

    Returns the file and the number of prompts. Scenarios keep their file order and
    conditions their declaration order, so the file is a pure function of its inputs.
    `conditions` keeps only those conditions (a study may run a subset; their order stays
    the declared one); without it, every non-optional condition, and an optional one whose
    contexts the run folder holds. An older run.json is not read for its domain (the scenarios name it),
    so this is also how a run folder from an older kgbench is brought up to date.
    `order_variants` adds, after each original prompt, one prompt per declared presentation
    of the options (harness.evaluation.order), ids `<scenario>/<condition>@<id>`.
    """
    from harness.evaluation.order import arrangements, presented, prompt_id

    folder = RunFolder.open(run_dir)
    scenarios = folder.scenarios()
    compiled = folder.compiled(domain or None, describing=True)
    renderer = PromptRenderer(compiled)
    # A verify-and-revise condition (C5) has no single prompt: its steps are written by
    # harness.verify, which adds its answer prompts to prompts/verify.jsonl.
    # An optional condition (a volume-matched control) is rendered by default only where
    # its contexts were extracted (`kgbench extract --condition C7`): asked for, not implied.
    chosen = [
        c.id
        for c in renderer.conditions
        if c.verify is None
        and (
            c.id in conditions
            if conditions is not None
            else not c.optional or folder.has_contexts(c.id)
        )
    ]
    records = []
    for scenario in scenarios:
        sid = scenario["scenario_id"]
        for condition in chosen:
            context = None
            where = ""
            if renderer.is_grounded(condition):
                context = folder.context(sid, condition)
                where = str(folder.context_path(sid, condition))
            content = renderer.render(scenario, condition, context, where)
            records.append(prompt_record(sid, condition, content))
            if not order_variants:
                continue
            shown = arrangements(scenario, compiled.presentations)
            for p in compiled.presentations:
                if shown[p.id].answered_by != p.id:
                    continue  # lists the options as an earlier presentation: its answer counts
                text = renderer.render(presented(scenario, p), condition, context, where)
                record = prompt_record(sid, condition, text)
                records.append(
                    replace(record, prompt_id=prompt_id(sid, condition, p.id), presentation=p.id)
                )
    out = folder.write_prompts(records)
    folder.describe(compiled)
    return out, len(records)

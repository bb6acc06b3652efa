"""Prompt rendering (`kgbench prompts`): one prompt per (scenario, condition), deterministically.

The compiled frame (`generated/<domain>/prompts/frame.j2`) holds everything the conditions
share: role, task, scenario header, candidate options, answer fields and the JSON Schema. Only
`context_block` differs, rendered from `prompts/context_<condition>.j2` and the extracted
subgraph; a condition without sections (C1) gets no block at all. That isolation is what lets
a difference between conditions be attributed to the grounded context (paper section 3.4).

This module also owns the small run-folder helpers the later stages share (opening the run's
compiled domain, reading scenarios and contexts, atomic writes), since prompts are the first
stage that reads a run folder.
"""

from __future__ import annotations

import copy
import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2

from harness.compiled import GENERATED, CompiledDomain
from harness.scenario_io import read_scenarios
from kgbench.errors import Location, UserError
from kgbench.io import atomic_write_text, jsonl_text, read_jsonl, sha256_text

PROMPTS_FILE = Path("prompts") / "prompts.jsonl"


# --- run-folder helpers -------------------------------------------------------------------


def open_domain(domain: str) -> CompiledDomain:
    """A compiled domain by name (generated/<name>/) or by the path of its compiled folder."""
    path = Path(domain)
    if path.is_dir() and (path / "kg.json").exists():
        return CompiledDomain(path.name, path)
    if os.sep in domain or "/" in domain:
        raise UserError(
            f"{domain} is not a compiled domain folder (no kg.json); run `kgbench compile`"
        )
    return CompiledDomain.open(domain)


def run_domain(run_dir: Path, scenarios: list[dict[str, Any]]) -> str:
    """The domain a run folder belongs to: run.json's "domain", else its scenarios' domain."""
    run_json = run_dir / "run.json"
    if run_json.exists():
        try:
            name = json.loads(run_json.read_text(encoding="utf-8")).get("domain")
        except (json.JSONDecodeError, AttributeError):
            raise UserError(
                "not a valid run description (JSON object)", Location(str(run_json))
            ) from None
        data = json.loads(run_json.read_text(encoding="utf-8"))
        compiled = data.get("compiled_domain")
        if isinstance(compiled, str) and compiled:
            return compiled
        if isinstance(name, str) and name:
            return name
    names = sorted({s.get("domain") for s in scenarios if isinstance(s.get("domain"), str)})
    if len(names) != 1:
        raise UserError(
            f"cannot tell the domain of {run_dir}: run.json has none and the scenarios name "
            f"{names or 'none'}; pass --domain"
        )
    return names[0]


def load_scenarios(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "scenarios.jsonl"
    if not path.exists():
        raise UserError(
            f"{path} not found: a run folder needs its scenarios (run `kgbench generate` "
            "or copy a scenarios.jsonl there)"
        )
    return read_scenarios(path)


def context_path(run_dir: Path, scenario_id: str, condition: str) -> Path:
    return run_dir / "contexts" / scenario_id / f"{condition}.json"


def load_context(run_dir: Path, scenario_id: str, condition: str) -> dict[str, Any]:
    """The extracted subgraph of a grounded condition; missing means extraction was not run."""
    path = context_path(run_dir, scenario_id, condition)
    if not path.exists():
        raise UserError(
            f"missing context {path} for scenario {scenario_id} under {condition}; "
            f"run `kgbench extract --run-dir {run_dir}` first"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON: {exc.msg}", Location(str(path), exc.lineno)) from None
    if not isinstance(data, dict):
        raise UserError("expected an extracted-context object", Location(str(path)))
    for key, want in (("scenario_id", scenario_id), ("condition", condition)):
        if key in data and data[key] != want:
            raise UserError(
                f"context is for {key} {data[key]!r}, expected {want!r}; re-run `kgbench extract`",
                Location(str(path)),
            )
    return data


# --- rendering ----------------------------------------------------------------------------


class PromptRenderer:
    """Renders a compiled domain's prompts; one instance per domain (templates load once)."""

    def __init__(self, domain: CompiledDomain) -> None:
        self.domain = domain
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(domain.root / "prompts")),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )

    @cached_property
    def conditions(self) -> list[dict[str, Any]]:
        """The domain's conditions in declaration order (kg.json "conditions")."""
        return list(self.domain.graph["conditions"])

    @cached_property
    def condition_ids(self) -> list[str]:
        return [c["id"] for c in self.conditions]

    def is_grounded(self, condition: str) -> bool:
        for c in self.conditions:
            if c["id"] == condition:
                return bool(c.get("sections"))
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


def prompt_record(scenario_id: str, condition: str, content: str) -> dict[str, Any]:
    return {
        "prompt_id": f"{scenario_id}/{condition}",
        "scenario_id": scenario_id,
        "condition": condition,
        "messages": [{"role": "user", "content": content}],
        "sha256": sha256_text(content),
    }


def build_prompts(run_dir: Path, domain: str | None = None) -> tuple[Path, int]:
    """Render every (scenario, condition) of a run into prompts/prompts.jsonl, atomically.

    Returns the file and the number of prompts. Scenarios keep their file order and
    conditions their declaration order, so the file is a pure function of its inputs.
    """
    scenarios = load_scenarios(run_dir)
    compiled = open_domain(domain or run_domain(run_dir, scenarios))
    renderer = PromptRenderer(compiled)
    records = []
    for scenario in scenarios:
        sid = scenario["scenario_id"]
        for condition in renderer.condition_ids:
            context = None
            where = ""
            if renderer.is_grounded(condition):
                context = load_context(run_dir, sid, condition)
                where = str(context_path(run_dir, sid, condition))
            content = renderer.render(scenario, condition, context, where)
            records.append(prompt_record(sid, condition, content))
    out = run_dir / PROMPTS_FILE
    atomic_write_text(out, jsonl_text(records))
    write_run_description(run_dir, compiled)
    return out, len(records)


def write_run_description(run_dir: Path, compiled: CompiledDomain) -> None:
    """run.json: which compiled domain (and so which response schema) this run belongs to.

    The runner and the scorer read it; keys other tools wrote are kept.
    """
    path = run_dir / "run.json"
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise UserError(
                "not a valid run description (JSON object)", Location(str(path))
            ) from None
    data["domain"] = compiled.name
    default = (
        CompiledDomain.open(compiled.name).root if (GENERATED / compiled.name).is_dir() else None
    )
    if default is None or default.resolve() != compiled.root.resolve():
        data["compiled_domain"] = str(compiled.root.resolve())
    else:
        data.pop("compiled_domain", None)
    data["response_schema"] = str((compiled.root / "schemas" / "response.schema.json").resolve())
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_prompts(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / PROMPTS_FILE
    if not path.exists():
        raise UserError(f"{path} not found; run `kgbench prompts --run-dir {run_dir}` first")
    records = read_jsonl(path, "prompt")
    for n, r in enumerate(records, start=1):
        if not isinstance(r.get("prompt_id"), str) or not isinstance(r.get("messages"), list):
            raise UserError("expected prompt_id and messages", Location(str(path), n))
    return records


def prompt_text(record: dict[str, Any]) -> str:
    """The user content of a prompt record (the frame is a single user message)."""
    return "\n".join(
        m.get("content", "")
        for m in record["messages"]
        if isinstance(m, dict) and m.get("role") == "user"
    )

"""The scorer (paper section 3.7): one pass of the metric panel over one parsed response.

`score_response` is the library function over plain dicts. `score_run` is `kgbench score`:
it scores a run folder's responses logs with the compiled scorer of the run's domain
(generated/<domain>/scorer.py, loaded with importlib, so a domain's declared metrics are
scored without code here) and writes per-item scores and the aggregated panel.

Whatever a model returns is scored, never a crash: text that is not JSON, JSON of the wrong
shape, fields of the wrong type, unknown ids, very long or hostile strings. A field that does
not have its contract type counts as absent (nothing is credited for it), and the item is
flagged as a parse failure so the panel can report it beside the scores.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from harness.metrics import (
    CITED_ASSERTION_FIELDS,
    DEFAULT_METRICS,
    Lexicon,
    MetricSpec,
    score_panel,
)
from kgbench.errors import UserError

from .jsonio import atomic_write_text, jsonl_text
from .prompts import (
    load_context,
    load_scenarios,
    open_domain,
    read_prompts,
    run_domain,
)

MAX_PROBLEMS = 10
MAX_UNKNOWN_IDS = 20
FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


# --- the response contract ----------------------------------------------------------------


@dataclass(frozen=True)
class FieldRule:
    """The contract type of one response field: a scalar, a list of strings, or a list of
    objects with required string keys (claims)."""

    kind: str  # "string" | "boolean" | "number" | "string_list" | "object_list" | "any"
    keys: tuple[str, ...] = ()
    nullable: bool = False  # null is a value (an abstaining recommendation)

    def clean(self, value: Any) -> tuple[Any, str | None]:
        """The value if it has this type (list items of another type dropped), else None."""
        if value is None and self.nullable:
            return None, None
        if self.kind == "string":
            return (value, None) if isinstance(value, str) else (None, "expected a string")
        if self.kind == "boolean":
            return (value, None) if isinstance(value, bool) else (None, "expected true or false")
        if self.kind == "number":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            return (value, None) if ok else (None, "expected a number")
        if self.kind in ("string_list", "object_list"):
            if not isinstance(value, list):
                return None, "expected a list"
            if self.kind == "string_list":
                kept = [v for v in value if isinstance(v, str)]
            else:
                kept = [
                    {k: v[k] for k in self.keys}
                    for v in value
                    if isinstance(v, dict) and all(isinstance(v.get(k), str) for k in self.keys)
                ]
            dropped = len(value) - len(kept)
            return kept, (f"{dropped} item(s) of the wrong shape dropped" if dropped else None)
        return value, None


def _resolve_ref(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return schema.get("$defs", {}).get(ref.split("/")[-1], {})
    return node


def _rule(schema: dict[str, Any], prop: dict[str, Any]) -> FieldRule:
    kind = prop.get("type")
    if isinstance(kind, list) and "null" in kind and len(kind) == 2:
        inner = next(t for t in kind if t != "null")
        return replace(_rule(schema, {**prop, "type": inner}), nullable=True)
    if kind == "array":
        items = _resolve_ref(schema, prop.get("items", {}))
        if items.get("type") == "string":
            return FieldRule("string_list")
        if items.get("type") == "object":
            return FieldRule("object_list", tuple(items.get("required", ())))
        return FieldRule("any")
    if kind in ("integer", "number"):
        return FieldRule("number")
    if kind in ("string", "boolean"):
        return FieldRule(kind)
    return FieldRule("any")


@dataclass(frozen=True)
class Contract:
    """The response contract, read once from response.schema.json (no validator per item)."""

    fields: dict[str, FieldRule]
    required: tuple[str, ...]
    closed: bool = True

    @classmethod
    def from_schema(cls, schema: dict[str, Any]) -> Contract:
        props = schema.get("properties", {})
        return cls(
            fields={name: _rule(schema, p) for name, p in props.items()},
            required=tuple(schema.get("required", ())),
            closed=schema.get("additionalProperties") is False,
        )

    def clean(self, obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The contract fields that have their type; problems, as short fixed messages."""
        out: dict[str, Any] = {}
        problems: list[str] = []
        for name, rule in self.fields.items():
            if name not in obj:
                if name in self.required:
                    problems.append(f"missing field '{name}'")
                continue
            value, problem = rule.clean(obj[name])
            if problem:
                problems.append(f"field '{name}': {problem}")
            if value is not None or (rule.nullable and obj[name] is None):
                out[name] = value
        if self.closed:
            extra = sum(1 for k in obj if k not in self.fields)
            if extra:
                problems.append(f"{extra} field(s) not in the contract")
        return out, problems


_DEFAULT_FIELDS: dict[str, FieldRule] = {
    "recommended_intervention": FieldRule("string", nullable=True),
    "causal_path_assertion_ids": FieldRule("string_list"),
    "adverse_effect_assertion_ids": FieldRule("string_list"),
    "contraindication_assertion_ids": FieldRule("string_list"),
    "supporting_evidence_ids": FieldRule("string_list"),
    "claims": FieldRule("object_list", ("subject", "predicate", "object")),
    "uncertainty_flag": FieldRule("boolean"),
    "rationale": FieldRule("string"),
}

# Without a compiled schema at hand every field of the contract is required (strict mode).
DEFAULT_CONTRACT = Contract(fields=_DEFAULT_FIELDS, required=tuple(_DEFAULT_FIELDS))


def parse_raw(raw: Any) -> tuple[Any, bool]:
    """A model's raw text as JSON: the whole text, else a fenced block, else the outermost
    braces. Returns (value, parsed); any non-string raw is taken as already parsed."""
    if not isinstance(raw, str):
        return raw, raw is not None
    text = raw.strip()
    attempts = [text]
    attempts += [m.group(1).strip() for m in FENCE.finditer(text)][:3]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        attempts.append(text[start : end + 1])
    for attempt in attempts:
        try:
            return json.loads(attempt), True
        except (json.JSONDecodeError, RecursionError):
            continue
    return None, False


@dataclass(frozen=True)
class Coerced:
    """A response reduced to its well-typed contract fields, with what was wrong with it."""

    response: dict[str, Any]
    parse_ok: bool
    schema_ok: bool
    problems: tuple[str, ...]


def coerce_response(response: Any, contract: Contract = DEFAULT_CONTRACT) -> Coerced:
    value, parsed = parse_raw(response) if isinstance(response, str) else (response, True)
    if not parsed:
        return Coerced({}, False, False, ("not JSON",))
    if not isinstance(value, dict):
        return Coerced({}, True, False, (f"expected a JSON object, got {type(value).__name__}",))
    clean, problems = contract.clean(value)
    return Coerced(clean, True, not problems, tuple(problems[:MAX_PROBLEMS]))


# --- scoring one response -----------------------------------------------------------------


def score_response(
    gold: dict[str, Any],
    response: Any,
    context: dict[str, Any] | None,
    *,
    lexicon: Lexicon | None = None,
    metrics: Sequence[MetricSpec] | None = None,
) -> dict[str, float | None]:
    """Score one response on the metric panel: metric name -> value, None where undefined.

    `gold` uses the scenario's gold field names; `response` is the contract object (a dict),
    or anything else a model produced (text, malformed JSON), which is scored as well as it
    can be; `context` is the extracted subgraph as `kgbench extract` writes it, None under C1.

    Without `metrics`, the panel of spec/metrics.yaml (`DEFAULT_METRICS`). Without `lexicon`,
    names are matched only by exact id or name found in the gold and the context (no
    synonyms, no intervention classes) and evidence support is read from the context; pass a
    compiled domain's lexicon (`load_compiled_scorer(...).lexicon`) for synonym and class
    matching, as `kgbench score` does.
    """
    coerced = coerce_response(response)
    gold = gold if isinstance(gold, dict) else {}
    lex = lexicon if lexicon is not None else Lexicon.from_context(context, gold)
    return score_panel(metrics or DEFAULT_METRICS, gold, coerced.response, context, lex)


def unknown_ids(response: dict[str, Any], lexicon: Lexicon) -> list[str]:
    """Cited ids that name no assertion or evidence source of the graph."""
    out = set()
    for key in CITED_ASSERTION_FIELDS:
        out |= {i for i in response.get(key, []) if i not in lexicon.assertions}
    out |= {i for i in response.get("supporting_evidence_ids", []) if i not in lexicon.evidence_ids}
    return sorted(out)


@dataclass(frozen=True)
class ItemScore:
    scores: dict[str, float | None]
    parse_ok: bool
    schema_ok: bool
    problems: tuple[str, ...]
    unknown_ids: tuple[str, ...]


@dataclass
class CompiledScorer:
    """A compiled domain's panel: its METRICS, its lexicon and its response contract."""

    domain: str
    metrics: tuple[MetricSpec, ...]
    lexicon: Lexicon
    contract: Contract = field(default=DEFAULT_CONTRACT)

    def score(
        self, gold: dict[str, Any], response: Any, context: dict[str, Any] | None
    ) -> ItemScore:
        coerced = coerce_response(response, self.contract)
        scores = score_panel(self.metrics, gold, coerced.response, context, self.lexicon)
        unknown = unknown_ids(coerced.response, self.lexicon)
        return ItemScore(
            scores=scores,
            parse_ok=coerced.parse_ok,
            schema_ok=coerced.schema_ok,
            problems=coerced.problems,
            unknown_ids=tuple(unknown[:MAX_UNKNOWN_IDS]),
        )


def load_compiled_scorer(compiled: CompiledDomain) -> CompiledScorer:
    """Import generated/<domain>/scorer.py by path and bind its panel and lexicon."""
    path = compiled.root / "scorer.py"
    if not path.exists():
        raise UserError(f"{path} is missing; recompile the domain (`kgbench compile`)")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"_kgbench_scorer_{compiled.name}_{digest}", path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has one
        raise UserError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    schema_path = compiled.root / "schemas" / "response.schema.json"
    contract = DEFAULT_CONTRACT
    if schema_path.exists():
        contract = Contract.from_schema(json.loads(schema_path.read_text(encoding="utf-8")))
    return CompiledScorer(compiled.name, tuple(module.METRICS), module.lexicon(), contract)


# --- scoring a run folder -----------------------------------------------------------------


def parse_pair(text: str) -> tuple[str, str]:
    """ "C4:C2" -> ("C4", "C2"): the delta is the first minus the second."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise UserError(f"--pair expects two conditions as A:B (e.g. C4:C2), got {text!r}")
    a, b = (p.strip() for p in parts)
    if a == b:
        raise UserError(f"--pair {text!r} compares a condition with itself")
    return a, b


@dataclass
class ResponsesLog:
    """A responses log read leniently: a truncated or garbled line is counted, not fatal."""

    path: Path
    records: dict[tuple[str, int], dict[str, Any]]
    model: str
    unreadable: int

    @classmethod
    def read(cls, path: Path) -> ResponsesLog:
        chosen: dict[tuple[str, int], dict[str, Any]] = {}
        unreadable = 0
        models: list[str] = []
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except (json.JSONDecodeError, RecursionError):
                    unreadable += 1
                    continue
                replicate = rec.get("replicate", 0) if isinstance(rec, dict) else None
                if (
                    not isinstance(rec, dict)
                    or not isinstance(rec.get("prompt_id"), str)
                    or not isinstance(replicate, int)
                    or isinstance(replicate, bool)
                    or replicate < 0
                ):
                    unreadable += 1
                    continue
                if isinstance(rec.get("model"), str):
                    models.append(rec["model"])
                key = (rec["prompt_id"], replicate)
                # Appended retries: the last ok record wins, else the last record.
                if rec.get("status") == "ok" or chosen.get(key, {}).get("status") != "ok":
                    chosen[key] = rec
        model = models[-1] if models else path.stem
        return cls(path, chosen, model, unreadable)


@dataclass
class RunInputs:
    """What scoring reads from a run folder, loaded once for every model."""

    run_dir: Path
    domain: str | None = None
    _contexts: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)

    @cached_property
    def scenarios(self) -> dict[str, dict[str, Any]]:
        return {s["scenario_id"]: s for s in load_scenarios(self.run_dir)}

    @cached_property
    def compiled(self) -> CompiledDomain:
        return open_domain(self.domain or run_domain(self.run_dir, list(self.scenarios.values())))

    @cached_property
    def scorer(self) -> CompiledScorer:
        return load_compiled_scorer(self.compiled)

    @cached_property
    def conditions(self) -> list[dict[str, Any]]:
        return list(self.compiled.graph["conditions"])

    @cached_property
    def prompts(self) -> list[dict[str, Any]]:
        known = {c["id"] for c in self.conditions}
        out = []
        for p in read_prompts(self.run_dir):
            if p.get("scenario_id") not in self.scenarios or p.get("condition") not in known:
                raise UserError(
                    f"prompt {p['prompt_id']} does not belong to this run's scenarios and "
                    f"conditions; re-run `kgbench prompts --run-dir {self.run_dir}`"
                )
            out.append(p)
        return out

    def context(self, scenario_id: str, condition: str) -> dict[str, Any] | None:
        """The extracted context of a grounded condition (read once), None for C1."""
        key = (scenario_id, condition)
        if key not in self._contexts:
            grounded = any(c["id"] == condition and c.get("sections") for c in self.conditions)
            loaded = load_context(self.run_dir, scenario_id, condition) if grounded else None
            self._contexts[key] = loaded
        return self._contexts[key]

    def replicates(self, logs: Iterable[ResponsesLog]) -> int:
        seen = [rep + 1 for log in logs for (_, rep) in log.records]
        declared = 1
        run_json = self.run_dir / "run.json"
        if run_json.exists():
            try:
                value = json.loads(run_json.read_text(encoding="utf-8")).get("replicates")
                declared = value if isinstance(value, int) and value > 0 else 1
            except (json.JSONDecodeError, AttributeError):
                declared = 1
        return max([declared, *seen])


def score_items(inputs: RunInputs, log: ResponsesLog, replicates: int) -> list[dict[str, Any]]:
    """One item per (prompt, replicate): scored, failed or missing, never silently dropped."""
    scorer = inputs.scorer
    items = []
    for prompt in inputs.prompts:
        sid, cond = prompt["scenario_id"], prompt["condition"]
        scenario = inputs.scenarios[sid]
        gold = scenario.get("gold")
        if not isinstance(gold, dict):
            raise UserError(f"scenario {sid} has no gold object; regenerate the scenarios")
        for rep in range(replicates):
            rec = log.records.get((prompt["prompt_id"], rep))
            item: dict[str, Any] = {
                "prompt_id": prompt["prompt_id"],
                "scenario_id": sid,
                "condition": cond,
                "category": scenario.get("category", "uncategorised"),
                "replicate": rep,
            }
            if rec is None or rec.get("status") != "ok":
                item["status"] = "missing" if rec is None else "failed"
                item["error"] = None if rec is None else str(rec.get("error"))[:500]
                items.append(item)
                continue
            use_parsed = rec.get("parse_ok") is True and isinstance(rec.get("parsed"), dict)
            response = rec["parsed"] if use_parsed else rec.get("raw")
            result = scorer.score(gold, response, inputs.context(sid, cond))
            item.update(
                status="scored",
                parse_ok=use_parsed and result.parse_ok,
                schema_ok=result.schema_ok,
                problems=list(result.problems)
                or (["runner could not parse"] if not use_parsed else []),
                unknown_ids=list(result.unknown_ids),
                scores=result.scores,
            )
            items.append(item)
    return items


def response_logs(run_dir: Path, model: str | None) -> list[Path]:
    folder = run_dir / "responses"
    available = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if model is not None:
        path = folder / f"{model}.jsonl"
        if not path.exists():
            names = ", ".join(p.stem for p in available) or "none"
            raise UserError(f"no responses log {path} (available: {names})")
        return [path]
    if not available:
        raise UserError(
            f"no responses under {folder}; run the models first (or answer with a reference "
            "responder: `python -m harness.responders --run-dir DIR oracle`)"
        )
    return available


def score_run(
    run_dir: Path,
    model: str | None = None,
    pairs: Sequence[tuple[str, str]] = (("C4", "C2"),),
    bootstrap: int = 10000,
    seed: int = 0,
    domain: str | None = None,
) -> list[Path]:
    """`kgbench score`: items.jsonl and panel.json under scores/<slug>/ for each model log."""
    from .stats import build_panel

    if bootstrap < 100:
        raise UserError(f"--bootstrap must be at least 100 resamples, got {bootstrap}")
    inputs = RunInputs(run_dir, domain)
    known = [c["id"] for c in inputs.conditions]
    for a, b in pairs:
        for c in (a, b):
            if c not in known:
                raise UserError(
                    f"--pair names unknown condition '{c}'; this domain declares {', '.join(known)}"
                )
    paths = response_logs(run_dir, model)
    logs = [ResponsesLog.read(p) for p in paths]
    replicates = inputs.replicates(logs)
    written = []
    for path, log in zip(paths, logs, strict=True):
        items = score_items(inputs, log, replicates)
        panel = build_panel(
            items,
            inputs.scorer.metrics,
            known,
            pairs=pairs,
            bootstrap=bootstrap,
            seed=seed,
        )
        known_prompts = {p["prompt_id"] for p in inputs.prompts}
        panel.update(
            domain=inputs.compiled.name,
            model=log.model,
            slug=path.stem,
            replicates=replicates,
            log={
                "unreadable_records": log.unreadable,
                "records_for_unknown_prompts": sum(
                    1 for pid, _ in log.records if pid not in known_prompts
                ),
            },
        )
        out = run_dir / "scores" / path.stem
        atomic_write_text(out / "items.jsonl", jsonl_text(items))
        atomic_write_text(out / "panel.json", json.dumps(panel, indent=2, sort_keys=True) + "\n")
        written.append(out / "panel.json")
    return written

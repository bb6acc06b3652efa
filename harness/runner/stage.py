"""Stages: run a named list of requests through the runner, exactly as `kgbench run` runs the
prompts of a run folder.

A multi-step procedure (the graph-generation probe; later a verify-and-revise agent) cannot
write all its prompts up front: step k+1's prompts depend on step k's answers. It runs each
step as a *stage*: a name and a list of `StageRequest`s (an id, the messages, the answer's
strict JSON Schema). `run_stage`:

1. plans one request per distinct content, keyed like QA prompts (sha256 of model, messages
   and params; the params add the schema's digest, so a changed schema is a new request);
   requests with identical content share one key, one request and one record;
2. keeps what the stage's log `<out_dir>/<stage>.jsonl` already holds (ok, and failed unless
   `retry_failed`), copies hits from the shared response cache, and sends the rest online
   (adaptive concurrency, counted retries, progress bar, cost) or through the Batch API
   (state under `<out_dir>/batches/<stage>/`, re-attached after a crash);
3. returns the final record of every request id (`StageResult.records`), in the response
   record format of harness/README.md (`prompt_id` is the request id, `condition` the stage).

Every record is durable before it counts, and a procedure that re-derives stage k+1 from the
logged answers of stage k gets the same requests again, so a run killed at any point (even
with SIGKILL) resumes without paying twice. One runner per stage log at a time (an flock).

Reference models (`ref:<name>`) are answered in-process by `StageConfig.respond(name,
request)`, which returns the answer object (or raw text); the caller names the responders it
provides in `StageConfig.responders`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from kgbench.errors import UserError
from kgbench.io import atomic_write_json, canonical_json, sha256_text

from .api import (
    NO_KEY,
    _api_key,
    _copy_cache_hits,
    _partition,
    _safe_url,
    default_cache_dir,
    send_online,
)
from .batch import BatchOptions, BatchRunner
from .client import Completion, OpenAITransport, RequestFailure, scrub
from .engine import RetryPolicy
from .failures import note_requests
from .keys import request_key
from .log import JsonlLog, RunLock
from .parse import ResponseJudge
from .plan import RequestItem, Settings, request_params
from .pricing import resolve_prices
from .progress import RunProgress, Tally, summary_lines
from .spec import ModelSpec, parse_model_spec

STAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class StageRequest:
    """One request of a stage: `request_id` is unique within the stage and stable across
    runs (derive it from what the request is about, never from a counter of sends)."""

    request_id: str
    messages: list[dict[str, Any]]
    schema: dict[str, Any]
    schema_name: str = "kgbench_response"


@dataclass(frozen=True)
class Stage:
    name: str
    requests: Sequence[StageRequest]


Respond = Callable[[str, StageRequest], "dict[str, Any] | str"]


@dataclass(frozen=True)
class StageConfig:
    """How to run stages: the model and the runner's options (as `kgbench run` has them)."""

    out_dir: Path
    model: str
    base_url: str | None = None
    settings: Settings = field(default_factory=Settings)
    concurrency: int = 16
    retry_failed: bool = False
    batch: bool = False
    price_in: float | None = None
    price_out: float | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    timeout_s: float = 300.0
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    batch_options: BatchOptions = field(default_factory=BatchOptions)
    responders: tuple[str, ...] = ()
    respond: Respond | None = None


@dataclass
class StageResult:
    stage: str
    log_path: Path
    records: dict[str, dict[str, Any]]
    missing: list[str]
    tally: Tally
    wall_s: float
    lines: list[str]

    @property
    def complete(self) -> bool:
        """Every request has a record (ok or failed); False after `--no-wait` batches."""
        return not self.missing


def stage_spec(config: StageConfig) -> ModelSpec:
    """The model spec; an openai: model without a base URL honours $OPENAI_BASE_URL."""
    base_url = config.base_url
    if base_url is None and config.model.startswith("openai:"):
        base_url = os.environ.get("OPENAI_BASE_URL") or None
    return parse_model_spec(config.model, base_url, config.responders)


def plan_stage(
    stage: Stage, spec: ModelSpec, settings: Settings
) -> tuple[list[RequestItem], dict[str, str]]:
    """Unique request items (first request id per content) and request id -> key."""
    if settings.replicates != 1:
        raise UserError("stages take one answer per request; --replicates must be 1")
    base = request_params(spec, settings, 0)
    items: dict[str, RequestItem] = {}
    key_of: dict[str, str] = {}
    for request in stage.requests:
        if request.request_id in key_of:
            raise AssertionError(f"stage {stage.name}: request id {request.request_id} twice")
        digest = sha256_text(canonical_json(request.schema))[:16]
        params = {**base, "schema_sha256": digest}
        key = request_key(spec.text, request.messages, params, 0)
        key_of[request.request_id] = key
        if key not in items:
            items[key] = RequestItem(
                key,
                request.request_id,
                "",
                stage.name,
                0,
                request.messages,
                params,
                request.schema,
                request.schema_name,
            )
    return list(items.values()), key_of


def run_stage(config: StageConfig, stage: Stage, console: Console | None = None) -> StageResult:
    """Run one stage to completion (or submit it, with `--no-wait` batches); see the module
    docstring. Raises UserError/ServiceError for user problems."""
    if not STAGE_NAME.match(stage.name):
        raise AssertionError(f"stage name {stage.name!r} is not file-safe")
    console = console or Console(stderr=True, highlight=False)
    out_dir = Path(config.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(out_dir / f".{stage.name}.lock"):
        return asyncio.run(_run(config, stage, console))


async def _run(config: StageConfig, stage: Stage, console: Console) -> StageResult:
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    spec = stage_spec(config)
    if config.batch and spec.is_reference:
        raise UserError("--batch needs an openai: model; ref: responders answer in-process")
    if spec.is_reference and config.respond is None:
        raise AssertionError("a ref: model needs StageConfig.respond")
    if min(config.concurrency, config.policy.max_attempts) < 1:
        raise UserError("--concurrency and --max-attempts must be at least 1")
    api_key = None if spec.is_reference else _api_key(spec)
    plan, key_of = plan_stage(stage, spec, config.settings)
    lookup = {item.key: item for item in plan}
    requests = {r.request_id: r for r in stage.requests}
    prices = resolve_prices(spec, config.price_in, config.price_out)
    judge = ResponseJudge({})  # every stage request carries its own schema
    tally = Tally(planned=len(plan))
    log = JsonlLog(Path(config.out_dir) / f"{stage.name}.jsonl")
    existing, _ = log.load()
    to_send, done = _partition(plan, existing, config.retry_failed, tally)
    cache = None
    if config.use_cache and not spec.is_reference:
        cache = JsonlLog(
            (config.cache_dir or default_cache_dir()) / f"{spec.slug}.jsonl", shared=True
        )
        to_send = _copy_cache_hits(cache, log, to_send, done, tally)
    if prices.source == "unknown" and to_send:
        tally.notes.append(f"no price known for {spec.name}: " + prices.describe())
    label = f"{stage.name}: {spec.text} ({'batch' if config.batch else 'online'})"
    fell_back = False
    with RunProgress(len(to_send), label, console, tally) as progress:
        if config.batch and to_send:
            await _send_batch(config, spec, api_key, stage, judge, prices, log, cache, lookup,
                              done, tally, progress, console, to_send)  # fmt: skip
        elif to_send:
            if spec.is_reference:
                assert config.respond is not None
                transport: Any = StageReferenceTransport(spec, requests, config.respond)
            else:
                transport = OpenAITransport(
                    spec, api_key or NO_KEY, config.timeout_s, {}, config.settings.structured
                )
            await send_online(
                transport, spec, config.concurrency, config.policy, judge, prices, log, cache,
                tally, progress, to_send,
            )  # fmt: skip
            fell_back = transport.fell_back
    log.compact()
    final, _ = log.load(wanted=set(key_of.values()))
    tally.final_ok = sum(1 for r in final.values() if r["status"] == "ok")
    tally.final_failed = len(final) - tally.final_ok
    tally.missing = len(plan) - len(final)
    pending = config.batch and not config.batch_options.wait
    note_requests(
        f"stage {stage.name}",
        tally.final_failed,
        0 if pending else tally.missing,
        tally.missing if pending else 0,
    )
    if fell_back:
        tally.notes.append(
            "the endpoint rejected response_format: answers were requested as JSON in the prompt "
            "and validated locally against the schema"
        )
    records = {rid: final[key] for rid, key in key_of.items() if key in final}
    missing = [rid for rid in key_of if rid not in records]
    wall = time.perf_counter() - started
    meta = {
        "stage": stage.name,
        "model": spec.text,
        "base_url": _safe_url(spec.base_url),
        "settings": asdict(config.settings),
        "structured_fallback": fell_back,
        "mode": "batch" if config.batch else ("reference" if spec.is_reference else "online"),
        "requests": len(stage.requests),
        "distinct_requests": len(plan),
        "prices": prices.describe(),
        "started_at": started_at,
        "wall_s": round(wall, 3),
        "counts": {k: v for k, v in asdict(tally).items() if k != "notes"},
        "notes": tally.notes,
    }
    atomic_write_json(Path(config.out_dir) / f"{stage.name}.run.json", meta)
    lines = summary_lines(tally, wall, str(log.path), prices.describe())
    return StageResult(stage.name, log.path, records, missing, tally, wall, lines)


async def _send_batch(
    config: StageConfig,
    spec: ModelSpec,
    api_key: str | None,
    stage: Stage,
    judge: ResponseJudge,
    prices: Any,
    log: JsonlLog,
    cache: JsonlLog | None,
    lookup: dict[str, RequestItem],
    done: set[str],
    tally: Tally,
    progress: RunProgress,
    console: Console,
    items: list[RequestItem],
) -> None:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        api_key=api_key, base_url=spec.base_url, max_retries=0, timeout=config.timeout_s
    )
    try:
        runner = BatchRunner(
            client,
            spec,
            Path(config.out_dir) / "batches" / stage.name,
            {},
            config.settings.structured,
            judge,
            prices,
            log,
            cache,
            lookup,
            done,
            tally,
            progress,
            console,
            config.batch_options,
            config.policy,
            secrets=(api_key or "",),
            endpoint=_safe_url(spec.base_url),
        )
        await runner.run(items)
    finally:
        await client.close()
        log.close()
        if cache is not None:
            cache.close()


class StageReferenceTransport:
    """In-process reference responders for stages: same records as a model, no network."""

    structured = False
    fell_back = False

    def __init__(
        self, spec: ModelSpec, requests: dict[str, StageRequest], respond: Respond
    ) -> None:
        self.spec = spec
        self.requests = requests
        self.respond = respond

    def scrub(self, text: str) -> str:
        return scrub(text)

    async def complete(self, item: RequestItem) -> Completion:
        from .messages import estimate_tokens, message_text

        request = self.requests[item.prompt_id]
        try:
            answer = self.respond(self.spec.name, request)
        except Exception as exc:
            message = scrub(f"responder failed: {type(exc).__name__}: {exc}")
            raise RequestFailure("permanent", message) from None
        raw = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        tokens_in = sum(estimate_tokens(message_text(m)) for m in item.messages)
        tokens_out = estimate_tokens(raw)
        usage = {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        }
        return Completion(raw, "stop", None, usage, response_model=self.spec.text)

    async def aclose(self) -> None:
        return None

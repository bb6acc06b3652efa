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
   (state under `<out_dir>/batches/<stage>/`, re-attached after a crash), all through the
   one send pipeline that `kgbench run` uses (harness.runner.pipeline);
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
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from kgbench.errors import UserError
from kgbench.io import canonical_json, sha256_text

from .client import Completion, RequestFailure, scrub
from .job import Job, SendOptions, Started
from .keys import request_key
from .log import RunLock
from .pipeline import check_options, send
from .plan import RequestItem, Settings, request_params
from .progress import Tally
from .spec import ModelSpec, resolve_model_spec

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
class StageConfig(SendOptions):
    """How to run stages: the model and the runner's options (as `kgbench run` has them),
    the folder of the stage logs, and the in-process responders of `ref:` models."""

    out_dir: Path
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
    return resolve_model_spec(config.model, config.base_url, config.responders)


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
    started = Started.now()
    spec = stage_spec(config)
    if spec.is_reference and config.respond is None:
        raise AssertionError("a ref: model needs StageConfig.respond")
    key = check_options(
        config,
        spec,
        {"--concurrency": config.concurrency, "--max-attempts": config.policy.max_attempts},
    )
    plan, key_of = plan_stage(stage, spec, config.settings)
    requests = {r.request_id: r for r in stage.requests}
    out_dir = Path(config.out_dir)

    def reference() -> StageReferenceTransport:
        assert config.respond is not None
        return StageReferenceTransport(spec, requests, config.respond)

    def describe(final: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return {
            "stage": stage.name,
            "requests": len(stage.requests),
            "distinct_requests": len(plan),
        }

    job = Job(
        spec=spec,
        plan=plan,
        log_path=out_dir / f"{stage.name}.jsonl",
        meta_path=out_dir / f"{stage.name}.run.json",
        batch_dir=out_dir / "batches" / stage.name / "batches",
        step=f"stage {stage.name}",
        started=started,
        label=f"{stage.name}: ",
        reference=reference,
        describe=describe,
        skip_idle=True,
    )
    sent = await send(job, config, console, key)
    records = {rid: sent.final[k] for rid, k in key_of.items() if k in sent.final}
    missing = [rid for rid in key_of if rid not in records]
    return StageResult(
        stage.name, sent.log_path, records, missing, sent.tally, sent.wall_s, sent.lines
    )


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

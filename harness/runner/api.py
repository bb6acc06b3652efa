"""`run_model`: the whole of `kgbench run` as a function (the CLI only parses flags).

Order of business: read the run folder, plan every request with its key, keep what the log
already holds (ok, and failed unless --retry-failed), copy cache hits without a request,
send the rest (online or via the Batch API), compact the log if a key got a second record,
and write a summary. Each step is idempotent, so re-running after any crash converges.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rich.console import Console

from kgbench.errors import UserError
from kgbench.io import atomic_write_json
from kgbench.locations import cache_dir

from ..responders import needs_gold
from ..runfolder import RunFolder
from .batch import BatchOptions, BatchRunner
from .client import Completion, OpenAITransport, ReferenceTransport, RequestFailure
from .engine import OnlineRunner, RetryPolicy
from .failures import note_requests
from .log import JsonlLog, RecordWriter, RunLock
from .parse import ResponseJudge
from .plan import RequestItem, Settings, plan_requests, request_params
from .pricing import resolve_prices
from .progress import RunProgress, Tally, summary_lines
from .records import cached_copy, failed_record, ok_record
from .spec import ModelSpec, parse_model_spec

NO_KEY = "no-key-needed"


@dataclass(frozen=True)
class RunConfig:
    run_dir: Path
    model: str
    base_url: str | None = None
    settings: Settings = field(default_factory=Settings)
    concurrency: int = 16
    retry_failed: bool = False
    batch: bool = False
    limit: int | None = None
    price_in: float | None = None
    price_out: float | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    log_name: str | None = None  # responses/<log_name>.jsonl; default the model's slug
    timeout_s: float = 300.0
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    batch_options: BatchOptions = field(default_factory=BatchOptions)


@dataclass
class RunResult:
    log_path: Path
    tally: Tally
    wall_s: float
    lines: list[str]


def default_cache_dir() -> Path:
    return cache_dir("responses")


def _api_key(spec: ModelSpec) -> str:
    key = os.environ.get("OPENAI_API_KEY", "").strip()
    if key:
        return key
    if spec.base_url is None:
        raise UserError(
            f"OPENAI_API_KEY is not set; export it to run {spec.text} "
            "(a local server given with --base-url needs no key)"
        )
    return NO_KEY


def _safe_url(url: str | None) -> str | None:
    """A base URL without user:password, fit for files."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def resolve_spec(config: RunConfig) -> ModelSpec:
    """The model spec; an openai: model without --base-url honours $OPENAI_BASE_URL (the SDK
    would silently use it anyway, and the endpoint must be part of every request's key)."""
    base_url = config.base_url
    if base_url is None and config.model.startswith("openai:"):
        base_url = os.environ.get("OPENAI_BASE_URL") or None
    return parse_model_spec(config.model, base_url)


LOG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def log_stem(spec: ModelSpec, config: RunConfig) -> str:
    """The responses log's file stem: --log-name, else the model's slug."""
    if config.log_name is None:
        return spec.slug
    if not LOG_NAME.fullmatch(config.log_name) or config.log_name.endswith(".run"):
        raise UserError(
            f"--log-name {config.log_name!r} is not a plain file name; expected letters, "
            "digits, '.', '_' and '-' (up to 100 characters)"
        )
    return config.log_name


def run_model(config: RunConfig, console: Console | None = None) -> RunResult:
    """Run one model over a run folder; raises UserError/ServiceError for user problems."""
    if console is None:
        from kgbench.cliutil import stderr_console

        console = stderr_console()
    spec = resolve_spec(config)
    lock = RunFolder(Path(config.run_dir)).response_lock(log_stem(spec, config))
    if not Path(config.run_dir).is_dir():
        raise UserError(f"run folder {config.run_dir} does not exist")
    with RunLock(lock):
        return asyncio.run(_run(config, console))


async def _run(config: RunConfig, console: Console) -> RunResult:
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    spec = resolve_spec(config)
    if config.batch and spec.is_reference:
        raise UserError("--batch needs an openai: model; ref: responders answer in-process")
    if min(config.concurrency, config.settings.replicates, config.policy.max_attempts) < 1:
        raise UserError("--concurrency, --replicates and --max-attempts must be at least 1")
    api_key = None if spec.is_reference else _api_key(spec)
    folder = RunFolder.open(config.run_dir)
    prompts = folder.prompts()
    _, schema = folder.response_schema()
    gold = folder.scenarios_by_id() if spec.is_reference and needs_gold(spec.name) else {}
    plan = plan_requests(prompts, spec, config.settings)
    lookup = {item.key: item for item in plan}
    if config.limit is not None:
        keep = {p.prompt_id for p in prompts[: config.limit]}
        plan = [i for i in plan if i.prompt_id in keep]
    prices = resolve_prices(spec, config.price_in, config.price_out)
    judge = ResponseJudge(schema)
    tally = Tally(planned=len(plan))
    log = JsonlLog(folder.response_log(log_stem(spec, config)))
    existing, _ = log.load()
    _check_identity(existing, spec, config.settings, log.path)

    to_send, done = _partition(plan, existing, config.retry_failed, tally)
    if existing.keys() - lookup.keys():
        tally.notes.append(
            f"the log also holds {len(existing.keys() - lookup.keys())} records from other "
            "settings or prompts (kept; filter by their 'params')"
        )
    cache = None
    if config.use_cache and not spec.is_reference:
        cache = JsonlLog(
            (config.cache_dir or default_cache_dir()) / f"{spec.slug}.jsonl", shared=True
        )
        to_send = _copy_cache_hits(cache, log, to_send, done, tally)

    if prices.source == "unknown":
        tally.notes.append(f"no price known for {spec.name}: " + prices.describe())
    label = f"{spec.text} ({'batch' if config.batch else 'online'})"
    fell_back = False
    with RunProgress(len(to_send), label, console, tally) as progress:
        if config.batch:
            from openai import AsyncOpenAI

            client = AsyncOpenAI(
                api_key=api_key, base_url=spec.base_url, max_retries=0, timeout=config.timeout_s
            )
            try:
                runner = BatchRunner(
                    client,
                    spec,
                    folder.path,
                    schema,
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
                await runner.run(to_send)
            finally:
                await client.close()
                log.close()
                if cache is not None:
                    cache.close()
        elif to_send:
            fell_back = await _run_online(
                config,
                spec,
                api_key,
                schema,
                gold,
                judge,
                prices,
                log,
                cache,
                tally,
                progress,
                to_send,
            )

    log.compact()  # rewrites only if some key got a second record (a retried failure)
    final, _ = log.load(wanted={i.key for i in plan})
    tally.final_ok = sum(1 for r in final.values() if r["status"] == "ok")
    tally.final_failed = len(final) - tally.final_ok
    tally.missing = len(plan) - len(final)
    pending = config.batch and not config.batch_options.wait
    note_requests(
        f"run {log.path.stem}",
        tally.final_failed,
        0 if pending else tally.missing,
        tally.missing if pending else 0,
    )
    if tally.final_failed and not config.retry_failed:
        tally.notes.append("failed requests are kept in the log; re-send them with --retry-failed")
    if fell_back:
        tally.notes.append(
            "the endpoint rejected response_format: answers were requested as JSON in the prompt "
            "and validated locally against the schema"
        )
    wall = time.perf_counter() - started
    served_by = sorted(
        {str(r["system_fingerprint"]) for r in final.values() if r.get("system_fingerprint")}
    )
    _write_meta(
        folder, spec, config, tally, prices.describe(), started_at, wall, fell_back, served_by
    )
    lines = summary_lines(tally, wall, str(log.path), prices.describe())
    return RunResult(log.path, tally, wall, lines)


def _check_identity(
    existing: dict[str, dict[str, Any]], spec: ModelSpec, settings: Settings, path: Path
) -> None:
    """A log holds the answers of one request identity (model, endpoint, parameters).

    Every record carries its model and parameters (base_url included); one that another
    identity wrote means this run would append a second set of answers to the same prompts,
    and scoring would have to pick between them. Refused, naming what differs.
    """
    foreign: list[tuple[str, str]] = []
    for record in existing.values():
        params = record.get("params")
        replicate = record.get("replicate")
        if not isinstance(params, dict) or not isinstance(replicate, int):
            continue  # a record from an older format: nothing to compare
        ours = request_params(spec, settings, replicate)
        if record.get("model") != spec.text:
            foreign.append(("model", f"{record.get('model')!r} (this run: {spec.text!r})"))
        elif params != ours:
            key = next(k for k in sorted({*params, *ours}) if params.get(k) != ours.get(k))
            foreign.append((key, f"{params.get(key)!r} (this run: {ours.get(key)!r})"))
    if foreign:
        what, example = foreign[0]
        raise UserError(
            f"{path} holds {len(foreign)} answer(s) from another request identity ({what} "
            f"{example}); a responses log holds one endpoint and one set of parameters, so "
            "this run's answers would be mixed with them. Give this run its own log with "
            "--log-name NAME, use another run folder, or move that log away first"
        )


def _partition(
    plan: list[RequestItem], existing: dict[str, dict[str, Any]], retry_failed: bool, tally: Tally
) -> tuple[list[RequestItem], set[str]]:
    """What to send: not in the log, or failed there and --retry-failed. Also the keys done."""
    to_send: list[RequestItem] = []
    done: set[str] = set()
    for item in plan:
        previous = existing.get(item.key)
        if previous is not None and previous["status"] == "ok":
            tally.previous_ok += 1
            done.add(item.key)
        elif previous is not None and not retry_failed:
            tally.previous_failed += 1
        else:
            to_send.append(item)
    return to_send, done


def _copy_cache_hits(
    cache: JsonlLog, log: JsonlLog, to_send: list[RequestItem], done: set[str], tally: Tally
) -> list[RequestItem]:
    """Copy cached answers into the log (no request); return what is left to send."""
    hits, _ = cache.load(wanted={i.key for i in to_send})
    if not hits:
        return to_send
    copies = [cached_copy(hits[i.key], i) for i in to_send if i.key in hits]
    log.append(copies)
    for record in copies:
        tally.count(record)
        done.add(record["key"])
    return [i for i in to_send if i.key not in hits]


async def _run_online(
    config: RunConfig,
    spec: ModelSpec,
    api_key: str | None,
    schema: dict[str, Any],
    gold: dict[str, Any],
    judge: ResponseJudge,
    prices: Any,
    log: JsonlLog,
    cache: JsonlLog | None,
    tally: Tally,
    progress: RunProgress,
    items: list[RequestItem],
) -> bool:
    if spec.is_reference:
        transport: Any = ReferenceTransport(spec, gold)
    else:
        transport = OpenAITransport(
            spec, api_key or NO_KEY, config.timeout_s, schema, config.settings.structured
        )
    await send_online(
        transport, spec, config.concurrency, config.policy, judge, prices, log, cache, tally,
        progress, items,
    )  # fmt: skip
    return transport.fell_back


async def send_online(
    transport: Any,
    spec: ModelSpec,
    concurrency: int,
    policy: RetryPolicy,
    judge: ResponseJudge,
    prices: Any,
    log: JsonlLog,
    cache: JsonlLog | None,
    tally: Tally,
    progress: RunProgress,
    items: list[RequestItem],
) -> None:
    """Send `items` through `transport` with the engine (AIMD, retries) and the single durable
    writer; every outcome becomes one record in `log` (and ok ones in `cache`). Shared by
    `kgbench run` and stages (harness.runner.stage)."""
    mode = "reference" if spec.is_reference else "online"

    def make_ok(item: RequestItem, completion: Completion, attempts: int, latency: float):
        return ok_record(
            item, spec, completion, judge, prices, attempts=attempts, latency_s=latency, mode=mode
        )

    def make_failed(item: RequestItem, failure: RequestFailure, attempts: int):
        return failed_record(
            item,
            spec,
            transport.scrub(failure.message),
            attempts=attempts,
            mode=mode,
            status_code=failure.status,
        )

    def durable(record: dict[str, Any]) -> None:
        tally.count(record)
        progress.advance(record)

    writer = RecordWriter(log, cache, on_durable=durable)
    writer.start()
    runner = OnlineRunner(transport, concurrency, policy, make_ok, make_failed, writer.put)
    try:
        await runner.run(items)
    finally:
        await writer.close()
        await transport.aclose()
    if runner.controller.decreases:
        tally.notes.append(
            f"rate limited: concurrency was halved {runner.controller.decreases} time(s), "
            f"ended at {runner.controller.limit} of {concurrency}"
        )


def _write_meta(
    folder: RunFolder,
    spec: ModelSpec,
    config: RunConfig,
    tally: Tally,
    prices: str,
    started_at: str,
    wall_s: float,
    fell_back: bool,
    served_by: list[str],
) -> None:
    """responses/<slug>.run.json: the settings and counts of the latest invocation.

    `served_by` holds the endpoints' system fingerprints: the local reference server signs
    its answers `kgbench-ref-<responder>`, which is how a report knows a baseline reached
    through the real client (as in the pilot) is a baseline and not a model."""
    meta = {
        "model": spec.text,
        "base_url": _safe_url(spec.base_url),
        "settings": asdict(config.settings),
        "structured_fallback": fell_back,
        "served_by": served_by,
        "mode": "batch" if config.batch else ("reference" if spec.is_reference else "online"),
        "concurrency": config.concurrency,
        "limit": config.limit,
        "prices": prices,
        "started_at": started_at,
        "wall_s": round(wall_s, 3),
        "counts": {k: v for k, v in asdict(tally).items() if k != "notes"},
        "notes": tally.notes,
    }
    atomic_write_json(folder.log_settings(log_stem(spec, config)), meta)


def answer_with_reference(run_dir: Path, responder: str) -> Path:
    """Answer every prompt of a run folder with a reference responder; returns the log path.

    This is `kgbench run --model ref:<responder>`: the same runner, key recipe, log format and
    file name as any model, so `kgbench score` treats baselines exactly like models.
    """
    config = RunConfig(run_dir=Path(run_dir), model=f"ref:{responder}", use_cache=False)
    return run_model(config, Console(stderr=True, quiet=True)).log_path

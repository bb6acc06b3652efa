"""The send pipeline: the one place where requests are sent and their records kept.

`kgbench run` (harness.runner.api) and stages (harness.runner.stage; the graph-generation
probe and the C5 verify agent run through them) each plan a `Job` and call `send`, which
walks the same steps for both:

1. read the job's log and keep what it already holds (ok, and failed unless
   `retry_failed`): the partition;
2. copy hits from the shared response cache without a request;
3. send the rest online (adaptive concurrency, counted retries, one durable writer) or
   through the Batch API (harness.runner.batch);
4. compact the log if a key got a second record (a retried failure);
5. count the final records, report them to the failure ledger, and write the job's
   run.json (`meta`).

Each step is idempotent, so re-running after any crash (even SIGKILL) converges without
paying twice. This is the code that spends money: a fix here (a retry rule, a cache rule)
reaches every caller at once, which is why there is only one copy.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from kgbench.errors import UserError
from kgbench.io import atomic_write_json
from kgbench.locations import cache_dir

from .batch import BatchRunner
from .client import Completion, OpenAITransport, RequestFailure
from .engine import OnlineRunner
from .failures import note_requests
from .job import Books, Job, SendOptions
from .log import JsonlLog, RecordWriter
from .plan import RequestItem
from .pricing import resolve_prices
from .progress import RunProgress, Tally, summary_lines
from .records import cached_copy, failed_record, ok_record
from .spec import ModelSpec, safe_url

NO_KEY = "no-key-needed"


def default_cache_dir() -> Path:
    return cache_dir("responses")


def api_key(spec: ModelSpec) -> str:
    """$OPENAI_API_KEY; a local server given with a base URL needs none."""
    key = os.environ.get("OPENAI_API_KEY", "").strip()
    if key:
        return key
    if spec.base_url is None:
        raise UserError(
            f"OPENAI_API_KEY is not set; export it to run {spec.text} "
            "(a local server given with --base-url needs no key)"
        )
    return NO_KEY


def check_options(options: SendOptions, spec: ModelSpec, counts: dict[str, int]) -> str | None:
    """Refuse options that cannot run, before anything is read; `counts` are the options that
    must be at least 1, by flag. Returns the API key (None for in-process responders)."""
    if options.batch and spec.is_reference:
        raise UserError("--batch needs an openai: model; ref: responders answer in-process")
    if min(counts.values()) < 1:
        names = list(counts)
        flags = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        raise UserError(f"{flags} must be at least 1")
    return None if spec.is_reference else api_key(spec)


@dataclass
class Sent:
    """What `send` did: the final record of every planned key, and the summary."""

    log_path: Path
    final: dict[str, dict[str, Any]]
    tally: Tally
    wall_s: float
    lines: list[str]


async def send(job: Job, options: SendOptions, console: Console, key: str | None) -> Sent:
    """Run `job` to its final records (or submit it, with `--no-wait` batches); see the module
    docstring. Raises UserError/ServiceError for user problems."""
    spec = job.spec
    job.judge  # noqa: B018 - compiles the answer contracts: a schema it cannot read stops here
    prices = resolve_prices(spec, options.price_in, options.price_out)
    tally = Tally(planned=len(job.plan))
    log = JsonlLog(job.log_path)
    existing, _ = log.load()
    if job.check_log is not None:
        job.check_log(existing, tally)
    to_send, done = partition(job.plan, existing, options.retry_failed, tally)
    cache = None
    if options.use_cache and not spec.is_reference:
        cache = JsonlLog(
            (options.cache_dir or default_cache_dir()) / f"{spec.slug}.jsonl", shared=True
        )
        to_send = copy_cache_hits(cache, log, to_send, done, tally)
    idle = job.skip_idle and not to_send
    if prices.source == "unknown" and not idle:
        tally.notes.append(f"no price known for {spec.name}: " + prices.describe())
    label = f"{job.label}{spec.text} ({'batch' if options.batch else 'online'})"
    fell_back = False
    with RunProgress(len(to_send), label, console, tally) as progress:
        books = Books(log, cache, tally, done, prices, progress, console)
        if options.batch and not idle:
            await send_batch(job, books, options, key, to_send)
        elif to_send:
            fell_back = await send_online(job, books, options, key, to_send)
    log.compact()  # rewrites only if some key got a second record (a retried failure)
    final, _ = log.load(wanted={item.key for item in job.plan})
    _count_final(job, options, tally, final)
    if fell_back:
        tally.notes.append(
            "the endpoint rejected response_format: answers were requested as JSON in the prompt "
            "and validated locally against the schema"
        )
    wall = time.perf_counter() - job.started.clock
    meta = {
        "model": spec.text,
        "base_url": safe_url(spec.base_url),
        "settings": asdict(options.settings),
        "structured_fallback": fell_back,
        "mode": "batch" if options.batch else ("reference" if spec.is_reference else "online"),
        "prices": prices.describe(),
        "started_at": job.started.at,
        "wall_s": round(wall, 3),
        "counts": {k: v for k, v in asdict(tally).items() if k != "notes"},
        "notes": tally.notes,
        **(job.describe(final) if job.describe is not None else {}),
    }
    atomic_write_json(job.meta_path, meta)
    lines = summary_lines(tally, wall, str(log.path), prices.describe())
    return Sent(log.path, final, tally, wall, lines)


def _count_final(
    job: Job, options: SendOptions, tally: Tally, final: dict[str, dict[str, Any]]
) -> None:
    """The final counts, reported to the command's failure ledger."""
    tally.final_ok = sum(1 for r in final.values() if r["status"] == "ok")
    tally.final_failed = len(final) - tally.final_ok
    tally.missing = len(job.plan) - len(final)
    pending = options.batch and not options.batch_options.wait
    note_requests(
        job.step,
        tally.final_failed,
        0 if pending else tally.missing,
        tally.missing if pending else 0,
    )
    if job.retry_hint and tally.final_failed and not options.retry_failed:
        tally.notes.append("failed requests are kept in the log; re-send them with --retry-failed")


def partition(
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


def copy_cache_hits(
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


async def send_online(
    job: Job, books: Books, options: SendOptions, key: str | None, items: list[RequestItem]
) -> bool:
    """Send `items` with the engine (AIMD, retries) and the single durable writer; every
    outcome becomes one record in the log (and ok ones in the cache). Returns whether the
    endpoint refused structured output and the answers were asked for in the prompt."""
    spec = job.spec
    if spec.is_reference:
        if job.reference is None:
            raise AssertionError(f"job {job.step} has no in-process transport for {spec.text}")
        transport: Any = job.reference()
    else:
        transport = OpenAITransport(
            spec, key or NO_KEY, options.timeout_s, job.schema, options.settings.structured
        )
    mode = "reference" if spec.is_reference else "online"
    judge, prices, tally = job.judge, books.prices, books.tally

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
        books.progress.advance(record)

    writer = RecordWriter(books.log, books.cache, on_durable=durable)
    writer.start()
    concurrency = options.concurrency
    runner = OnlineRunner(transport, concurrency, options.policy, make_ok, make_failed, writer.put)
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
    return bool(transport.fell_back)


async def send_batch(
    job: Job, books: Books, options: SendOptions, key: str | None, items: list[RequestItem]
) -> None:
    """Send `items` through the Batch API (re-attaching to batches an earlier run submitted)."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        api_key=key, base_url=job.spec.base_url, max_retries=0, timeout=options.timeout_s
    )
    try:
        await BatchRunner(client, job, books, options, secrets=(key or "",)).run(items)
    finally:
        await client.close()
        books.log.close()
        if books.cache is not None:
            books.cache.close()

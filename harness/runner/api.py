"""`run_model`: the whole of `kgbench run` as a function (the CLI only parses flags).

A run folder's prompts are planned into a `Job` (one request per prompt and replicate, each
with its key) and sent by the one send pipeline (harness.runner.pipeline), which keeps what
the log already holds, copies cache hits, sends the rest online or via the Batch API,
compacts the log and writes the summary. What is particular to a run folder lives here: the
log's name, the request identity a log holds, and the run's own keys of run.json.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.evaluation.responders import needs_gold
from kgbench.errors import UserError

from ..compiled import CompiledDomain
from ..runfolder import RunFolder
from .client import ReferenceTransport
from .job import Job, SendOptions, Started
from .log import RunLock
from .pipeline import check_options, send
from .plan import Settings, plan_requests, request_params
from .progress import Tally
from .spec import PLAIN_LOG_NAME, ModelSpec, resolve_model_spec


@dataclass(frozen=True)
class RunConfig(SendOptions):
    """`kgbench run`: the runner's options, the run folder, and which of its prompts."""

    run_dir: Path
    limit: int | None = None
    log_name: str | None = None  # responses/<log_name>.jsonl; default the model's slug
    compiled: CompiledDomain | None = None  # the caller's open handle; None: the run's own


@dataclass
class RunResult:
    log_path: Path
    tally: Tally
    wall_s: float
    lines: list[str]


def resolve_spec(config: RunConfig) -> ModelSpec:
    """The model spec (an openai: model without --base-url honours $OPENAI_BASE_URL)."""
    return resolve_model_spec(config.model, config.base_url)


def log_stem(spec: ModelSpec, config: RunConfig) -> str:
    """The responses log's file stem: --log-name, else the model's slug."""
    if config.log_name is None:
        return spec.slug
    if not PLAIN_LOG_NAME.fullmatch(config.log_name) or config.log_name.endswith(".run"):
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
    started = Started.now()
    spec = resolve_spec(config)
    key = check_options(
        config,
        spec,
        {
            "--concurrency": config.concurrency,
            "--replicates": config.settings.replicates,
            "--max-attempts": config.policy.max_attempts,
        },
    )
    folder = RunFolder.open(config.run_dir)
    prompts = folder.prompts()
    _, schema = folder.response_schema(config.compiled)
    gold = folder.scenarios_by_id() if spec.is_reference and needs_gold(spec.name) else {}
    plan = plan_requests(prompts, spec, config.settings)
    known = {item.key: item for item in plan}
    if config.limit is not None:
        keep = {p.prompt_id for p in prompts[: config.limit]}
        plan = [i for i in plan if i.prompt_id in keep]
    stem = log_stem(spec, config)
    log_path = folder.response_log(stem)

    def check_log(existing: dict[str, dict[str, Any]], tally: Tally) -> None:
        _check_identity(existing, spec, config.settings, log_path)
        if existing.keys() - known.keys():
            tally.notes.append(
                f"the log also holds {len(existing.keys() - known.keys())} records from other "
                "settings or prompts (kept; filter by their 'params')"
            )

    def describe(final: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """`served_by` holds the endpoints' system fingerprints: the local reference server
        signs its answers `kgbench-ref-<responder>`, which is how a report knows a baseline
        reached through the real client (as in the pilot) is a baseline and not a model."""
        served_by = sorted(
            {str(r["system_fingerprint"]) for r in final.values() if r.get("system_fingerprint")}
        )
        return {"served_by": served_by, "concurrency": config.concurrency, "limit": config.limit}

    job = Job(
        spec=spec,
        plan=plan,
        log_path=log_path,
        meta_path=folder.log_settings(stem),
        batch_dir=folder.path / "batches",
        step=f"run {stem}",
        started=started,
        schema=schema,
        known=known,
        reference=lambda: ReferenceTransport(spec, gold),
        check_log=check_log,
        describe=describe,
        retry_hint=True,
    )
    sent = await send(job, config, console, key)
    return RunResult(sent.log_path, sent.tally, sent.wall_s, sent.lines)


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


def answer_with_reference(run_dir: Path, responder: str) -> Path:
    """Answer every prompt of a run folder with a reference responder; returns the log path.

    This is `kgbench run --model ref:<responder>`: the same runner, key recipe, log format and
    file name as any model, so `kgbench score` treats baselines exactly like models.
    """
    config = RunConfig(run_dir=Path(run_dir), model=f"ref:{responder}", use_cache=False)
    return run_model(config, Console(stderr=True, quiet=True)).log_path

"""`kgbench run`.

A plain typer-annotated function, mounted at top level by kgbench/cli/main.py (whose root group
turns a UserError into one message and exit code 2). The run summary goes to stderr and the
response log's path to stdout, so scripts can do `log=$(kgbench run ...)`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .failures import ALLOW_FAILURES_HELP


def _err() -> Console:
    from kgbench.cliutil import stderr_console

    return stderr_console(soft_wrap=True)


def run_command(
    run_dir: Annotated[
        Path, typer.Option("--run-dir", help="The run folder (holds run.json and prompts/).")
    ],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="openai:<model> (OPENAI_API_KEY; --base-url for any OpenAI-compatible server) "
            "or ref:oracle | ref:context-reader | ref:ungrounded (in-process, no network).",
        ),
    ],
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 "
            "(default: $OPENAI_BASE_URL, else api.openai.com).",
        ),
    ] = None,
    temperature: Annotated[
        float | None, typer.Option(help="Sampling temperature (default: not sent).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Seed; replicate r is sent seed + r (default: not sent).")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Answer token limit (default: not sent).")
    ] = None,
    replicates: Annotated[int, typer.Option(help="Samples per prompt.")] = 1,
    concurrency: Annotated[
        int, typer.Option(help="Most requests in flight (adapts down on 429).")
    ] = 16,
    retry_failed: Annotated[
        bool,
        typer.Option("--retry-failed/--no-retry-failed", help="Re-send requests logged as failed."),
    ] = False,
    batch: Annotated[
        bool,
        typer.Option("--batch/--no-batch", help="Use the Batch API (half price, up to 24 h)."),
    ] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N prompts.")] = None,
    price_in: Annotated[
        float | None, typer.Option("--price-in", help="USD per 1M input tokens.")
    ] = None,
    price_out: Annotated[
        float | None, typer.Option("--price-out", help="USD per 1M output tokens.")
    ] = None,
    structured: Annotated[
        bool,
        typer.Option(
            "--structured/--no-structured",
            help="Send the response schema as strict structured output (falls back automatically "
            "when the endpoint rejects response_format).",
        ),
    ] = True,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir", help="Shared response cache (default <repo>/.cache/responses)."
        ),
    ] = None,
    cache: Annotated[
        bool, typer.Option("--cache/--no-cache", help="Reuse and fill the shared cache.")
    ] = True,
    log_name: Annotated[
        str | None,
        typer.Option(
            "--log-name",
            help="Responses log responses/NAME.jsonl (default: the model's slug). A log holds "
            "one endpoint and one set of parameters; name another log to run another.",
        ),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before one request times out.")] = 300.0,
    max_attempts: Annotated[
        int, typer.Option("--max-attempts", help="Sends per request on 5xx/timeouts/drops.")
    ] = 6,
    backoff_base: Annotated[
        float, typer.Option("--backoff-base", help="Backoff base in seconds.")
    ] = 1.0,
    backoff_cap: Annotated[
        float, typer.Option("--backoff-cap", help="Longest backoff in seconds.")
    ] = 60.0,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", help="First batch poll wait, seconds.")
    ] = 10.0,
    poll_max: Annotated[
        float, typer.Option("--poll-max", help="Longest batch poll wait, seconds.")
    ] = 300.0,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait/--no-wait", help="With --batch: wait for results, or submit and exit."
        ),
    ] = True,
    allow_failures: Annotated[
        bool,
        typer.Option("--allow-failures/--no-allow-failures", help=ALLOW_FAILURES_HELP),
    ] = False,
    batch_max_requests: Annotated[int, typer.Option(hidden=True)] = 50_000,
    batch_max_bytes: Annotated[int, typer.Option(hidden=True)] = 200 * 1024 * 1024,
) -> None:
    """Send every prompt of a run folder to a model; resumable, cached, exactly one record each."""
    from kgbench.ranges import check

    from .api import RunConfig, run_model
    from .engine import RetryPolicy
    from .job import BatchLimits, BatchOptions
    from .plan import Settings

    for name, value, kind in (  # every number checked where it enters (kgbench.ranges)
        ("--replicates", replicates, "replicates"),
        ("--temperature", temperature, "temperature"),
        ("--max-tokens", max_tokens, "max_tokens"),
        ("--concurrency", concurrency, "concurrency"),
        ("--price-in", price_in, "price"),
        ("--price-out", price_out, "price"),
        ("--timeout", timeout, "timeout"),
        ("--max-attempts", max_attempts, "max_attempts"),
        ("--backoff-base", backoff_base, "backoff"),
        ("--backoff-cap", backoff_cap, "backoff"),
        ("--poll-interval", poll_interval, "poll"),
        ("--poll-max", poll_max, "poll"),
    ):
        check(name, value, kind)
    config = RunConfig(
        run_dir=run_dir,
        model=model,
        base_url=base_url,
        settings=Settings(temperature, seed, max_tokens, structured, replicates),
        concurrency=concurrency,
        retry_failed=retry_failed,
        batch=batch,
        limit=limit,
        price_in=price_in,
        price_out=price_out,
        cache_dir=cache_dir,
        use_cache=cache,
        log_name=log_name,
        timeout_s=timeout,
        policy=RetryPolicy(max_attempts=max_attempts, base_s=backoff_base, cap_s=backoff_cap),
        batch_options=BatchOptions(
            limits=BatchLimits(batch_max_requests, batch_max_bytes),
            poll_interval_s=poll_interval,
            poll_cap_s=poll_max,
            wait=wait,
        ),
    )
    from .failures import checked_failures

    err = _err()
    with checked_failures(allow_failures):
        result = run_model(config, err)
        for line in result.lines:
            err.print(line, markup=False)
        typer.echo(str(result.log_path))

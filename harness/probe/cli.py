"""`kgbench probe` and `kgbench probe-review` (mounted at the top level by kgbench/cli/main.py).

Imports are lazy so `kgbench --help` stays fast; the root group of kgbench/cli/main.py turns a
UserError into one message and exit code 2.
The probe's summary goes to stderr and the scores file's path to stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.runner.failures import ALLOW_FAILURES_HELP
from kgbench.cliutil import stderr_console

probe_app = typer.Typer(add_completion=False, no_args_is_help=True)


def _console():
    return stderr_console(soft_wrap=True)


@probe_app.command("probe")
def probe_command(
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="openai:<model> (OPENAI_API_KEY; --base-url for any OpenAI-compatible server) "
            "or ref:oracle | ref:noisy | ref:noisy-<rate> (offline reference responders).",
        ),
    ],
    domain: Annotated[str, typer.Option("--domain", "-d", help="Compiled domain (required).")],
    run_dir: Annotated[
        Path | None,
        typer.Option(
            "--run-dir",
            help="Run folder (default runs/probe-<domain>); a QA run's folder "
            "puts both panels in one report.",
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")
    ] = None,
    embedding_model: Annotated[
        Path | None,
        typer.Option(
            "--embedding-model",
            help="A model2vec model folder: map names the lexical methods leave unmapped by "
            "embedding similarity.",
        ),
    ] = None,
    verify_mapping: Annotated[
        bool,
        typer.Option(
            "--verify-mapping/--no-verify-mapping",
            help="Ask the model to confirm fuzzy and embedding matches.",
        ),
    ] = False,
    limit_roots: Annotated[
        int | None, typer.Option("--limit-roots", help="Only the first N roots.")
    ] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    seed: Annotated[int | None, typer.Option(help="Sampling seed sent with requests.")] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Answer token limit.")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Most requests in flight.")] = 16,
    retry_failed: Annotated[
        bool,
        typer.Option("--retry-failed/--no-retry-failed", help="Re-send requests logged as failed."),
    ] = False,
    batch: Annotated[
        bool,
        typer.Option("--batch/--no-batch", help="Send each step through the Batch API."),
    ] = False,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="With --batch: wait for each step.")
    ] = True,
    structured: Annotated[
        bool,
        typer.Option("--structured/--no-structured", help="Send strict response schemas."),
    ] = True,
    cache: Annotated[
        bool, typer.Option("--cache/--no-cache", help="Reuse and fill the shared cache.")
    ] = True,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir")] = None,
    price_in: Annotated[float | None, typer.Option("--price-in")] = None,
    price_out: Annotated[float | None, typer.Option("--price-out")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before one request times out.")] = 300.0,
    max_attempts: Annotated[int, typer.Option("--max-attempts")] = 6,
    poll_interval: Annotated[float, typer.Option("--poll-interval")] = 10.0,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples over roots.")] = 2000,
    score_seed: Annotated[int, typer.Option("--score-seed", help="Seed of the bootstrap.")] = 0,
    allow_failures: Annotated[
        bool,
        typer.Option("--allow-failures/--no-allow-failures", help=ALLOW_FAILURES_HELP),
    ] = False,
) -> None:
    """Grow a causal graph per root concept with a model, map it to the domain, score it."""
    from harness.runner.engine import RetryPolicy
    from harness.runner.job import BatchOptions
    from harness.runner.plan import Settings
    from harness.runner.stage import StageConfig
    from kgbench.locations import RUNS_DIR
    from kgbench.ranges import check

    from .run import ProbeConfig, run_probe

    for name, value, kind in (
        ("--bootstrap", bootstrap, "bootstrap"),
        ("--temperature", temperature, "temperature"),
        ("--concurrency", concurrency, "concurrency"),
        ("--timeout", timeout, "timeout"),
        ("--max-attempts", max_attempts, "max_attempts"),
        ("--price-in", price_in, "price"),
        ("--price-out", price_out, "price"),
    ):
        check(name, value, kind)
    target = run_dir or RUNS_DIR / f"probe-{Path(domain).name}"
    runner = StageConfig(
        out_dir=target,
        model=model,
        base_url=base_url,
        settings=Settings(temperature, seed, max_tokens, structured, 1),
        concurrency=concurrency,
        retry_failed=retry_failed,
        batch=batch,
        price_in=price_in,
        price_out=price_out,
        cache_dir=cache_dir,
        use_cache=cache,
        timeout_s=timeout,
        policy=RetryPolicy(max_attempts=max_attempts),
        batch_options=BatchOptions(poll_interval_s=poll_interval, wait=wait),
    )
    config = ProbeConfig(
        domain=domain,
        run_dir=target,
        runner=runner,
        embedding_model=embedding_model,
        verify_mapping=verify_mapping,
        limit_roots=limit_roots,
        bootstrap=bootstrap,
        seed=score_seed,
    )
    from harness.runner.failures import checked_failures

    console = _console()
    with checked_failures(allow_failures):
        outcome = run_probe(config, console)
        for line in outcome.lines:
            console.print(line, markup=False)
        if outcome.scores_path is not None:
            typer.echo(str(outcome.scores_path))


@probe_app.command("probe-review")
def probe_review_command(
    run_dir: Annotated[Path, typer.Option("--run-dir", help="The run folder.")],
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="The model as `kgbench probe` names it (openai:<model>, ref:<responder>); "
            "default: every probed model.",
        ),
    ] = None,
    ratings: Annotated[
        Path | None,
        typer.Option(
            "--ratings", help="A filled-in ratings CSV to read and aggregate (else: write sheets)."
        ),
    ] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples over graphs.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
) -> None:
    """Write rating sheets (HTML + CSV) per generated graph, or aggregate reviewers' ratings."""
    from harness.runner.spec import log_name_for
    from kgbench.ranges import check

    from .rating_sheets import aggregate_ratings, write_review

    check("--bootstrap", bootstrap, "bootstrap")
    model = log_name_for(model)
    console = _console()
    if ratings is None:
        for path in write_review(run_dir, model):
            console.print(f"[green]sheet[/] {path}")
        return
    for path, summary in aggregate_ratings(run_dir, ratings, model, bootstrap, seed):
        console.print(
            f"[green]ratings[/] {path}: {summary['ratings']} ratings by {summary['reviewers']} "
            f"reviewer(s) on {summary['graphs']} graph(s)"
        )

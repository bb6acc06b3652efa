"""`kgbench prompts`, `kgbench score` and `kgbench report`: the evaluation half of a run.

Mounted at the top level of `kgbench` (kgbench/cli.py). Imports are lazy so `kgbench --help`
stays fast; a UserError prints one message and exits with code 2.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import escape, user_errors

evaluation_app = typer.Typer(add_completion=False, no_args_is_help=True)

RunDirArg = Annotated[
    Path, typer.Option("--run-dir", help="The run folder (scenarios.jsonl, contexts/, ...).")
]


def _console():
    from kgbench.cliutil import stderr_console

    return stderr_console()


def _check_run_dir(run_dir: Path) -> None:
    from kgbench.errors import UserError

    if not run_dir.is_dir():
        raise UserError(f"run folder {run_dir} does not exist")


@evaluation_app.command("prompts")
@user_errors
def prompts_command(
    run_dir: RunDirArg,
    domain: Annotated[
        str | None,
        typer.Option(
            "--domain", "-d", help="Compiled domain (name or folder); default: the run's domain."
        ),
    ] = None,
) -> None:
    """Render every scenario x condition prompt into RUN_DIR/prompts/prompts.jsonl."""
    from harness.prompts import build_prompts

    _check_run_dir(run_dir)
    start = time.perf_counter()
    out, n = build_prompts(run_dir, domain)
    took = time.perf_counter() - start
    _console().print(f"[green]rendered[/] {n} prompts into {escape(out)} ({took:.2f} s)")


@evaluation_app.command("score")
@user_errors
def score_command(
    run_dir: RunDirArg,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model slug (responses/<slug>.jsonl); default: every log."),
    ] = None,
    pair: Annotated[
        list[str] | None,
        typer.Option(
            "--pair", help="Paired contrast A:B (delta A - B); repeatable. Default C4:C2."
        ),
    ] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for the intervals.")] = 10000,
    seed: Annotated[int, typer.Option(help="Seed of every resampling.")] = 0,
    domain: Annotated[
        str | None, typer.Option("--domain", "-d", help="Compiled domain; default: the run's.")
    ] = None,
) -> None:
    """Score the responses of a run: scores/<slug>/items.jsonl and panel.json."""
    from harness.scoring import parse_pair, score_run

    _check_run_dir(run_dir)
    pairs = [parse_pair(p) for p in pair] if pair else [("C4", "C2")]
    start = time.perf_counter()
    written = score_run(run_dir, model, pairs, bootstrap=bootstrap, seed=seed, domain=domain)
    took = time.perf_counter() - start
    console = _console()
    for path in written:
        console.print(f"[green]scored[/] {escape(path.parent.name)}: {escape(path)}")
    console.print(f"({len(written)} model(s) in {took:.2f} s)")


@evaluation_app.command("report")
@user_errors
def report_command(
    run_dir: RunDirArg,
    model: Annotated[
        str | None, typer.Option("--model", help="Model slug; default: every scored model.")
    ] = None,
) -> None:
    """Write RUN_DIR/report/report.md and a self-contained report.html from the scores."""
    from harness.report import write_report

    _check_run_dir(run_dir)
    md, html = write_report(run_dir, model)
    _console().print(f"[green]report[/] {escape(md)}\n[green]report[/] {escape(html)}")

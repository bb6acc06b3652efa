"""`kgbench prompts`, `kgbench score` and `kgbench report`: the evaluation half of a run.

Mounted at the top level of `kgbench` (kgbench/cli.py, whose root group turns a UserError
into one message and exit code 2). Imports are lazy so `kgbench --help` stays fast.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import escape, stderr_console

evaluation_app = typer.Typer(add_completion=False, no_args_is_help=True)

RunDirArg = Annotated[
    Path, typer.Option("--run-dir", help="The run folder (scenarios.jsonl, contexts/, ...).")
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="The model as `kgbench run` names it (openai:<model>, ref:<responder>); "
        "default: every model.",
    ),
]
LogNameOption = Annotated[
    str | None,
    typer.Option("--log-name", help="A responses log given its own name with `run --log-name`."),
]


@evaluation_app.command("prompts")
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

    start = time.perf_counter()
    out, n = build_prompts(run_dir, domain)
    took = time.perf_counter() - start
    stderr_console().print(f"[green]rendered[/] {n} prompts into {escape(out)} ({took:.2f} s)")


@evaluation_app.command("score")
def score_command(
    run_dir: RunDirArg,
    model: ModelOption = None,
    log_name: LogNameOption = None,
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
    """Score the responses of a run: scores/<log>/items.jsonl and panel.json."""
    from harness.runner.spec import log_name_for
    from harness.scoring import parse_pair, score_run

    log = log_name_for(model, log_name)
    pairs = [parse_pair(p) for p in pair] if pair else [("C4", "C2")]
    start = time.perf_counter()
    written = score_run(run_dir, log, pairs, bootstrap=bootstrap, seed=seed, domain=domain)
    took = time.perf_counter() - start
    console = stderr_console()
    for path in written:
        console.print(f"[green]scored[/] {escape(path.parent.name)}: {escape(path)}")
    console.print(f"({len(written)} model(s) in {took:.2f} s)")


@evaluation_app.command("report")
def report_command(
    run_dir: RunDirArg,
    model: ModelOption = None,
    log_name: LogNameOption = None,
) -> None:
    """Write RUN_DIR/report/report.md and a self-contained report.html from the scores."""
    from harness.report import write_report
    from harness.runfolder import RunFolder
    from harness.runner.spec import log_name_for

    md, html = write_report(RunFolder.open(run_dir).path, log_name_for(model, log_name))
    stderr_console().print(f"[green]report[/] {escape(md)}\n[green]report[/] {escape(html)}")

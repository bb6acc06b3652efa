"""`kgbench prompts`, `kgbench score` and `kgbench report`: the evaluation half of a run.

Mounted at the top level of `kgbench` (kgbench/cli/main.py, whose root group turns a UserError
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
    order_variants: Annotated[
        bool,
        typer.Option(
            "--order-variants/--no-order-variants",
            help="Also render each declared presentation of the options (reordered or "
            "relabelled; order sensitivity, scored into scores/<slug>/order.json).",
        ),
    ] = False,
) -> None:
    """Render every scenario x condition prompt into RUN_DIR/prompts/prompts.jsonl."""
    from harness.evaluation.prompts import build_prompts

    start = time.perf_counter()
    out, n = build_prompts(run_dir, domain, order_variants=order_variants)
    took = time.perf_counter() - start
    console = stderr_console()
    console.print(f"[green]rendered[/] {n} prompts into {escape(out)} ({took:.2f} s)")
    skipped = verify_conditions(run_dir, domain)
    if skipped:
        console.print(
            f"not rendered: {', '.join(skipped)} (verify-and-revise, a multi-step agent); "
            f"`kgbench verify --run-dir {escape(run_dir)} --model ...` answers it"
        )


def verify_conditions(run_dir: Path, domain: str | None) -> list[str]:
    """The run's verify-and-revise conditions: `kgbench prompts` and `kgbench run` leave
    them out (no single prompt), and say so rather than leaving them silently unanswered."""
    from harness.runfolder import RunFolder

    compiled = RunFolder.open(run_dir).compiled(domain)
    return [c.id for c in compiled.conditions if c.verify is not None]


@evaluation_app.command("score")
def score_command(
    run_dir: RunDirArg,
    model: ModelOption = None,
    log_name: LogNameOption = None,
    pair: Annotated[
        list[str] | None,
        typer.Option(
            "--pair",
            help="Paired contrast A:B (delta A - B); repeatable. Default C4:C2, plus C5:C4 "
            "and C5:C1 when the run holds C5 answers (`kgbench verify`).",
        ),
    ] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for the intervals.")] = 10000,
    seed: Annotated[int, typer.Option(help="Seed of every resampling.")] = 0,
    domain: Annotated[
        str | None, typer.Option("--domain", "-d", help="Compiled domain; default: the run's.")
    ] = None,
    causal_reading: Annotated[
        str | None,
        typer.Option(
            "--causal-reading",
            help="Score causal edges under another declared reading: gold_path (the paper's "
            "one gold path) instead of validated_chains (every validated chain, declared).",
        ),
    ] = None,
) -> None:
    """Score the responses of a run: scores/<log>/items.jsonl and panel.json."""
    from harness.evaluation.run_scoring import parse_pair, score_run
    from harness.runner.spec import log_name_for

    log = log_name_for(model, log_name)
    pairs = [parse_pair(p) for p in pair] if pair else None
    start = time.perf_counter()
    written = score_run(
        run_dir,
        log,
        pairs,
        bootstrap=bootstrap,
        seed=seed,
        domain=domain,
        causal_reading=causal_reading,
    )
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
    formats: Annotated[
        list[str] | None,
        typer.Option(
            "--format",
            help="Also write the panel, paired-delta and per-category tables as csv or latex "
            "under report/tables/ (repeat for both).",
        ),
    ] = None,
) -> None:
    """Write RUN_DIR/report/report.md, a self-contained report.html and every plot as a
    standalone SVG (report/figures/) from the scores; --format adds CSV or LaTeX tables."""
    from harness.report import write_report
    from harness.runfolder import RunFolder
    from harness.runner.spec import log_name_for

    md, html = write_report(
        RunFolder.open(run_dir).path, log_name_for(model, log_name), formats or ()
    )
    stderr_console().print(f"[green]report[/] {escape(md)}\n[green]report[/] {escape(html)}")
    if formats:
        stderr_console().print(f"[green]tables[/] {escape(md.parent / 'tables')}")

"""`kgbench study --domain D --config FILE`: the command (mounted at top level by kgbench/cli.py).

The study file is validated in full before anything runs: a bad one is one message naming
the file, line and field, exit code 2, and no run folder is created. Progress and cost per
model go to stderr; the report's path goes to stdout (`report=$(kgbench study ...)`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def study_command(
    domain: Annotated[
        str, typer.Option("--domain", "-d", help="Compiled domain the study runs on.")
    ],
    config: Annotated[
        Path, typer.Option("--config", help="The study file (spec/study/study.yaml, StudyConfig).")
    ],
    run_dir: Annotated[
        Path | None,
        typer.Option("--run-dir", help="The study's run folder (default runs/study-<name>)."),
    ] = None,
) -> None:
    """Run several models on the same release items and compare them (paired, with intervals)."""
    from kgbench.cliutil import escape, stderr_console

    from .config import load_study
    from .run import default_run_dir, run_study

    study = load_study(config, domain)
    console = stderr_console(soft_wrap=True)
    target = run_dir or default_run_dir(study)
    _, report = run_study(study, target, console)
    console.print(f"[green]report[/] {escape(report)}")
    typer.echo(str(report))

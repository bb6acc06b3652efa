"""`kgbench verify` (run condition C5 over a run folder) and `kgbench explain-run` (one
item's chain of triplets, verdicts and revisions).

Plain typer functions, mounted at top level by kgbench/cli/main.py, whose root group is the one
error boundary (a UserError is one message and exit code 2). The summary goes to stdout as
JSON, progress to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.runner.failures import ALLOW_FAILURES_HELP

RunDir = Annotated[Path, typer.Option("--run-dir", help="The run folder (scenarios, prompts).")]


def verify_command(
    run_dir: RunDir,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="openai:<model> (--base-url for any OpenAI-compatible server) or "
            "ref:<responder>: the reference generator and reviser propose and revise "
            "triplets, the named responder answers.",
        ),
    ],
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible URL.")
    ] = None,
    condition: Annotated[str, typer.Option(help="The verify-and-revise condition.")] = "C5",
    batch: Annotated[
        bool, typer.Option("--batch/--no-batch", help="Use the Batch API per stage.")
    ] = False,
    concurrency: Annotated[int, typer.Option(help="Most requests in flight.")] = 16,
    order_variants: Annotated[
        bool,
        typer.Option(
            "--order-variants/--no-order-variants",
            help="Also rerun the whole agent (generate, revise, answer) once per declared "
            "presentation of the options, for order sensitivity (scores/<log>/order.json).",
        ),
    ] = False,
    reviser: Annotated[
        str | None,
        typer.Option(
            "--reviser",
            help="uninformed (KGARevion's: told only that a triplet is false; the declared "
            "default) or informed (a declared variant: shown what the graph holds instead).",
        ),
    ] = None,
    allow_failures: Annotated[
        bool,
        typer.Option("--allow-failures/--no-allow-failures", help=ALLOW_FAILURES_HELP),
    ] = False,
) -> None:
    """Generate, review against Neo4j, revise and answer: condition C5 for every scenario."""
    from harness.neo4j import connection_settings, open_driver
    from harness.runfolder import RunFolder
    from harness.runner.stage import StageConfig
    from kgbench.io import json_text
    from kgbench.ranges import check

    from .agent import VerifyConfig, run_verify

    check("--concurrency", concurrency, "concurrency")  # before any lock file is made
    RunFolder.open(run_dir).scenarios()  # a missing run folder is named before Neo4j is
    settings = connection_settings()
    stage = StageConfig(
        out_dir=run_dir, model=model, base_url=base_url, batch=batch, concurrency=concurrency
    )
    from harness.runner.failures import checked_failures

    with checked_failures(allow_failures):
        with open_driver(settings) as driver:
            summary = run_verify(
                VerifyConfig(run_dir, stage, condition, settings.database, order_variants, reviser),
                driver,
            )
        typer.echo(json_text(summary), nl=False)


def explain_run_command(
    scenario_id: Annotated[str, typer.Argument(help="Scenario id, e.g. SCN_0001.")],
    run_dir: RunDir,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="The model as `kgbench verify` named it (openai:<model>, ref:<responder>); "
            "default: the only one that ran.",
        ),
    ] = None,
    log_name: Annotated[
        str | None, typer.Option("--log-name", help="The run's log name instead of --model.")
    ] = None,
) -> None:
    """Print one item's verify-and-revise chain: proposals, links, verdicts, revisions."""
    from harness.runner.spec import log_name_for
    from kgbench.untrusted import for_terminal

    from .chains import explain_chain

    chain = explain_chain(run_dir, scenario_id, log_name_for(model, log_name))
    typer.echo(for_terminal(chain), nl=False)  # a model's names: escapes and surrogates shown

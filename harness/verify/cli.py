"""`kgbench verify` (run condition C5 over a run folder) and `kgbench explain-run` (one
item's chain of triplets, verdicts and revisions)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

RunDir = Annotated[Path, typer.Option("--run-dir", help="The run folder (scenarios, prompts).")]


def verify_command(
    run_dir: RunDir,
    model: Annotated[
        str, typer.Option(help="openai:<model> or ref:<name> (C5 reference responders).")
    ],
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible URL.")
    ] = None,
    condition: Annotated[str, typer.Option(help="The verify-and-revise condition.")] = "C5",
    batch: Annotated[bool, typer.Option("--batch", help="Use the Batch API per stage.")] = False,
    concurrency: Annotated[int, typer.Option(help="Most requests in flight.")] = 16,
) -> None:
    """Generate, review against Neo4j, revise and answer: condition C5 for every scenario."""
    import json

    from harness.neo4j import connection_settings, open_driver
    from harness.runner.stage import StageConfig

    from .agent import VerifyConfig, run_verify

    settings = connection_settings()
    stage = StageConfig(
        out_dir=run_dir, model=model, base_url=base_url, batch=batch, concurrency=concurrency
    )
    with open_driver(settings) as driver:
        summary = run_verify(VerifyConfig(run_dir, stage, condition, settings.database), driver)
    print(json.dumps(summary, indent=2, sort_keys=True))


def explain_run_command(
    scenario_id: Annotated[str, typer.Argument(help="Scenario id, e.g. SCN_0001.")],
    run_dir: RunDir,
    model: Annotated[
        str | None, typer.Option(help="The model's slug (default: the only one).")
    ] = None,
) -> None:
    """Print one item's verify-and-revise chain: proposals, links, verdicts, revisions."""
    from .agent import explain_chain

    print(explain_chain(run_dir, scenario_id, model), end="")

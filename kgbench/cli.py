"""The `kgbench` command line.

Imports are lazy: `kgbench --help` must stay fast, and LinkML alone costs about a second to
import, so each command imports what it needs when it runs. User errors (`UserError`) print
one clear message on stderr and exit with code 2; anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import escape, labelled, user_errors
from kgbench.cliutil import stderr_console as _stderr

app = typer.Typer(
    name="kgbench",
    help="Compile clinical knowledge-graph benchmark specs and run them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


DomainArg = Annotated[
    str, typer.Option("--domain", "-d", help="Domain name (folder under domains/) or path.")
]


@app.command("compile")
@user_errors
def compile_cmd(
    domain: DomainArg,
    out: Annotated[Path | None, typer.Option(help="Output root (default: generated/).")] = None,
    force: Annotated[bool, typer.Option(help="Recompile even when inputs are unchanged.")] = False,
) -> None:
    """Compile a domain's spec into generated/<domain>/ (deterministic, atomic)."""
    from compiler.api import compile_domain
    from compiler.paths import display_path

    start = time.perf_counter()
    result = compile_domain(domain, out_root=out, force=force)
    took = time.perf_counter() - start
    state = "up to date" if result.up_to_date else f"wrote {result.files} files"
    _print_warnings(result.warnings)
    _stderr().print(
        f"[green]compiled[/] {escape(result.domain)}: {state} in "
        f"{escape(display_path(result.out_dir))} ({took:.2f} s)"
    )


@app.command("validate")
@user_errors
def validate_cmd(domain: DomainArg) -> None:
    """Validate a domain's spec and data without writing anything."""
    from compiler.api import check_domain

    result = check_domain(domain)
    _print_warnings(result.warnings)
    _stderr().print(
        f"[green]valid[/] {escape(result.name)} {escape(result.version)}: {result.entities} entities, "
        f"{result.assertions} assertions, {result.evidence_sources} evidence sources, "
        f"{result.supports} evidence links"
    )


def _print_warnings(warnings: tuple[str, ...]) -> None:
    console = _stderr()
    for line in warnings:
        console.print(labelled("warning:", "bold yellow", line), soft_wrap=True)


@app.command("pilot")
@user_errors
def pilot_cmd(
    domain: DomainArg,
    run_dir: Annotated[
        Path | None, typer.Option(help="Run folder (default runs/pilot-<domain>).")
    ] = None,
    responder: Annotated[
        str, typer.Option(help="Reference responder behind the local server.")
    ] = "context-reader",
) -> None:
    """The whole pipeline end to end with a reference baseline, then the panel."""
    from harness.pilot import default_run_dir, panel_table, run_pilot

    console = _stderr()
    target = run_dir or default_run_dir(domain)
    md, html = run_pilot(domain, target, responder, console)
    print(panel_table(md))
    console.print(f"[green]report[/]: {escape(md)} and {escape(html)}")


def main() -> None:  # pragma: no cover - console entry point
    app()


def _mount_subapps() -> None:
    """Sub-command groups live in their own modules; mounting them costs only typer objects."""
    try:
        from harness.neo4j.cli import neo4j_app
    except ImportError:  # pragma: no cover - during bootstrap
        return
    app.add_typer(neo4j_app, name="neo4j", help="Start, stop and inspect the embedded Neo4j.")
    from harness.graph.cli import extract_command, load_command

    app.command("load")(user_errors(load_command))
    app.command("extract")(user_errors(extract_command))
    from harness.runner.cli import run_command, serve_reference_command

    app.command("run")(user_errors(run_command))
    app.command("serve-reference")(user_errors(serve_reference_command))
    from harness.evaluation_cli import evaluation_app

    app.registered_commands.extend(evaluation_app.registered_commands)
    from harness.scenarios.cli import scenario_app

    app.registered_commands.extend(scenario_app.registered_commands)
    from harness.review.cli import explain_command, review_command

    app.command("explain")(user_errors(explain_command))
    app.command("review")(user_errors(review_command))
    from harness.probe.cli import probe_app

    app.registered_commands.extend(probe_app.registered_commands)
    from harness.study.cli import study_command

    app.command("study")(user_errors(study_command))
    from kgbench.export_cli import export_command

    app.command("export")(user_errors(export_command))


_mount_subapps()

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

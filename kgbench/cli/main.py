"""The `kgbench` command line: every command, mounted on one root group.

The root group is the one error boundary: whatever command runs (`neo4j` and its
sub-commands included), a `UserError` escaping it prints one message per line on stderr and
exits with code 2, never a traceback; anything else is a broken invariant and keeps its
traceback. No command module wraps errors itself.

Conventions, applied here for every command so none can forget them: `-h` and `--help`;
`kgbench --version`; boolean options are `--flag/--no-flag` and show no value in the help
(they take none); `--domain` is required wherever a command works on a domain (no silent
default); a model is named by its spec (`openai:gpt-4o`, `ref:oracle`) everywhere.

Imports are lazy: `kgbench --help` must stay fast, and LinkML alone costs about a second to
import, so each command imports what it needs when it runs. The console script itself is
`kgbench.cli.entry.main`, which answers a no-op compile before this module is imported.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from kgbench.cliutil import error_boundary, escape
from kgbench.cliutil import stderr_console as _stderr
from kgbench.errors import MAX_SHOWN

DomainArg = Annotated[
    str,
    typer.Option(
        "--domain", "-d", help="Domain name (folder under domains/) or path to its folder."
    ),
]


def plain_flags(command: Any, ctx: Any) -> None:
    """Boolean flags take no value, so their help shows none (typer would print `<bool>`).

    Applied to a command (and, for a group, to every command below it) before its help can
    be printed; the help option itself is included.
    """
    params = [*getattr(command, "params", ())]
    help_option = command.get_help_option(ctx) if hasattr(command, "get_help_option") else None
    if help_option is not None:
        params.append(help_option)
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        plain_flags(sub, ctx)


class KgbenchGroup(TyperGroup):
    """The root group: the one error boundary, and the help conventions for every command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        plain_flags(self, ctx)
        return super().parse_args(ctx, args)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            plain_flags(command, ctx)
        return command

    def invoke(self, ctx: Any) -> Any:
        with error_boundary():
            return super().invoke(ctx)


def _report_compile(result: Any, took: float) -> None:
    from compiler.paths import display_path

    state = "up to date" if result.up_to_date else f"wrote {result.files} files"
    _print_warnings(result.warnings)
    _stderr().print(
        f"[green]compiled[/] {escape(result.domain)}: {state} in "
        f"{escape(display_path(result.out_dir))} ({took:.2f} s)"
    )


app = typer.Typer(
    name="kgbench",
    cls=KgbenchGroup,
    help="Compile clinical knowledge-graph benchmark specs and run them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        from kgbench.version import describe

        typer.echo(describe())
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print kgbench's version (and commit, in a clone) and exit.",
        ),
    ] = False,
) -> None:
    """Compile clinical knowledge-graph benchmark specs and run them."""


@app.command("compile")
def compile_cmd(
    domain: DomainArg,
    out: Annotated[Path | None, typer.Option(help="Output root (default: generated/).")] = None,
    force: Annotated[
        bool, typer.Option("--force/--no-force", help="Recompile even when inputs are unchanged.")
    ] = False,
) -> None:
    """Compile a domain's spec into generated/<domain>/ (deterministic, atomic)."""
    from compiler.api import compile_domain, up_to_date

    start = time.perf_counter()
    result = None if force else up_to_date(domain, out)
    if result is None:  # decided before pyarrow, LinkML or a backend is imported
        from compiler.tables import skip_pandas_probe

        skip_pandas_probe()
        result = compile_domain(domain, out_root=out, force=True)
    _report_compile(result, time.perf_counter() - start)


@app.command("validate")
def validate_cmd(
    domain: DomainArg,
    build: Annotated[
        bool,
        typer.Option(
            "--build/--no-build", help="Also build every artifact in memory (as compile)."
        ),
    ] = False,
    max_errors: Annotated[
        int, typer.Option(min=0, help="Problems printed at most (0: every one).")
    ] = MAX_SHOWN,
) -> None:
    """Validate a domain's spec and data without writing anything: every error in one pass."""
    from kgbench.cli.validate import run

    run(domain, build, max_errors)


def _print_warnings(warnings: tuple[str, ...]) -> None:
    from kgbench.cli.validate import print_warnings

    print_warnings(warnings)


@app.command("pilot")
def pilot_cmd(
    domain: DomainArg,
    run_dir: Annotated[
        Path | None,
        typer.Option(
            help="Run folder (default runs/pilot-<domain>). A folder an earlier pilot made is "
            "replaced once the new pilot succeeded; any other folder holding files is refused."
        ),
    ] = None,
    responder: Annotated[
        str, typer.Option(help="Reference responder behind the local server.")
    ] = "context-reader",
    keep_neo4j: Annotated[
        bool,
        typer.Option(
            "--keep-neo4j/--no-keep-neo4j",
            help="Leave the embedded Neo4j running if the pilot started it (default: stop it).",
        ),
    ] = False,
    with_c5: Annotated[
        bool,
        typer.Option(
            "--with-c5/--no-with-c5",
            help="Also run C5 (verify-and-revise) through the same local server.",
        ),
    ] = False,
    order_variants: Annotated[
        bool,
        typer.Option(
            "--order-variants/--no-order-variants",
            help="Also answer every declared presentation of the options (order sensitivity), "
            "C5's too with --with-c5.",
        ),
    ] = False,
    volume_control: Annotated[
        bool,
        typer.Option(
            "--volume-control/--no-volume-control",
            help="Also run the optional volume-matched controls (C2's and C3's blocks padded "
            "with irrelevant graph content to C4's length).",
        ),
    ] = False,
    reload: Annotated[
        bool,
        typer.Option(
            "--reload/--no-reload",
            help="Write the domain's graph even when Neo4j holds this compile already "
            "(stamped and passing every validation query), as `kgbench load` does.",
        ),
    ] = False,
) -> None:
    """The whole pipeline end to end with a reference baseline, then the panel."""
    from kgbench.cli.pilot import default_run_dir, panel_table, run_pilot

    console = _stderr()
    target = run_dir or default_run_dir(domain)
    md, html = run_pilot(
        domain,
        target,
        responder,
        console,
        keep_neo4j=keep_neo4j,
        with_c5=with_c5,
        order_variants=order_variants,
        volume_control=volume_control,
        reload=reload,
    )
    print(panel_table(md))
    console.print(f"[green]report[/]: {escape(md)} and {escape(html)}")


@app.command("export")
def export_cmd(
    domain: DomainArg,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="kgx (KGX nodes/edges, TSV and JSON Lines) or linkml-json."
        ),
    ] = "kgx",
    out: Annotated[
        Path | None,
        typer.Option(help="Output folder (default runs/export/<domain>/<format>/)."),
    ] = None,
) -> None:
    """Export a domain's validated graph (KGX for Biolink tools, or LinkML's JSON form)."""
    from compiler.export import FORMATS, export_domain
    from compiler.paths import display_path
    from kgbench.errors import UserError

    if fmt not in FORMATS:
        raise UserError(f"unknown export format '{fmt}'; expected one of {', '.join(FORMATS)}")
    result = export_domain(domain, fmt, out)
    _print_warnings(result.warnings)
    _stderr().print(
        f"[green]exported[/] {escape(result.domain)} as {escape(fmt)}: "
        f"{len(result.files)} files in {escape(display_path(result.out_dir))}"
    )


@app.command("study")
def study_cmd(
    domain: DomainArg,
    config: Annotated[
        Path, typer.Option("--config", help="The study file (spec/study/study.yaml, StudyConfig).")
    ],
    run_dir: Annotated[
        Path | None,
        typer.Option("--run-dir", help="The study's run folder (default runs/study-<name>)."),
    ] = None,
    allow_failures: Annotated[
        bool,
        typer.Option(
            "--allow-failures/--no-allow-failures",
            help="Exit 0 even when requests ended failed or missing (default: exit 1 with a "
            "summary line, after the report is written).",
        ),
    ] = False,
) -> None:
    """Run several models on the same release items and compare them (paired, with intervals).

    The study file is validated in full before anything runs: a bad one is one message naming
    the file, line and field, exit code 2, and no run folder is created. Progress and cost per
    model go to stderr; the report's path goes to stdout (`report=$(kgbench study ...)`).
    """
    from harness.runner.failures import checked_failures
    from harness.study.run import default_run_dir, run_study
    from kgbench.cli.study import load_study

    study = load_study(config, domain)
    console = _stderr(soft_wrap=True)
    target = run_dir or default_run_dir(study)
    with checked_failures(allow_failures):
        _, report = run_study(study, target, console)
        console.print(f"[green]report[/] {escape(report)}")
        typer.echo(str(report))


def _mount_subcommands() -> None:
    """Sub-command modules define plain typer functions; mounting costs only typer objects.

    Nothing is wrapped here: errors are the root group's business (KgbenchGroup.invoke).
    """
    from harness.evaluation_cli import evaluation_app
    from harness.graph.cli import extract_command, load_command
    from harness.neo4j.cli import neo4j_app
    from harness.probe.cli import probe_app
    from harness.release.cli import release_app
    from harness.review.cli import explain_command, review_command
    from harness.runner.cli import run_command
    from harness.scenarios.cli import scenario_app
    from harness.server.cli import serve_reference_command
    from harness.verify.cli import explain_run_command, verify_command

    app.add_typer(neo4j_app, name="neo4j", help="Start, stop and inspect the embedded Neo4j.")
    app.command("load")(load_command)
    app.command("extract")(extract_command)
    app.command("run")(run_command)
    app.command("serve-reference")(serve_reference_command)
    app.registered_commands.extend(evaluation_app.registered_commands)
    app.registered_commands.extend(scenario_app.registered_commands)
    app.registered_commands.extend(release_app.registered_commands)
    app.command("explain")(explain_command)
    app.command("review")(review_command)
    app.registered_commands.extend(probe_app.registered_commands)
    app.command("verify")(verify_command)
    app.command("explain-run")(explain_run_command)


_mount_subcommands()


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""`kgbench load` and `kgbench extract` (mounted by kgbench/cli/main.py, whose root group turns a
UserError into one message and exit code 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import escape

graph_app = typer.Typer(add_completion=False)


def _console():
    from kgbench.cliutil import stderr_console

    return stderr_console()


@graph_app.command("load")
def load_command(
    domain: Annotated[str, typer.Option("--domain", "-d", help="Compiled domain to load.")],
    batch_size: Annotated[int, typer.Option(help="Rows per write transaction.")] = 2000,
    bulk: Annotated[
        bool,
        typer.Option(
            "--bulk/--no-bulk",
            help="Build a new database from the compiled neo4j-admin import files (several "
            "times faster): the embedded server is stopped, `neo4j-admin database import "
            "full` runs, the server starts again (default heap and page cache), then the "
            "constraints and validation queries. Only for an empty database of the embedded "
            "server; refused for NEO4J_URI's server.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force/--no-force",
            help="With --bulk: replace a database that is not empty and import this domain "
            "alone; the old database is kept as a backup under the server's home.",
        ),
    ] = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes/--no-yes",
            help="With --bulk --force: also erase what is not this domain's own graph (other "
            "domains, nodes kgbench did not load); refused without it, listing what they are.",
        ),
    ] = False,
    skip_current: Annotated[
        bool,
        typer.Option(
            "--skip-current/--no-skip-current",
            help="Write nothing when the graph is stamped as loaded from this very compile "
            "and passes every validation query (what `kgbench pilot` does); a property "
            "edited by hand in Neo4j is then not seen. Without it every load writes all.",
        ),
    ] = False,
) -> None:
    """Load a compiled domain into Neo4j, or sync an already-loaded one (what the spec no
    longer holds is removed), run its validation queries and report what was added, changed
    and removed. With --bulk, import it into an empty database with neo4j-admin instead."""
    from rich.progress import Progress

    from harness.compiled import CompiledDomain
    from kgbench.ranges import check

    if force and not bulk:
        raise typer.BadParameter("--force only applies to --bulk", param_hint="--force")
    if yes and not force:
        raise typer.BadParameter("--yes only applies to --bulk --force", param_hint="--yes")
    check("--batch-size", batch_size, "batch_size")
    compiled = CompiledDomain.open(domain)
    console = _console()
    if bulk:
        from harness.graph.bulk import bulk_load

        with Progress(console=console, transient=True) as bar:
            task = bar.add_task("bulk load", total=None)
            report = bulk_load(
                compiled,
                force=force,
                yes=yes,
                progress=lambda msg: bar.update(task, description=msg),
            )
        phases = ", ".join(f"{name} {secs:.1f} s" for name, secs in report.phases.items())
        _checks_table(
            console,
            f"{escape(domain)}: bulk-imported {report.nodes} nodes and {report.relationships} "
            f"relationships in {report.seconds:.2f} s ({escape(phases)})",
            report.checks,
        )
        if report.replaced:
            console.print(f"replaced a database of {escape(report.replaced_what)} (--force)")
        if report.backup:
            console.print(
                f"the replaced database is kept in {escape(report.backup)} "
                "(README.txt there says how to put it back)"
            )
        console.print(f"Neo4j serves it at [bold]{escape(report.uri)}[/]")
        return

    from harness.graph.load import load
    from harness.neo4j import connection_settings, open_driver

    settings = connection_settings()
    with open_driver(settings) as driver, Progress(console=console, transient=True) as bar:
        task = bar.add_task("loading", total=None)

        def progress(name: str, done: int, total: int | None) -> None:
            bar.update(task, description=f"{name} {done}" + (f"/{total}" if total else ""))

        report = load(
            driver,
            compiled,
            settings.database,
            batch_size=batch_size,
            progress=progress,
            changes=not skip_current,
            skip_current=skip_current,
        )
    _checks_table(
        console,
        f"{escape(domain)}: "
        + (
            "the graph already holds this compile (stamped and checked): nothing written"
            if report.current
            else f"loaded {report.rows} rows in {report.seconds:.2f} s"
        ),
        report.checks,
    )
    changes = report.changes
    if changes is not None:
        # what the sync did: the graph now equals the compiled domain
        console.print(
            "graph already equal to the compiled domain"
            if changes.unchanged
            else f"synced with the compiled domain: {escape(changes.summary())}"
        )
        for kind in ("nodes", "relationships"):
            for what in ("added", "changed", "removed"):
                keys = getattr(changes, f"{kind}_{what}")
                if keys and len(keys) <= 20:
                    console.print(f"  {kind} {what}: {escape(', '.join(keys))}")


def _checks_table(console, title: str, checks: list[tuple[str, int, int]]) -> None:
    from rich.table import Table

    table = Table(title=title, show_edge=False)
    for col in ("check", "in graph", "expected", ""):
        table.add_column(col)
    for name, value, expect in checks:
        table.add_row(
            escape(name),
            str(value),
            str(expect),
            "[green]ok[/]" if value == expect else "[red]FAIL[/]",
        )
    console.print(table)


@graph_app.command("extract")
def extract_command(
    domain: Annotated[str, typer.Option("--domain", "-d", help="Compiled domain to extract from.")],
    scenario: Annotated[
        str | None, typer.Option(help="One scenario id (prints its context).")
    ] = None,
    condition: Annotated[
        str | None,
        typer.Option(help="One condition id, e.g. C3 (an optional one, e.g. C7, only this way)."),
    ] = None,
    scenarios: Annotated[Path | None, typer.Option(help="Scenario file (JSON Lines).")] = None,
    run_dir: Annotated[
        Path | None, typer.Option(help="Write every context under RUN_DIR/contexts/.")
    ] = None,
) -> None:
    """Extract scenario subgraphs: one to stdout, or all scenarios x conditions into a run folder.

    Refuses a graph that is not loaded, half-loaded or loaded from another compile, and a
    context missing an assertion the compiled graph says it must hold; nothing is written
    unless every context is sound.
    """
    from harness.compiled import CompiledDomain
    from harness.graph.extract import check_against_compile, extract, warm_up
    from harness.graph.stamp import require_current
    from harness.neo4j import connection_settings, open_driver
    from harness.runfolder import RunFolder
    from harness.scenario_files import find_scenario, generated_set, read_scenarios

    compiled = CompiledDomain.open(domain)
    if scenarios is None:
        copy = RunFolder(run_dir).scenarios_file if run_dir else None
        scenarios = copy if copy is not None and copy.exists() else generated_set(compiled)
    items = read_scenarios(scenarios)
    # the optional conditions (volume-matched controls) only when named
    conditions = (
        [condition] if condition else [c.id for c in compiled.default_conditions if c.query]
    )
    for c in conditions:
        compiled.condition(c)
    settings = connection_settings()
    with open_driver(settings) as driver:
        require_current(driver, compiled, settings.database)
        if run_dir is None:
            if not scenario:
                raise typer.BadParameter("give --scenario (and --condition) or --run-dir")
            item = find_scenario(items, scenario)
            out = {c: extract(driver, compiled, item, c, settings.database) for c in conditions}
            for ctx in out.values():
                check_against_compile(ctx, compiled, item)
            result = out[conditions[0]] if len(conditions) == 1 else out
            sys.stdout.write(json.dumps(result, indent=2, sort_keys=True) + "\n")
            return
        chosen = [find_scenario(items, scenario)] if scenario else items
        warm_up(driver, compiled, chosen, settings.database)
        contexts = []
        for item in chosen:
            for c in conditions:
                ctx = extract(driver, compiled, item, c, settings.database)
                if ctx is None:
                    continue
                check_against_compile(ctx, compiled, item)
                contexts.append(ctx)
    written = RunFolder(run_dir).write_contexts(contexts)
    _console().print(f"[green]extracted[/] {written} contexts into {escape(run_dir / 'contexts')}")

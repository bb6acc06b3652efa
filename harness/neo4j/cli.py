"""`kgbench neo4j start|stop|status|build`: manage the embedded Neo4j server.

Human-readable messages go to stderr (rich); stdout carries only the Bolt URI, so scripts can
do `uri=$(kgbench neo4j status)`. User-facing problems raise `UserError`/`ServiceError`, which
the root group of kgbench/cli/main.py prints without a traceback (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import escape, stderr_console

neo4j_app = typer.Typer(
    name="neo4j",
    help="Manage the embedded Neo4j 5.26 server (Bolt on 127.0.0.1, data under .cache/neo4j).",
    no_args_is_help=True,
)
err = stderr_console(soft_wrap=True)

StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        help="State directory (default: $KGBENCH_HOME/.cache/neo4j, else <repo>/.cache/neo4j).",
        file_okay=False,
    ),
]


@neo4j_app.command()
def start(
    state_dir: StateDir = None,
    port: Annotated[
        int | None, typer.Option(help="Bolt port on 127.0.0.1 (default: a free one).")
    ] = None,
    home: Annotated[
        Path | None,
        typer.Option(help="Neo4j home to serve, e.g. a bulk-import store (default: state dir)."),
    ] = None,
    heap: Annotated[
        str | None, typer.Option(help="JVM heap, e.g. 2g (default $KGBENCH_NEO4J_HEAP or 1g).")
    ] = None,
    pagecache: Annotated[
        str | None,
        typer.Option(help="Page cache, e.g. 512m (default $KGBENCH_NEO4J_PAGECACHE or 128m)."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for Bolt.")] = 120.0,
) -> None:
    """Start the embedded server (building it on first use); print its Bolt URI."""
    from . import server

    info = server.start(state_dir, port, home=home, heap=heap, pagecache=pagecache, timeout=timeout)
    if info.already_running:
        err.print(f"Neo4j is already running at [bold]{escape(info.uri)}[/] (pid {info.pid}).")
    else:
        err.print(
            f"Neo4j started at [bold]{escape(info.uri)}[/] (pid {info.pid}, "
            f"{info.startup_seconds:.1f} s). Log: {escape(info.log_file)}"
        )
        if info.password_file:
            err.print(f"User [bold]neo4j[/], password in {escape(info.password_file)} (mode 0600).")
    typer.echo(info.uri)


@neo4j_app.command()
def stop(state_dir: StateDir = None) -> None:
    """Stop the embedded server (clean shutdown); data and password are kept."""
    from . import server

    if server.stop(state_dir):
        err.print("Neo4j stopped.")
    else:
        err.print("Neo4j was not running.")


@neo4j_app.command()
def status(state_dir: StateDir = None) -> None:
    """Print the Bolt URI if the embedded server runs; exit 1 if it does not."""
    from . import server

    current = server.status(state_dir)
    if not current.running:
        err.print(f"Neo4j is not running (state dir {escape(current.state_dir)}).")
        raise typer.Exit(1)
    err.print(f"Neo4j is running at [bold]{escape(current.uri)}[/] (pid {current.pid}).")
    typer.echo(current.uri)


@neo4j_app.command()
def build(
    force: Annotated[
        bool, typer.Option("--force/--no-force", help="Rebuild even if up to date.")
    ] = False,
) -> None:
    """Build the Java launcher with Maven (done automatically by `start`)."""
    from .jvm import build as build_launcher

    target = build_launcher(force=force)
    err.print(f"Neo4j launcher classpath ready in {escape(target)}.")

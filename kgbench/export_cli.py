"""`kgbench export`: write a domain's graph in another ecosystem's format.

Self-contained so the command line only mounts it; the work is `compiler.export`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import escape, labelled
from kgbench.cliutil import stderr_console as _stderr


def export_command(
    domain: Annotated[
        str, typer.Option("--domain", "-d", help="Domain name (folder under domains/) or path.")
    ],
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
    console = _stderr()
    for line in result.warnings:
        console.print(labelled("warning:", "bold yellow", line), soft_wrap=True)
    console.print(
        f"[green]exported[/] {escape(result.domain)} as {escape(fmt)}: "
        f"{len(result.files)} files in {escape(display_path(result.out_dir))}"
    )

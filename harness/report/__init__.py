"""`kgbench report`: the scored panels of a run as Markdown and one self-contained HTML file.

The HTML needs nothing but a browser: inline CSS and inline SVG plots, no scripts, no fonts
or styles fetched from a network. Both files are rendered from the same table rows
(`tables.py`), so they always agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kgbench.errors import UserError
from kgbench.io import atomic_write_text

from ..compiled import CompiledDomain
from ..runfolder import RunFolder
from .html import render_html
from .markdown import render_markdown

__all__ = ["render_html", "render_markdown", "write_report"]


def write_report(
    run_dir: Path,
    model: str | None = None,
    formats: Iterable[str] = (),
    compiled: CompiledDomain | None = None,
) -> tuple[Path, Path]:
    """Write report/report.md and report/report.html atomically; returns both paths.

    A run folder may hold QA panels, graph-generation probe scores (probe/<slug>/), or both;
    at least one of them is needed. Every plot is also written as a standalone SVG under
    report/figures/, and `formats` ("csv", "latex") adds the tables under report/tables/
    (harness/report/export.py)."""
    from .export import check_formats, write_figures, write_tables
    from .probe import load_probes

    wanted = check_formats(formats)

    probes = load_probes(run_dir, model)
    folder = RunFolder(run_dir)
    try:
        panels = folder.panels(model)
    except UserError:
        if not probes:
            raise
        panels = []
    for panel in panels:  # C5 and order sensitivity: side tables of the same log
        stem = str(panel["slug"])
        panel["verify_summaries"] = folder.verify_summaries(stem)
        order = folder.order_figures(stem)
        if order is not None:
            panel["order"] = order
    from .provenance import collect

    title = f"kgbench report: {run_dir.resolve().name}"
    provenance = collect(run_dir, panels, compiled)
    out = run_dir / "report"
    md, html = out / "report.md", out / "report.html"
    atomic_write_text(md, render_markdown(title, panels, probes, provenance))
    atomic_write_text(html, render_html(title, panels, probes, provenance))
    write_figures(out, panels, probes)
    if wanted:
        write_tables(out, panels, wanted)
    return md, html

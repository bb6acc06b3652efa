"""`kgbench report`: the scored panels of a run as Markdown and one self-contained HTML file.

The HTML needs nothing but a browser: inline CSS and inline SVG plots, no scripts, no fonts
or styles fetched from a network. Both files are rendered from the same table rows
(`tables.py`), so they always agree.
"""

from __future__ import annotations

from pathlib import Path

from kgbench.errors import UserError
from kgbench.io import atomic_write_text

from ..runfolder import RunFolder
from .html import render_html
from .markdown import render_markdown

__all__ = ["render_html", "render_markdown", "write_report"]


def write_report(run_dir: Path, model: str | None = None) -> tuple[Path, Path]:
    """Write report/report.md and report/report.html atomically; returns both paths.

    A run folder may hold QA panels, graph-generation probe scores (probe/<slug>/), or both;
    at least one of them is needed."""
    from .probe import load_probes

    probes = load_probes(run_dir, model)
    try:
        panels = RunFolder(run_dir).panels(model)
    except UserError:
        if not probes:
            raise
        panels = []
    from ..provenance import collect

    title = f"kgbench report: {run_dir.resolve().name}"
    provenance = collect(run_dir, panels)
    out = run_dir / "report"
    md, html = out / "report.md", out / "report.html"
    atomic_write_text(md, render_markdown(title, panels, probes, provenance))
    atomic_write_text(html, render_html(title, panels, probes, provenance))
    return md, html

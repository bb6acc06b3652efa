"""`kgbench report`: the scored panels of a run as Markdown and one self-contained HTML file.

The HTML needs nothing but a browser: inline CSS and inline SVG plots, no scripts, no fonts
or styles fetched from a network. Both files are rendered from the same table rows
(`tables.py`), so they always agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError
from kgbench.io import atomic_write_text

from .html import render_html
from .markdown import render_markdown

__all__ = ["load_panels", "render_html", "render_markdown", "write_report"]


def load_panels(run_dir: Path, model: str | None = None) -> list[dict[str, Any]]:
    """The panel.json of every scored model (or of one), sorted by slug."""
    scores = run_dir / "scores"
    paths = sorted(scores.glob("*/panel.json")) if scores.is_dir() else []
    if model is not None:
        paths = [p for p in paths if p.parent.name == model]
    if not paths:
        what = f"model '{model}'" if model else "any model"
        raise UserError(
            f"no scores for {what} under {scores}; run `kgbench score --run-dir {run_dir}` first"
        )
    panels = []
    for path in paths:
        try:
            panel = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(f"not valid JSON: {exc.msg}", Location(str(path), exc.lineno)) from None
        if not isinstance(panel, dict) or "overall" not in panel:
            raise UserError("not a panel written by `kgbench score`", Location(str(path)))
        panel.setdefault("slug", path.parent.name)
        panels.append(panel)
    return panels


def write_report(run_dir: Path, model: str | None = None) -> tuple[Path, Path]:
    """Write report/report.md and report/report.html atomically; returns both paths.

    A run folder may hold QA panels, graph-generation probe scores (probe/<slug>/), or both;
    at least one of them is needed."""
    from .probe import load_probes

    probes = load_probes(run_dir, model)
    try:
        panels = load_panels(run_dir, model)
    except UserError:
        if not probes:
            raise
        panels = []
    title = f"kgbench report: {run_dir.resolve().name}"
    out = run_dir / "report"
    md, html = out / "report.md", out / "report.html"
    atomic_write_text(md, render_markdown(title, panels, probes))
    atomic_write_text(html, render_html(title, panels, probes))
    return md, html

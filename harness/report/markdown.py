"""The report as Markdown (GitHub-flavoured tables)."""

from __future__ import annotations

import re
from typing import Any

from .provenance import ModelProvenance, Provenance
from .tables import (
    Table,
    alternative_table,
    category_tables,
    counts_table,
    model_heading,
    order_table,
    overall_table,
    paired_tables,
    provenance_table,
    verify_tables,
)

TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def _escape(text: str) -> str:
    """A table cell on one line, with no character that could end or break the table."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    for ch in "\\|`*_[]":
        text = text.replace(ch, "\\" + ch)
    return TAG_START.sub("&lt;", text)  # "<0.001" stays; "<script" cannot open a tag


def table_md(table: Table) -> str:
    align = [("---:" if num else "---") for num in (table.numeric or [False] * len(table.header))]
    lines = [
        f"**{_escape(table.caption)}**",
        "",
        "| " + " | ".join(_escape(h) for h in table.header) + " |",
        "| " + " | ".join(align) + " |",
        *("| " + " | ".join(_escape(c) for c in row) + " |" for row in table.rows),
    ]
    if table.note:
        lines += ["", f"_{_escape(table.note)}_"]
    return "\n".join(lines) + "\n"


def model_md(panel: dict[str, Any], provenance: ModelProvenance | None = None) -> str:
    kind = provenance.kind if provenance else "Model"
    head = (
        f"## {_escape(model_heading(panel, kind))} "
        f"(domain {_escape(str(panel.get('domain', '?')))}, {panel.get('scenarios', 0)} "
        f"scenarios, {panel.get('replicates', 1)} replicate(s))\n"
    )
    parts = [head]
    if provenance is not None:
        parts.append(table_md(provenance_table("How it answered", provenance.rows)))
    parts += [table_md(counts_table(panel)), table_md(overall_table(panel))]
    alternative = alternative_table(panel)
    if alternative is not None:
        parts.append(table_md(alternative))
    parts += [table_md(t) for t in paired_tables(panel)]
    if panel.get("order"):
        parts += ["### Order sensitivity\n", table_md(order_table(panel["order"]))]
    for summary in panel.get("verify_summaries", []):
        parts.append(f"### Verify-and-revise ({_escape(str(summary.get('condition', 'C5')))})\n")
        parts += [table_md(t) for t in verify_tables(summary)]
    parts.append("### Per category\n")
    parts += [table_md(t) for t in category_tables(panel)]
    return "\n".join(parts)


def probe_md(panels: list[dict[str, Any]], probes: list[dict[str, Any]]) -> str:
    from .probe import probe_tables, side_by_side

    parts = ["## Graph-generation probe (MedG-KRP)\n"]
    both = side_by_side(panels, probes)
    if both is not None:
        parts.append(table_md(both))
    for probe in probes:
        parts.append(
            f"### Probe: model {_escape(str(probe['model']))} (domain "
            f"{_escape(str(probe['domain']))})\n"
        )
        parts += [table_md(t) for t in probe_tables(probe)]
    return "\n".join(parts)


def render_markdown(
    title: str,
    panels: list[dict[str, Any]],
    probes: list[dict[str, Any]] | None = None,
    provenance: Provenance | None = None,
) -> str:
    intro = (
        f"# {_escape(title)}\n\n"
        "Metric panel of the paper's section 3.7 per grounding condition; paired deltas are "
        "within scenario. Plots are in report.html.\n"
    )
    sections = [intro]
    if provenance is not None:
        sections.append(
            "## Provenance\n\n" + table_md(provenance_table("This run", provenance.run))
        )
    models = provenance.models if provenance else {}
    sections += [model_md(p, models.get(str(p.get("slug")))) for p in panels]
    if probes:
        sections.append(probe_md(panels, probes))
    return "\n".join(sections)

"""The report as one self-contained HTML file: inline CSS and SVG, no scripts, no network."""

from __future__ import annotations

from html import escape
from typing import Any

from . import svg
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

CSS = """
body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;max-width:1280px;color:#1f2328;
line-height:1.4;padding:0 16px}
h1{font-size:26px;margin-bottom:4px}h2{font-size:21px;margin-top:36px;border-bottom:2px solid #d0d7de;
padding-bottom:4px}h3{font-size:17px;margin-top:26px}
table{border-collapse:collapse;margin:8px 0 4px;font-size:13px;max-width:100%}
caption{text-align:left;font-weight:bold;padding:4px 0;font-size:14px}
th,td{border:1px solid #d0d7de;padding:4px 6px}
th{background:#f6f8fa;vertical-align:bottom}td.num{text-align:right;font-variant-numeric:tabular-nums}
svg{max-width:100%;height:auto}
tr:nth-child(even) td{background:#fbfbfc}
p.note{font-size:12px;color:#57606a;margin:2px 0 16px;max-width:960px}
.plots{display:flex;flex-wrap:wrap;gap:12px 28px;align-items:flex-start}
figure{margin:8px 0}figcaption{font-size:12px;color:#57606a}
"""


def _x(text: str) -> str:
    return escape(text, quote=True)


def _keep_together(cell: str) -> str:
    """A numeric cell may wrap only between its parts ("0.875 ± 0.125" / "(n=8)", "0.5" /
    "[0.4, 0.6]"), never inside a number or an interval, so narrow windows stay readable."""
    return cell.replace(" \u00b1 ", "\u00a0\u00b1\u00a0").replace(", ", ",\u00a0")


def table_html(table: Table) -> str:
    numeric = table.numeric or [False] * len(table.header)
    head = "".join(f"<th>{_x(h)}</th>" for h in table.header)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='num'>{_x(_keep_together(c))}</td>" if numeric[i] else f"<td>{_x(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in table.rows
    )
    note = f"<p class='note'>{_x(table.note)}</p>" if table.note else ""
    thead = f"<thead><tr>{head}</tr></thead>" if any(table.header) else ""
    return (
        f"<table><caption>{_x(table.caption)}</caption>{thead}<tbody>{body}</tbody></table>{note}"
    )


def model_html(panel: dict[str, Any], provenance: ModelProvenance | None = None) -> str:
    kind = provenance.kind if provenance else "Model"
    anchor = _x(str(panel.get("slug", "model")))
    parts = [
        f"<h2 id='{anchor}'>{_x(model_heading(panel, kind))}</h2>",
        f"<p>Domain {_x(str(panel.get('domain', '?')))}; {panel.get('scenarios', 0)} scenarios; "
        f"{panel.get('replicates', 1)} replicate(s).</p>",
    ]
    if provenance is not None:
        parts.append(table_html(provenance_table("How it answered", provenance.rows)))
    parts += [
        table_html(counts_table(panel)),
        f"<h3 id='{anchor}-overall'>Overall panel</h3>",
        f"<figure>{svg.heatmap(panel)}<figcaption>Mean per condition and metric. Colour shows "
        "how good the value is (lower-is-better metrics inverted); grey: undefined.</figcaption>"
        "</figure>",
        table_html(overall_table(panel)),
    ]
    alternative = alternative_table(panel)
    if alternative is not None:
        parts.append(table_html(alternative))
    for contrast, table in zip(panel.get("paired", []), paired_tables(panel), strict=True):
        parts += [
            f"<h3 id='{anchor}-{_x(contrast['a'])}-{_x(contrast['b'])}'>Paired contrast "
            f"{_x(contrast['a'])} vs {_x(contrast['b'])}</h3>",
            f"<figure>{svg.forest(panel, contrast)}<figcaption>Within-scenario deltas; green: "
            "favourable to the first condition, red: unfavourable (both: Holm-adjusted p < "
            "0.05); grey: not significant or no change.</figcaption></figure>",
            table_html(table),
        ]
    if panel.get("order"):
        parts += [
            f"<h3 id='{anchor}-order'>Order sensitivity</h3>",
            table_html(order_table(panel["order"])),
        ]
    for summary in panel.get("verify_summaries", []):
        cond = _x(str(summary.get("condition", "C5")))
        parts.append(f"<h3 id='{anchor}-verify-{cond}'>Verify-and-revise ({cond})</h3>")
        parts += [table_html(t) for t in verify_tables(summary)]
    parts += [
        f"<h3 id='{anchor}-categories'>Per category</h3>",
        f"<div>{svg.legend(panel['conditions'])}</div>",
        "<p class='note'>Mean per category, condition and metric; whiskers: \u00b1 one standard "
        "error; the number above a bar is n, the scenarios where the metric is defined; "
        "\u00d7 marks an undefined metric (NA).</p>",
        "<div class='plots'>",
        *(f"<figure>{svg.category_bars(panel, m)}</figure>" for m in panel["metrics"]),
        "</div>",
        *(table_html(t) for t in category_tables(panel)),
    ]
    return "\n".join(parts)


def probe_html(panels: list[dict[str, Any]], probes: list[dict[str, Any]]) -> str:
    from .probe import curve_svg, probe_tables, side_by_side

    parts = ["<h2 id='probe'>Graph-generation probe (MedG-KRP)</h2>"]
    both = side_by_side(panels, probes)
    if both is not None:
        parts.append(table_html(both))
    for probe in probes:
        anchor = _x(f"probe-{probe['slug']}")
        parts.append(
            f"<h3 id='{anchor}'>Probe: model {_x(str(probe['model']))} (domain "
            f"{_x(str(probe['domain']))})</h3>"
        )
        parts.append(f"<figure>{curve_svg(probe)}</figure>")
        parts += [table_html(t) for t in probe_tables(probe)]
    return "\n".join(parts)


def render_html(
    title: str,
    panels: list[dict[str, Any]],
    probes: list[dict[str, Any]] | None = None,
    provenance: Provenance | None = None,
) -> str:
    models = provenance.models if provenance else {}
    body = "\n".join(model_html(p, models.get(str(p.get("slug")))) for p in panels)
    if provenance is not None:
        body = (
            "<h2 id='provenance'>Provenance</h2>"
            + table_html(provenance_table("This run", provenance.run))
            + "\n"
            + body
        )
    if probes:
        body += "\n" + probe_html(panels, probes)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{_x(title)}"
        f"</title><style>{CSS}</style></head><body>\n<h1>{_x(title)}</h1>\n"
        "<p>Metric panel of the paper's section 3.7 per grounding condition, per category, and "
        "paired within-scenario contrasts. Reference responders (ref:*) are built-in "
        "baselines, not models.</p>\n"
        f"{body}\n</body></html>\n"
    )

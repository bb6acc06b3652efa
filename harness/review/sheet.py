"""`kgbench review`: the clinical review sheet of a scenario set (one HTML page and a CSV).

Each item shows what a reviewer needs to sign or dispute it (REVIEW_PROTOCOL.md): the vignette,
the decision, the candidates with their verdicts and reasons, the gold, the assertions and
sources behind it, the item's content hash and its current verdict. The HTML is one
self-contained file (no script, no external resource; every value escaped) that prints and
reads at 800 px; the CSV has one row per item with the same hash, ready to be copied into
`domains/<d>/reviews.csv` with a verdict.
"""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path
from typing import Any

from kgbench.io import atomic_write_text
from kgbench.untrusted import csv_cell

from ..scenarios.kg import KnowledgeGraph
from .explain import explain, population_name
from .verdicts import COLUMNS, Verdict, content_sha256

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0 auto;max-width:60rem;
padding:1rem;color:#1b1b1b}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin:0 0 .3rem}
.item{border:1px solid #ccc;border-radius:6px;padding:.8rem 1rem;margin:1rem 0;
break-inside:avoid}
.meta{color:#555;font-size:.85rem;overflow-wrap:anywhere}
.verdict{display:inline-block;padding:0 .4rem;border-radius:4px;font-size:.85rem}
.accept{background:#d7f2dd}.dispute{background:#f8d4d4}.unreviewed{background:#eee}
table{border-collapse:collapse;width:100%;font-size:.9rem;table-layout:fixed}
td,th{border-top:1px solid #ddd;padding:.25rem .4rem;text-align:left;vertical-align:top;
overflow-wrap:anywhere}
th{width:11rem}
.preferred{font-weight:600}
ul{margin:.2rem 0 .2rem 1.2rem;padding:0}
.summary{margin:.5rem 0}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _item(kg: KnowledgeGraph, record: dict[str, Any], verdict: Verdict | None) -> str:
    ex = explain(kg, record)
    gold = record["gold"]
    sha = content_sha256(record)
    state = verdict.verdict if verdict else "unreviewed"
    label = (
        state if not verdict else f"{state} ({verdict.reviewer}, {verdict.role}, {verdict.date})"
    )
    note = f" <em>{_e(verdict.note)}</em>" if verdict and verdict.note else ""
    preferred = gold.get("preferred_intervention")
    answer = (
        "abstain: no candidate is adequately supported"
        if preferred is None
        else f"{kg.name_of(preferred)}; acceptable: "
        + ", ".join(kg.name_of(a) for a in gold["acceptable_interventions"])
    )
    rows = []
    for v in ex.verdicts:
        cls = ' class="preferred"' if v["verdict"] in ("preferred", "acceptable") else ""
        ids = ", ".join(v.get("assertion_ids") or [])
        rows.append(
            f"<tr{cls}><th>{_e(kg.name_of(v['intervention_id']))}</th>"
            f"<td>{_e(v['verdict'])}: {_e(v['reason'].replace('_', ' '))}<br>"
            f'{_e(v["summary"])}<br><span class="meta">{_e(ids)}</span></td></tr>'
        )
    facts = "".join(
        f'<li><b>{_e(f.assertion_id)}</b> {_e(f.text)} <span class="meta">{_e(f.details)}'
        f"{'; ' + _e(f.provenance) if f.provenance else ''}; sources: "
        f"{_e(', '.join(f.sources) or 'none')}</span></li>"
        for f in ex.assertions
    )
    sources = "".join(f"<li>{_e(s)}</li>" for s in ex.sources)
    path = " &rarr; ".join(_e(i) for i in gold.get("causal_path_assertion_ids") or []) or "none"
    return (
        f'<section class="item" id="{_e(record["scenario_id"])}">'
        f"<h2>{_e(record['scenario_id'])}: {_e(record['title'])}</h2>"
        f'<div class="meta">{_e(record["category"].replace("_", " "))} &middot; target '
        f"{_e(kg.name_of(record['target_outcome_id']))} &middot; population "
        f"{_e(population_name(kg, record))} &middot; sha256 {_e(sha)}</div>"
        f'<p class="summary">{_e(record["patient"]["narrative"])}<br>'
        f"<b>Decision:</b> {_e(record['decision_target'])}</p>"
        f"<p><b>Gold:</b> {_e(answer)}<br><b>Review:</b> "
        f'<span class="verdict {_e(state)}">{_e(label)}</span>{note}</p>'
        f"<table>{''.join(rows)}</table>"
        f"<p><b>Gold path</b> (mechanism, not the reason the answer is right): {path}</p>"
        f"<details open><summary>Assertions</summary><ul>{facts}</ul></details>"
        f"<details><summary>Sources</summary><ul>{sources}</ul></details>"
        "</section>"
    )


def render_html(
    kg: KnowledgeGraph, records: list[dict[str, Any]], verdicts: dict[str, Verdict], title: str
) -> str:
    counts = {"accept": 0, "dispute": 0, "unreviewed": 0}
    for r in records:
        v = verdicts.get(r["scenario_id"])
        counts[v.verdict if v else "unreviewed"] += 1
    items = "".join(_item(kg, r, verdicts.get(r["scenario_id"])) for r in records)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(title)}</h1>"
        f"<p>{len(records)} items: {counts['accept']} accepted, {counts['dispute']} disputed, "
        f"{counts['unreviewed']} not reviewed. Read the vignette, decide your own answer, then "
        "read the gold and its justification (REVIEW_PROTOCOL.md). Record verdicts in "
        "reviews.csv with the item's sha256.</p>"
        f"{items}</body></html>\n"
    )


def render_csv(records: list[dict[str, Any]], verdicts: dict[str, Verdict]) -> str:
    """One row per item with its current hash (verdict filled in when one exists)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(
        [*COLUMNS, "category", "title", "preferred_intervention", "expects_uncertainty"]
    )
    for r in records:
        v = verdicts.get(r["scenario_id"])
        cells = [
            r["scenario_id"],
            content_sha256(r),
            v.verdict if v else "",
            v.reviewer if v else "",
            v.role if v else "author",
            v.date if v else "",
            v.note if v else "",
            r["category"],
            r["title"],
            r["gold"].get("preferred_intervention") or "",
            str(r["gold"].get("expects_uncertainty")).lower(),
        ]
        writer.writerow([csv_cell(c) for c in cells])  # a spreadsheet shows formulas as text
    return buf.getvalue()


def write_sheet(
    kg: KnowledgeGraph,
    records: list[dict[str, Any]],
    verdicts: dict[str, Verdict],
    out_dir: Path,
    title: str,
) -> tuple[Path, Path]:
    html_path, csv_path = out_dir / "review.html", out_dir / "review.csv"
    atomic_write_text(html_path, render_html(kg, records, verdicts, title))
    atomic_write_text(csv_path, render_csv(records, verdicts))
    return html_path, csv_path

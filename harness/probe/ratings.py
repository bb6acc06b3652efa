"""Human review of generated graphs: rating sheets out, reviewers' ratings in, aggregated.

`write_sheets` writes, per generated graph, a self-contained HTML sheet (the graph as an
edge list with each edge's mapped entities and the prompt that produced it; no scripts, no
network) and a CSV of the same edges, plus one `ratings.csv` template with a row per graph.
Reviewers fill in, per graph, accuracy and comprehensiveness on the seed's 1-4 scale (one row
per reviewer and graph). `read_ratings` checks every row (a bad one is a UserError naming the
file, line, field and what was expected: exit 2), and `aggregate` gives per dimension the
mean over graphs (each graph's ratings averaged first) with a bootstrap interval over graphs
and inter-rater agreement as Krippendorff's alpha (ordinal, from the `krippendorff` package).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from html import escape
from pathlib import Path
from typing import Any

from harness.evaluation.stats import bootstrap_ci, mean
from kgbench.errors import Location, UserError
from kgbench.io import atomic_write_text
from kgbench.untrusted import csv_reader, load_json_object

DIMENSIONS = ("accuracy", "comprehensiveness")
RATING_COLUMNS = ("model", "root_id", "graph_sha256", "reviewer", *DIMENSIONS, "comment")
SCALE = (1, 4)

CSS = (
    "body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;color:#1f2328;"
    "padding:0 16px;line-height:1.4}table{border-collapse:collapse;font-size:13px;margin:8px 0}"
    "th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left}th{background:#f6f8fa}"
    "p.note{font-size:12px;color:#57606a}.scale td{white-space:normal}"
)
SCALE_TEXT = {
    "accuracy": "1 many concepts, relationships or implied pathways are wrong; 2 several are "
    "wrong; 3 minor errors; 4 everything is medically correct",
    "comprehensiveness": "1 most necessary concepts are missing; 2 several are missing; 3 minor "
    "gaps; 4 covers every concept needed to understand the root concept",
}


def graph_digest(graph: dict[str, Any]) -> str:
    """sha256 of a graph's nodes and edges: ratings name the exact graph they rate."""
    core = {"nodes": [n["key"] for n in graph["nodes"]], "edges": graph["edges"]}
    return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()


def load_graphs(out_dir: Path) -> list[dict[str, Any]]:
    folder = out_dir / "graphs"
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not paths:
        raise UserError(f"no generated graphs under {folder}; run `kgbench probe` first")
    return [load_json_object(p, "probe graph", max_depth=None) for p in paths]


def _mapped(out_dir: Path) -> dict[str, dict[str, Any]]:
    path = out_dir / "mapping.json"
    if not path.exists():
        return {}
    decisions = load_json_object(path, "probe mapping", max_depth=None).get("decisions")
    if not isinstance(decisions, list):
        raise UserError(
            "expected a 'decisions' list; run `kgbench probe` again", Location(str(path))
        )
    return {d["key"]: d for d in decisions if isinstance(d, dict) and "key" in d}


def _edge_rows(graph: dict[str, Any], mapped: dict[str, dict[str, Any]]) -> list[list[str]]:
    names = {n["key"]: n["name"] for n in graph["nodes"]}
    rows = []
    for e in graph["edges"]:
        src, dst = mapped.get(e["source"], {}), mapped.get(e["target"], {})
        rows.append(
            [
                names.get(e["source"], e["source"]),
                names.get(e["target"], e["target"]),
                src.get("entity_id") or "unmapped",
                dst.get("entity_id") or "unmapped",
                "; ".join(e["produced_by"]),
            ]
        )
    return rows


EDGE_HEADER = ["cause", "effect", "cause_entity", "effect_entity", "produced_by"]


def _sheet_html(model: str, graph: dict[str, Any], rows: list[list[str]], digest: str) -> str:
    x = lambda t: escape(str(t), quote=True)  # noqa: E731
    head = "".join(f"<th>{x(h)}</th>" for h in EDGE_HEADER)
    body = "".join("<tr>" + "".join(f"<td>{x(c)}</td>" for c in row) + "</tr>" for row in rows)
    nodes = ", ".join(x(n["name"]) for n in graph["nodes"])
    scale = "".join(f"<tr><th>{x(d)}</th><td>{x(SCALE_TEXT[d])}</td></tr>" for d in DIMENSIONS)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>Rating sheet: "
        f"{x(graph['root_name'])}</title><style>{CSS}</style></head><body>\n"
        f"<h1>Causal graph for {x(graph['root_name'])} ({x(graph['root_id'])})</h1>\n"
        f"<p>Model {x(model)}; {len(graph['nodes'])} concepts, {len(graph['edges'])} directed "
        f"edges (cause &rarr; effect). Graph sha256 <code>{x(digest)}</code>.</p>\n"
        f"<h2>Concepts</h2><p>{nodes}</p>\n<h2>Edges</h2><table><thead><tr>{head}</tr>"
        f"</thead><tbody>{body}</tbody></table>\n"
        "<h2>How to rate (1-4)</h2><table class='scale'>" + scale + "</table>\n"
        "<p class='note'>Enter one row per reviewer in ratings.csv: model, root_id and "
        "graph_sha256 as pre-filled, your reviewer id, accuracy and comprehensiveness as "
        "whole numbers 1-4, and an optional comment.</p>\n</body></html>\n"
    )


def _csv(header: list[str] | tuple[str, ...], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def write_sheets(out_dir: Path, model: str, slug: str) -> list[Path]:
    """review/<root>.html and review/<root>.csv per graph, and review/ratings.csv."""
    graphs = load_graphs(out_dir)
    mapped = _mapped(out_dir)
    review = out_dir / "review"
    written = []
    template = []
    for graph in graphs:
        digest = graph_digest(graph)
        rows = _edge_rows(graph, mapped)
        html_path = review / f"{graph['root_id']}.html"
        atomic_write_text(html_path, _sheet_html(model, graph, rows, digest))
        atomic_write_text(review / f"{graph['root_id']}.csv", _csv(EDGE_HEADER, rows))
        written.append(html_path)
        template.append([slug, graph["root_id"], digest, "", "", "", ""])
    atomic_write_text(review / "ratings.csv", _csv(RATING_COLUMNS, template))
    written.append(review / "ratings.csv")
    return written


def read_ratings(path: Path, graphs: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    """Rows of a filled-in ratings CSV; `graphs` maps (model slug, root id) to the graph's
    digest. Rows with no reviewer and no ratings (the untouched template) are skipped."""
    if not path.is_file():
        raise UserError(f"ratings file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"not valid UTF-8 ({exc.reason})", Location(str(path))) from None
    reader = csv_reader(text, str(path))
    header = next(reader, None)
    if header is None:
        raise UserError("empty file; expected a header row", Location(str(path), 1))
    missing = [c for c in RATING_COLUMNS[:-1] if c not in header]
    if missing:
        raise UserError(
            f"missing column '{missing[0]}'; expected columns {', '.join(RATING_COLUMNS)}",
            Location(str(path), 1),
        )
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, values in enumerate(reader, start=2):
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            raise UserError(
                f"expected {len(header)} fields, found {len(values)}", Location(str(path), line)
            )
        row = {h: v.strip() for h, v in zip(header, values, strict=True)}
        if not row["reviewer"] and not any(row[d] for d in DIMENSIONS):
            continue  # an untouched template row
        where = lambda field: Location(str(path), line, field)  # noqa: E731,B023
        key = (row["model"], row["root_id"])
        if key not in graphs:
            known = ", ".join(sorted({m for m, _ in graphs}))
            raise UserError(
                f"no generated graph for model '{row['model']}' and root '{row['root_id']}'; "
                f"expected a model slug among {known} and one of its roots",
                where("root_id"),
            )
        if row["graph_sha256"] != graphs[key]:
            raise UserError(
                "the graph changed since this sheet was written; expected graph_sha256 "
                f"{graphs[key]} (write new sheets with `kgbench probe-review`)",
                where("graph_sha256"),
            )
        if not row["reviewer"]:
            raise UserError("expected a reviewer id", where("reviewer"))
        for dim in DIMENSIONS:
            value = row[dim]
            # ASCII digits, a few (str.isdigit takes '²' and 5,000-digit numbers int() refuses)
            if not re.fullmatch(r"[0-9]{1,3}", value) or not SCALE[0] <= int(value) <= SCALE[1]:
                raise UserError(
                    f"expected a whole number from {SCALE[0]} to {SCALE[1]}, got {value!r}",
                    where(dim),
                )
            row[dim] = int(value)
        ident = (row["model"], row["root_id"], row["reviewer"])
        if ident in seen:
            raise UserError(
                f"reviewer '{row['reviewer']}' rated this graph already (line {seen[ident]}); "
                "expected one row per reviewer and graph",
                where("reviewer"),
            )
        seen[ident] = line
        row["line"] = line
        rows.append(row)
    return rows


def krippendorff_alpha(rows: list[dict[str, Any]], dim: str) -> float | None:
    """Ordinal alpha over reviewers x graphs; None when it is undefined (fewer than two
    reviewers on any graph, or a single value used throughout)."""
    import krippendorff
    import numpy as np

    reviewers = sorted({r["reviewer"] for r in rows})
    units = sorted({r["root_id"] for r in rows})
    if len(reviewers) < 2:
        return None
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["root_id"]] = counts.get(r["root_id"], 0) + 1
    if max(counts.values(), default=0) < 2 or len({r[dim] for r in rows}) < 2:
        return None
    data = np.full((len(reviewers), len(units)), np.nan)
    for r in rows:
        data[reviewers.index(r["reviewer"]), units.index(r["root_id"])] = r[dim]
    try:
        value = float(
            krippendorff.alpha(
                reliability_data=data,
                level_of_measurement="ordinal",
                value_domain=list(range(SCALE[0], SCALE[1] + 1)),
            )
        )
    except (ValueError, ZeroDivisionError):
        return None
    return value if math.isfinite(value) else None


def aggregate(rows: list[dict[str, Any]], bootstrap: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Per dimension: mean over graphs with a bootstrap CI over graphs, and alpha."""
    out: dict[str, Any] = {
        "ratings": len(rows),
        "reviewers": len({r["reviewer"] for r in rows}),
        "graphs": len({r["root_id"] for r in rows}),
    }
    for dim in DIMENSIONS:
        per_graph: dict[str, list[int]] = {}
        for r in rows:
            per_graph.setdefault(r["root_id"], []).append(r[dim])
        values = [mean(v) for _, v in sorted(per_graph.items())]
        values = [v for v in values if v is not None]
        ci = bootstrap_ci(values, bootstrap, seed, f"ratings:{dim}")
        out[dim] = {
            "mean": mean(values),
            "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None,
            "n": len(values),
            "krippendorff_alpha": krippendorff_alpha(rows, dim),
        }
    return out

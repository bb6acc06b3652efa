"""The report's probe section: graph-generation probe scores beside the QA panel.

Reads `probe/<slug>/scores.json` (and `ratings.json` when reviewers' ratings were aggregated)
of a run folder. Where a model has both a QA panel and probe scores in the same run folder,
one table puts them side by side: the panel's first declared metric per condition next to
the probe's headline numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError
from kgbench.io import read_json_object
from kgbench.untrusted import load_json_object

from ..runfolder import RunFolder
from .tables import NA, Table, fmt


def load_probes(run_dir: Path, model: str | None = None) -> list[dict[str, Any]]:
    """scores.json of every probed model (or of one), with `slug` and `ratings` added."""
    paths = [p / "scores.json" for p in RunFolder(run_dir).probed(model).values()]
    out = []
    for path in (p for p in paths if p.is_file()):
        scores = read_json_object(path, "probe scores written by `kgbench probe`")
        if "overall" not in scores:
            raise UserError("not probe scores written by `kgbench probe`", Location(str(path)))
        scores["slug"] = path.parent.name
        ratings = path.parent / "ratings.json"
        scores["ratings"] = load_json_object(ratings, "probe ratings") if ratings.exists() else None
        out.append(scores)
    return out


def _ci(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("mean") is None:
        return NA
    text = fmt(entry["mean"])
    if entry.get("ci_low") is not None:
        text += f" [{fmt(entry['ci_low'])}, {fmt(entry['ci_high'])}]"
    return text


def side_by_side(panels: list[dict[str, Any]], probes: list[dict[str, Any]]) -> Table | None:
    """One column per model with both a QA panel and probe scores (matched by slug), one row
    per measure: models are few and measures many, so the table stays narrow enough to read
    in an 800 px window."""
    by_slug = {p["slug"]: p for p in probes}
    both = [p for p in panels if p.get("slug") in by_slug]
    if not both:
        return None
    metric = both[0]["metrics"][0]
    conditions = both[0]["conditions"]
    measures: list[tuple[str, Any]] = [
        (
            f"QA {metric['title']} {c}",
            lambda panel, _probe, c=c: fmt(
                (panel["overall"].get(c, {}).get(metric["name"]) or {}).get("mean")
            ),
        )
        for c in conditions
    ]
    for label, key in (
        ("Probe precision@k", "precision"),
        ("Probe recall@k", "recall"),
        ("Exact-edge precision", "exact_precision"),
        ("Mapped share", "mapped_share"),
    ):
        measures.append((label, lambda _panel, probe, key=key: _ci(probe["overall"][key])))
    for label, key in (
        ("Accuracy (1-4)", "accuracy"),
        ("Comprehensiveness (1-4)", "comprehensiveness"),
    ):
        measures.append(
            (label, lambda _panel, probe, key=key: _ci((probe.get("ratings") or {}).get(key)))
        )
    header = ["Measure", *(str(p.get("model", p["slug"])) for p in both)]
    rows = [
        [label, *(value(panel, by_slug[panel["slug"]]) for panel in both)]
        for label, value in measures
    ]
    return Table(
        "QA panel and graph-generation probe, side by side",
        header,
        rows,
        [False, *[True] * len(both)],
        "QA: mean of the panel's first metric per condition over scenarios. Probe: mean over "
        "roots with a 95% bootstrap interval; k is each probe's declared path bound.",
    )


def probe_tables(probe: dict[str, Any]) -> list[Table]:
    """The probe's tables, in the report's order: overall, the curve over k, per root, the
    node mapping, and the human ratings when there are any."""
    tables = [_overall(probe), _curve(probe), _roots(probe), _mapping(probe)]
    if probe.get("ratings"):
        tables.append(_ratings(probe["ratings"]))
    return tables


def _overall(probe: dict[str, Any]) -> Table:
    s, o = probe["settings"], probe["overall"]
    k = s["path_bound"]
    pooled = lambda name: fmt(o[name].get("pooled")) if "pooled" in o[name] else NA  # noqa: E731
    return Table(
        f"Probe overall ({o['roots']} of {o.get('roots_run', o['roots'])} roots scored, "
        f"{o['nodes']} nodes, {o['edges']} edges)",
        ["Metric", "Mean over roots [95% CI]", "Pooled"],
        [
            [f"Precision@{k} (path rule)", _ci(o["precision"]), pooled("precision")],
            [f"Recall@{k} (path rule, seed's denominator)", _ci(o["recall"]), pooled("recall")],
            ["Exact-edge precision", _ci(o["exact_precision"]), pooled("exact_precision")],
            ["Exact-edge recall", _ci(o["exact_recall"]), NA],
            ["Mapped share of nodes", _ci(o["mapped_share"]), pooled("mapped_share")],
        ],
        [False, True, True],
        f"{s['path_mode'].capitalize()} paths of at most k = {k} edges in the reference graph "
        f"({s['reference_edges']} edges of {', '.join(s['reference_predicates'])}). Recall "
        "divides path-rule hits by the reference edges touching a mapped generated node (the "
        "seed's definition), so it can exceed 1. Failed or unparseable answers: "
        f"{o['failures']}; unmapped nodes: {o['unmapped_nodes']}; collapsed edges (both ends "
        f"on one entity): {o['collapsed_edges']}." + out_of_scope_note(probe),
    )


def _curve(probe: dict[str, Any]) -> Table:
    return Table(
        "Precision and recall over the path bound k",
        ["k", "Precision", "Recall", "Precision (pooled)", "Recall (pooled)"],
        [
            [
                str(c["k"]),
                fmt(c["precision"]),
                fmt(c["recall"]),
                fmt(c["precision_pooled"]),
                fmt(c["recall_pooled"]),
            ]
            for c in probe["curve"]
        ],
        [True] * 5,
        "k = 1 is the exact edge (in the declared direction mode); the seed uses k = 7 and "
        "warns that it overestimates.",
    )


def _roots(probe: dict[str, Any]) -> Table:
    k, o = probe["settings"]["path_bound"], probe["overall"]
    return Table(
        "Per root",
        ["Root", "Nodes", "Edges", f"P@{k}", f"R@{k}", "Exact P", "Mapped", "Cycles", "Failures"],
        [
            [
                f"{r['root_name']} ({r['root_id']})"
                + (" (out of scope)" if "out_of_scope" in r else ""),
                str(r["stats"]["nodes"]),
                str(r["edges"]),
                fmt(r["precision"]),
                fmt(r["recall"]),
                fmt(r["exact_precision"]),
                fmt(r["mapped_share"]),
                str(r["stats"]["cycles"]) + ("+" if r["stats"]["cycles_capped"] else ""),
                str(r["failures"]),
            ]
            for r in probe["roots"]
        ],
        [False, *[True] * 8],
        "A root marked 'out of scope' is not in the overall figures or the curve."
        if o.get("out_of_scope_roots")
        else "",
    )


def _mapping(probe: dict[str, Any]) -> Table:
    m = probe["mapping"]
    return Table(
        f"Node mapping ({m['mapped']} of {m['names']} distinct names mapped)",
        ["Method", "Names"],
        [[name, str(n)] for name, n in m["by_method"].items()],
        [False, True],
        "Exact name, synonym or xref first, then fuzzy lexical, then embedding when a model was "
        "given; ambiguous and unmapped names map to nothing (never guessed).",
    )


def _ratings(ratings: dict[str, Any]) -> Table:
    return Table(
        f"Human ratings ({ratings['ratings']} ratings by {ratings['reviewers']} "
        f"reviewer(s) on {ratings['graphs']} graph(s))",
        ["Dimension", "Mean over graphs [95% CI]", "Krippendorff's alpha (ordinal)"],
        [
            [d, _ci(ratings[d]), fmt(ratings[d].get("krippendorff_alpha"))]
            for d in ("accuracy", "comprehensiveness")
        ],
        [False, True, True],
        "Scale 1-4; each graph's ratings are averaged first; alpha is NA with fewer "
        "than two reviewers on a graph.",
    )


def curve_svg(probe: dict[str, Any]) -> str:
    """Precision and recall (mean over roots) against k, as a small inline SVG."""
    from .svg import _svg, _text

    curve = probe["curve"]
    left, top, w, h = 50, 24, 300, 160
    ks = [c["k"] for c in curve]
    top_v = max([1.0, *(c["recall"] for c in curve)])

    def xy(k: int, v: float) -> tuple[float, float]:
        x = left + (k - ks[0]) / max(1, ks[-1] - ks[0]) * w
        return x, top + h - min(v, top_v) / top_v * h

    body = [_text(left, 14, "Precision and recall by k (mean over roots)", 12, font_weight="bold")]
    for tick in (0.0, 0.5, 1.0):
        _, y = xy(ks[0], tick)
        body.append(f"<line x1='{left}' x2='{left + w}' y1='{y:.1f}' y2='{y:.1f}' stroke='#ddd'/>")
        body.append(_text(left - 6, y + 4, f"{tick:.1f}", 10, "end"))
    for key, colour in (("precision", "#1f77b4"), ("recall", "#ff7f0e")):
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(c["k"], c[key]) for c in curve))
        body.append(f"<polyline points='{points}' fill='none' stroke='{colour}' stroke-width='2'/>")
    for k in ks:
        x, _ = xy(k, 0)
        body.append(_text(x, top + h + 14, str(k), 10, "middle"))
    body.append(_text(left + w + 8, top + 10, "precision", 11, fill="#1f77b4"))
    body.append(_text(left + w + 8, top + 26, "recall", 11, fill="#ff7f0e"))
    return _svg(left + w + 80, top + h + 24, body, "Probe precision and recall by k")


def out_of_scope_note(probe: dict[str, Any]) -> str:
    """The roots left out of the overall figures, and why (harness.probe.scoring)."""
    left = [r for r in probe["roots"] if "out_of_scope" in r]
    if not left:
        return ""
    names = ", ".join(f"{r['root_name']} ({r['root_id']})" for r in left)
    return (
        f" Out of scope, {len(left)} of {len(probe['roots'])} roots: {names}. The reference "
        "holds no edge at these roots (no cause and no effect of them under its declared "
        "predicates and directions; a drug treating a disease is not its cause), so it cannot "
        "judge an answer about them: they are run and listed, not counted."
    )

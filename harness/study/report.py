"""The study report: one self-contained HTML file (inline CSS and SVG, no script, no network).

Rendered from statistics.json alone, so the numbers on the page are the numbers in the file.
Sections: design, responses, per condition (model x metric table, ranking with rank
intervals, paired model deltas with forest plots), model x condition interaction (plot and
table), reliability across replicates, cost and tokens, provenance. Tables and plot helpers
are the single-model report's (`harness.report`), so both reports read alike.
"""

from __future__ import annotations

from html import escape
from typing import Any

from harness.report import svg
from harness.report.html import CSS
from harness.report.html import table_html as _table_html
from harness.report.provenance import provenance_rows
from harness.report.tables import NA, Table, fmt, fmt_p, metric_label, provenance_table

MODEL_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"]
TESTS = {"mcnemar_exact": "McNemar (exact)", "sign_flip_permutation": "sign-flip"}


def table_html(table: Table) -> str:
    """A report table that scrolls sideways instead of overflowing the page (a model x metric
    table of ten metrics is wider than a screen)."""
    return f"<div class='wide'>{_table_html(table)}</div>"


def _x(text: object) -> str:
    return escape(str(text), quote=True)


def _ci(row: dict[str, Any], digits: int = 3, signed: bool = False) -> str:
    if row.get("ci_low") is None:
        return NA
    return f"[{fmt(row['ci_low'], digits, signed)}, {fmt(row['ci_high'], digits, signed)}]"


def _anchor(*parts: str) -> str:
    return "-".join("".join(ch if ch.isalnum() else "_" for ch in p) for p in parts)


def design_html(stats: dict[str, Any]) -> str:
    prov = stats["provenance"]
    rel = prov["release"]
    study = stats.get("study", {})
    models = ", ".join(stats["models"])
    desc = f"<p>{_x(study.get('description'))}</p>" if study.get("description") else ""
    s = stats["settings"]
    return (
        f"{desc}<p>Domain {_x(prov['domain']['name'])} {_x(prov['domain']['version'])}; gold "
        f"release {_x(rel.get('version'))} ({stats['scenarios']} scenarios); conditions "
        f"{_x(', '.join(stats['conditions']))}; {stats['replicates']} replicate(s) per "
        f"(scenario, condition); models {_x(models)}.</p>"
        "<p class='note'>Unit of analysis: the scenario. Replicates are averaged within "
        "(scenario, condition) first. Intervals: 95% percentile bootstrap over scenarios "
        f"({s['bootstrap']} resamples, seed {s['seed']}, one joint resampling for every model). "
        "Model-versus-model tests: exact McNemar where both models' values are 0/1, a paired "
        f"sign-flip permutation test otherwise ({s['permutations']} permutations, exact up to "
        f"{s['exact_sign_flip_max_n']} pairs); Holm correction across "
        + (
            "every model-versus-model test of the study."
            if s["holm_family"] == "study"
            else "the model pairs of each condition and metric."
        )
        + " Unparseable answers count under the primary policy "
        f"({_x(study.get('policy', 'intent_to_treat')).replace('_', '-')}). Reference "
        "responders are baselines with known behaviour, not models.</p>"
    )


def counts_table(stats: dict[str, Any]) -> Table:
    keys = ("expected", "scored", "missing", "failed", "unparseable", "parse_failures")
    rows = []
    for model in stats["models"]:
        per = stats["counts"][model]
        rows.append(
            [
                model,
                *(str(sum(per.get(c, {}).get(k, 0) for c in stats["conditions"])) for k in keys),
            ]
        )
    return Table(
        "Responses per model (all conditions and replicates)",
        ["Model", "Expected", "Scored", "Missing", "Failed", "Unparseable", "Parse failures"],
        rows,
        [False, *[True] * len(keys)],
        "Missing and failed requests are never scored and never count as zeros.",
    )


def model_metric_table(stats: dict[str, Any], cond: str) -> Table:
    metrics = stats["metrics"]
    rows = []
    for model in stats["models"]:
        row = [model]
        for m in metrics:
            cell = stats["panels"][cond][m["name"]][model]
            if cell["mean"] is None:
                row.append(f"{NA} (n=0)")
            else:
                row.append(f"{fmt(cell['mean'])} {_ci(cell)} (n={cell['n']})")
        rows.append(row)
    return Table(
        f"{cond}: model x metric (mean, 95% bootstrap CI, n scenarios)",
        ["Model", *(metric_label(m) for m in metrics)],
        rows,
        [False, *[True] * len(metrics)],
    )


def ranking_table(stats: dict[str, Any], cond: str) -> Table:
    rows = []
    for m in stats["metrics"]:
        for r in stats["ranking"][cond][m["name"]]:
            rank_iv = (
                f"{r['rank_low']:g}\u2013{r['rank_high']:g}" if r["rank_low"] is not None else NA
            )
            rows.append(
                [
                    metric_label(m),
                    r["model"],
                    f"{fmt(r['mean'])} {_ci(r)}",
                    f"{r['rank']:g}",
                    rank_iv,
                    fmt(r["p_best"], 2) if r["p_best"] is not None else NA,
                    ", ".join(r["indistinguishable_from"]) or "\u2014",
                ]
            )
    return Table(
        f"{cond}: ranking with its uncertainty",
        [
            "Metric",
            "Model",
            "Mean [95% CI]",
            "Rank",
            "Rank 95% interval",
            "P(best)",
            "Not told apart from (Holm p \u2265 0.05)",
        ],
        rows,
        [False, False, True, True, True, True, False],
        "Rank 1 is best (lower-is-better metrics reversed); ties share the average rank. The "
        "rank interval and P(best) (share of bootstrap resamples in which no model is better) "
        "come from the same joint resampling of scenarios. A rank says nothing by itself: "
        "models not told apart by their paired test may well change places on other items.",
    )


def pairwise_table(stats: dict[str, Any], cond: str) -> Table:
    titles = {m["name"]: metric_label(m) for m in stats["metrics"]}
    rows = []
    for r in stats["pairwise"]:
        if r["condition"] != cond:
            continue
        disc = r.get("discordant")
        rows.append(
            [
                titles[r["metric"]],
                f"{r['a']} \u2212 {r['b']}",
                fmt(r["mean_a"]),
                fmt(r["mean_b"]),
                fmt(r["delta"], signed=True),
                _ci(r, signed=True),
                TESTS.get(r["test"] or "", NA)
                + (f" ({disc['a_only']}/{disc['b_only']})" if disc else ""),
                fmt_p(r["p"]),
                fmt_p(r.get("p_holm")),
                str(r["n"]),
                r.get("favorable") or NA,
            ]
        )
    return Table(
        f"{cond}: paired model-versus-model deltas",
        [
            "Metric",
            "Pair (a \u2212 b)",
            "a mean",
            "b mean",
            "\u0394",
            "95% CI",
            "Test (discordant a/b)",
            "p",
            "p (Holm)",
            "n",
            "Favours a?",
        ],
        rows,
        [False, False, True, True, True, True, False, True, True, True, False],
        "Over the scenarios where both models have the metric defined. 'Favours a?' is yes "
        "or no only where the Holm-adjusted p is below 0.05 (the sign read against the "
        "metric's direction), 'not significant' otherwise.",
    )


def forests(stats: dict[str, Any], cond: str) -> dict[tuple[str, str], str]:
    """(model a, model b) -> the forest plot of their paired deltas under `cond`."""
    panel = {"metrics": stats["metrics"]}
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for r in stats["pairwise"]:
        if r["condition"] == cond:
            pairs.setdefault((r["a"], r["b"]), {})[r["metric"]] = r
    return {
        (a, b): svg.forest(panel, {"a": a, "b": b, "metrics": rows})
        for (a, b), rows in pairs.items()
    }


def forest_plots(stats: dict[str, Any], cond: str) -> str:
    figures = [f"<figure>{plot}</figure>" for plot in forests(stats, cond).values()]
    return "<div class='plots'>" + "".join(figures) + "</div>"


def study_figures(stats: dict[str, Any]) -> dict[str, str]:
    """Every plot of study.html by file name (written as standalone SVGs beside it)."""
    from harness.report.export import file_safe

    out = {}
    for cond in stats["conditions"]:
        for (a, b), plot in forests(stats, cond).items():
            out[f"forest-{file_safe(cond)}-{file_safe(a)}-{file_safe(b)}.svg"] = plot
    if interaction_table(stats) is not None:
        for m in stats["metrics"]:
            out[f"interaction-{file_safe(m['name'])}.svg"] = interaction_svg(stats, m)
    return out


def interaction_svg(stats: dict[str, Any], metric: dict[str, Any]) -> str:
    """Mean per condition for each model (one line per model, 95% CI whiskers): lines that
    are not parallel are a model x condition interaction."""
    conds, models = stats["conditions"], stats["models"]
    left, top, plot_h, step = 44, 30, 150, 92
    width = left + step * max(1, len(conds) - 1) + 60
    height = top + plot_h + 40
    body = [svg._text(left, 16, metric_label(metric), 13, font_weight="bold")]

    def sy(v: float) -> float:
        return top + plot_h * (1 - min(1.0, max(0.0, v)))

    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = sy(tick)
        body.append(
            f"<line x1='{left}' x2='{width - 20}' y1='{y:.1f}' y2='{y:.1f}' stroke='#eeeeee'/>"
        )
        body.append(svg._text(left - 4, y + 4, f"{tick:.2f}", 10, "end"))
    for j, cond in enumerate(conds):
        body.append(svg._text(left + 20 + step * j, top + plot_h + 18, cond, 11, "middle"))
    for i, model in enumerate(models):
        colour = MODEL_COLOURS[i % len(MODEL_COLOURS)]
        offset = (i - (len(models) - 1) / 2) * 4  # side by side, so whiskers do not hide
        points = []
        for j, cond in enumerate(conds):
            cell = stats["panels"][cond][metric["name"]][model]
            if cell["mean"] is None:
                continue
            x = left + 20 + step * j + offset
            points.append((x, sy(cell["mean"])))
            if cell["ci_low"] is not None:
                body.append(
                    f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{sy(cell['ci_low']):.1f}' "
                    f"y2='{sy(cell['ci_high']):.1f}' stroke='{colour}' stroke-width='1.5'/>"
                )
            body.append(
                f"<circle cx='{x:.1f}' cy='{sy(cell['mean']):.1f}' r='3.5' fill='{colour}'>"
                f"<title>{_x(model)} {_x(cond)}: {fmt(cell['mean'])} {_ci(cell)}</title></circle>"
            )
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            body.append(
                f"<polyline points='{path}' fill='none' stroke='{colour}' stroke-width='1.5'/>"
            )
    return svg._svg(width, height, body, f"Interaction plot: {metric['title']}")


def model_legend(models: list[str]) -> str:
    body = []
    x = 0
    for i, model in enumerate(models):
        colour = MODEL_COLOURS[i % len(MODEL_COLOURS)]
        body.append(f"<rect x='{x}' y='2' width='12' height='12' fill='{colour}'/>")
        body.append(svg._text(x + 16, 12, model, 12))
        x += 24 + 8 * len(model)
    return svg._svg(max(x, 10), 16, body, "Model colours")


def interaction_table(stats: dict[str, Any]) -> Table | None:
    inter = stats.get("interaction")
    if not inter:
        return None
    titles = {m["name"]: metric_label(m) for m in stats["metrics"]}
    rows = [
        [
            titles[r["metric"]],
            f"{r['condition']} vs {r['baseline']}",
            f"{r['a']} \u2212 {r['b']}",
            fmt(r["effect_a"], signed=True),
            fmt(r["effect_b"], signed=True),
            fmt(r["delta"], signed=True),
            _ci(r, signed=True),
            fmt_p(r["p"]),
            fmt_p(r.get("p_holm")),
            str(r["n"]),
        ]
        for r in inter["rows"]
    ]
    return Table(
        "Model x condition interaction (difference of grounding effects)",
        [
            "Metric",
            "Grounding effect",
            "Pair (a \u2212 b)",
            "Effect a",
            "Effect b",
            "\u0394 (a \u2212 b)",
            "95% CI",
            "p (sign-flip)",
            "p (Holm)",
            "n",
        ],
        rows,
        [False, False, False, True, True, True, True, True, True, True],
        f"Per scenario: (a under the condition \u2212 a under {inter['baseline']}) \u2212 (b "
        f"under the condition \u2212 b under {inter['baseline']}), averaged over scenarios "
        "defined under all four cells; bootstrap over scenarios, sign-flip permutation test, "
        "Holm across this table. A positive \u0394 on a higher-is-better metric: grounding "
        "helps a more than b.",
    )


def reliability_html(stats: dict[str, Any]) -> str:
    rel = stats.get("reliability")
    if not rel:
        return (
            "<p class='note'>One replicate per (scenario, condition): stability and ICC need "
            "replicates &gt; 1.</p>"
        )
    conds = stats["conditions"]
    rows = []
    for model in stats["models"]:
        per = rel["stability"][model]
        rows.append(
            [
                model,
                *(
                    f"{fmt(per[c]['share'])} {_ci(per[c])} (n={per[c]['n']})"
                    for c in [*conds, "all"]
                ),
            ]
        )
    stability = Table(
        "Answer stability: share of items with the same recommendation in every replicate",
        ["Model", *conds, "All conditions"],
        rows,
        [False, *[True] * (len(conds) + 1)],
        "Recommendations are compared as the intervention they name (through the domain's "
        "lexicon), an abstention or an unparseable answer being answers of their own; items "
        "with a replicate unanswered are left out. 95% Wilson interval.",
    )
    icc_rows = []
    titles = {m["name"]: metric_label(m) for m in stats["metrics"]}
    for model in stats["models"]:
        for metric, per in rel["icc"][model].items():
            cells = []
            for c in conds:
                e = per[c]
                cells.append(
                    NA + f" (n={e['n']})"
                    if e["icc"] is None
                    else f"{fmt(e['icc'])} {_ci(e)} (n={e['n']})"
                )
            icc_rows.append([model, titles[metric], *cells])
    icc = Table(
        "Intraclass correlation ICC(2,1) of each continuous metric across replicates",
        ["Model", "Metric", *conds],
        icc_rows,
        [False, False, *[True] * len(conds)],
        "Two-way random effects, absolute agreement, single measurement (Shrout & Fleiss): "
        "replicates are crossed with items, so a systematic shift between replicate passes "
        "counts against agreement. Over the scenarios where every replicate has the metric "
        "defined; 95% bootstrap interval over scenarios. NA: no variance at all (every value "
        "equal) or fewer than two scenarios.",
    )
    return table_html(stability) + table_html(icc)


def usage_table(stats: dict[str, Any]) -> Table:
    rows = []
    for model in stats["models"]:
        u = stats["usage"][model]
        rows.append(
            [
                model,
                str(u["answers"]),
                str(u["failed"]),
                str(u["cached"]),
                f"{u['tokens_in']:,}",
                f"{u['tokens_out']:,}",
                f"${u['cost_usd']:.4f}",
                str(u.get("mode") or NA),
                str(u.get("prices") or NA),
            ]
        )
    return Table(
        "Cost and tokens per model",
        [
            "Model",
            "Answers logged",
            "Failed",
            "From cache",
            "Tokens in",
            "Tokens out",
            "Cost (USD)",
            "Mode",
            "Prices",
        ],
        rows,
        [False, True, True, True, True, True, True, False, False],
        "Summed over every record of the model's responses log, whichever invocation sent it. "
        "Reference responders report estimated tokens (4 characters per token) and no cost.",
    )


def provenance_html(block: dict[str, Any]) -> str:
    """The block as the QA report shows its own (harness.report.provenance rows, the same table)."""
    return _table_html(provenance_table("This study", provenance_rows(block)))


def render_study_html(stats: dict[str, Any]) -> str:
    name = stats.get("study", {}).get("name", "study")
    title = f"kgbench study: {name}"
    parts = [
        f"<h1>{_x(title)}</h1>",
        design_html(stats),
        "<h2 id='responses'>Responses</h2>",
        table_html(counts_table(stats)),
    ]
    for cond in stats["conditions"]:
        anchor = _anchor("condition", cond)
        parts += [
            f"<h2 id='{anchor}'>Condition {_x(cond)}</h2>",
            table_html(model_metric_table(stats, cond)),
            f"<h3 id='{anchor}-ranking'>Ranking</h3>",
            table_html(ranking_table(stats, cond)),
            f"<h3 id='{anchor}-deltas'>Model deltas</h3>",
            "<p class='note'>Forest plots: paired deltas with 95% bootstrap intervals; green "
            "favours the first model, red the second (both: Holm-adjusted p < 0.05), grey "
            "not significant or no change.</p>",
            forest_plots(stats, cond),
            table_html(pairwise_table(stats, cond)),
        ]
    inter = interaction_table(stats)
    parts.append("<h2 id='interaction'>Model x condition interaction</h2>")
    if inter is None:
        parts.append("<p class='note'>Needs two conditions and two models.</p>")
    else:
        parts += [
            f"<div>{model_legend(stats['models'])}</div>",
            "<div class='plots'>",
            *(f"<figure>{interaction_svg(stats, m)}</figure>" for m in stats["metrics"]),
            "</div>",
            table_html(inter),
        ]
    parts += [
        "<h2 id='reliability'>Reliability across replicates</h2>",
        reliability_html(stats),
        "<h2 id='usage'>Cost and tokens</h2>",
        table_html(usage_table(stats)),
        "<h2 id='provenance'>Provenance</h2>",
        provenance_html(stats["provenance"]),
    ]
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{_x(title)}"
        f"</title><style>{CSS}table.provenance th{{text-align:left;vertical-align:top}}"
        ".wide{overflow-x:auto;max-width:100%}"
        "</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )

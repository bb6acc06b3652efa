"""Inline SVG plots: a condition-by-metric heatmap, per-category bars and a forest plot.

Hand-written SVG keeps the report self-contained and byte-deterministic with no plotting
dependency. Every text is XML-escaped (model names and categories come from input files).
"""

from __future__ import annotations

from html import escape
from typing import Any

from .tables import fmt, metric_label

FONT = "font-family='Helvetica, Arial, sans-serif'"
# Viridis anchors (0 -> 1), interpolated linearly: readable and colour-blind safe.
VIRIDIS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
CONDITION_COLOURS = ["#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b"]
GOOD, BAD, NEUTRAL = "#1a7f37", "#cf222e", "#6e7781"


def _x(text: str) -> str:
    return escape(text, quote=True)


def viridis(t: float) -> tuple[int, int, int]:
    t = min(1.0, max(0.0, t)) * (len(VIRIDIS) - 1)
    i = min(int(t), len(VIRIDIS) - 2)
    f = t - i
    a, b = VIRIDIS[i], VIRIDIS[i + 1]
    r, g, bl = (round(a[k] + (b[k] - a[k]) * f) for k in range(3))
    return r, g, bl


def _text(
    x: float, y: float, text: str, size: int = 12, anchor: str = "start", **attrs: str
) -> str:
    extra = "".join(f" {k.replace('_', '-')}='{v}'" for k, v in attrs.items())
    return (
        f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' {FONT}{extra}>"
        f"{_x(text)}</text>"
    )


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
        f"viewBox='0 0 {width:.0f} {height:.0f}' role='img' aria-label='{_x(label)}'>"
        + "".join(body)
        + "</svg>"
    )


def heatmap(panel: dict[str, Any]) -> str:
    """Rows: metrics; columns: conditions. Colour is goodness (1 - value where lower is
    better), so dark always means worse; the number printed is the raw mean."""
    metrics, conds = panel["metrics"], panel["conditions"]
    left, top, cw, ch = 250, 30, 92, 26
    width, height = left + cw * len(conds) + 20, top + ch * len(metrics) + 40
    body = [
        _text(left + cw * j + cw / 2, top - 10, c, 13, "middle", font_weight="bold")
        for j, c in enumerate(conds)
    ]
    for i, m in enumerate(metrics):
        y = top + ch * i
        body.append(_text(left - 8, y + ch / 2 + 4, metric_label(m), 12, "end"))
        for j, c in enumerate(conds):
            stat = panel["overall"].get(c, {}).get(m["name"]) or {}
            value = stat.get("mean")
            x = left + cw * j
            if value is None:
                fill, ink, label = "#eeeeee", "#666666", f"NA (n={stat.get('n', 0)})"
            else:
                good = value if m.get("higher_is_better", True) else 1 - value
                r, g, b = viridis(good)
                fill = f"rgb({r},{g},{b})"
                ink = "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"
                label = fmt(value)
            body.append(
                f"<rect x='{x + 1}' y='{y + 1}' width='{cw - 2}' height='{ch - 2}' fill='{fill}'/>"
            )
            body.append(_text(x + cw / 2, y + ch / 2 + 4, label, 12, "middle", fill=ink))
    # legend
    ly = top + ch * len(metrics) + 14
    for k in range(10):
        r, g, b = viridis(k / 9)
        body.append(
            f"<rect x='{left + k * 18}' y='{ly}' width='18' height='10' fill='rgb({r},{g},{b})'/>"
        )
    body.append(_text(left - 8, ly + 9, "worse", 11, "end"))
    body.append(_text(left + 10 * 18 + 6, ly + 9, "better", 11))
    return _svg(width, height, body, "Condition by metric heatmap")


def category_bars(panel: dict[str, Any], metric: dict[str, Any]) -> str:
    """One metric across categories: a group of bars (one per condition) per category, each
    with its standard-error whisker and its n (the scenarios where the metric is defined)."""
    conds = panel["conditions"]
    cats = sorted(panel.get("by_category", {}))
    left, top, plot_h = 40, 40, 120
    group_w = max(68, 12 * len(conds) + 20)
    width = left + group_w * len(cats) + 20
    height = top + plot_h + 60
    body = [_text(left, 16, metric_label(metric), 13, font_weight="bold")]
    for tick in (0.0, 0.5, 1.0):
        y = top + plot_h * (1 - tick)
        body.append(
            f"<line x1='{left}' x2='{width - 10}' y1='{y:.1f}' y2='{y:.1f}' stroke='#dddddd'/>"
        )
        body.append(_text(left - 4, y + 4, f"{tick:.1f}", 10, "end"))
    bar_w = (group_w - 20) / max(1, len(conds))
    for gi, cat in enumerate(cats):
        gx = left + group_w * gi + 10
        for ci, cond in enumerate(conds):
            stat = panel["by_category"][cat].get(cond, {}).get(metric["name"]) or {}
            x = gx + bar_w * ci
            colour = CONDITION_COLOURS[ci % len(CONDITION_COLOURS)]
            if stat.get("mean") is None:
                body.append(
                    _text(x + bar_w / 2, top + plot_h - 2, "\u00d7", 10, "middle", fill="#999999")
                )
                continue
            mean = min(1.0, max(0.0, stat["mean"]))
            h = plot_h * mean
            se = stat.get("se")
            label = f"{fmt(stat['mean'])}" + (f" \u00b1 {fmt(se)}" if se is not None else "")
            body.append(
                f"<rect x='{x:.1f}' y='{top + plot_h - h:.1f}' width='{bar_w - 2:.1f}' "
                f"height='{max(h, 0.5):.1f}' fill='{colour}'><title>{_x(cat)} {_x(cond)}: "
                f"{label} (n={stat['n']})</title></rect>"
            )
            cx, top_y = x + (bar_w - 2) / 2, top + plot_h - h
            if se is not None and se > 0:
                lo, hi = max(0.0, mean - se), min(1.0, mean + se)
                y_lo, y_hi = top + plot_h * (1 - lo), top + plot_h * (1 - hi)
                cap = min(3.0, (bar_w - 2) / 2)
                body.append(
                    f"<path d='M{cx:.1f} {y_lo:.1f}V{y_hi:.1f}M{cx - cap:.1f} {y_hi:.1f}"
                    f"H{cx + cap:.1f}M{cx - cap:.1f} {y_lo:.1f}H{cx + cap:.1f}' "
                    "stroke='#24292f' stroke-width='1' fill='none'/>"
                )
                top_y = min(top_y, y_hi)
            body.append(_text(cx, top_y - 3, str(stat["n"]), 8, "middle", fill="#57606a"))
        words = cat.replace("_", " ").split()
        half = (len(words) + 1) // 2
        for li, part in enumerate((" ".join(words[:half]), " ".join(words[half:]))):
            if part:
                cx = gx + (group_w - 20) / 2
                body.append(_text(cx, top + plot_h + 14 + 12 * li, part[:18], 10, "middle"))
    return _svg(width, height, body, f"{metric['title']} by category")


def legend(conditions: list[str]) -> str:
    body = []
    for i, c in enumerate(conditions):
        colour = CONDITION_COLOURS[i % len(CONDITION_COLOURS)]
        body.append(f"<rect x='{i * 70}' y='2' width='12' height='12' fill='{colour}'/>")
        body.append(_text(i * 70 + 16, 12, c, 12))
    return _svg(70 * len(conditions), 16, body, "Condition colours")


def forest(panel: dict[str, Any], contrast: dict[str, Any]) -> str:
    """Paired deltas with their 95% intervals; green or red only where the Holm-adjusted test
    finds a difference (`favorable` yes or no), grey where it does not, whatever the sign."""
    metrics = panel["metrics"]
    rows = contrast["metrics"]
    left, right, top, rh = 230, 170, 34, 24
    plot_w = 300
    lo = min([-0.25, *[r["ci_low"] for r in rows.values() if r.get("ci_low") is not None]])
    hi = max([0.25, *[r["ci_high"] for r in rows.values() if r.get("ci_high") is not None]])
    lo, hi = max(-1.0, lo - 0.05), min(1.0, hi + 0.05)

    def sx(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    width, height = left + plot_w + right, top + rh * len(metrics) + 40
    a, b = contrast["a"], contrast["b"]
    body = [_text(left, 18, f"\u0394 = {a} \u2212 {b} (95% bootstrap CI)", 13, font_weight="bold")]
    body.append(
        f"<line x1='{sx(0):.1f}' x2='{sx(0):.1f}' y1='{top - 4}' y2='{top + rh * len(metrics)}' "
        "stroke='#444444' stroke-dasharray='4 3'/>"
    )
    for i, m in enumerate(metrics):
        r = rows.get(m["name"], {})
        y = top + rh * i + rh / 2
        body.append(_text(left - 8, y + 4, metric_label(m), 12, "end"))
        if r.get("delta") is None:
            body.append(_text(left + plot_w + 10, y + 4, "NA", 12, fill="#999999"))
            continue
        colour = {"yes": GOOD, "no": BAD}.get(r.get("favorable") or "", NEUTRAL)
        if r.get("ci_low") is not None:
            body.append(
                f"<line x1='{sx(r['ci_low']):.1f}' x2='{sx(r['ci_high']):.1f}' y1='{y:.1f}' "
                f"y2='{y:.1f}' stroke='{colour}' stroke-width='2'/>"
            )
        body.append(f"<circle cx='{sx(r['delta']):.1f}' cy='{y:.1f}' r='4.5' fill='{colour}'/>")
        ci = (
            f" [{fmt(r['ci_low'], 2, True)}, {fmt(r['ci_high'], 2, True)}]"
            if r.get("ci_low") is not None
            else ""
        )
        body.append(_text(left + plot_w + 10, y + 4, f"{fmt(r['delta'], 3, True)}{ci}", 11))
    axis_y = top + rh * len(metrics) + 6
    body.append(
        f"<line x1='{left}' x2='{left + plot_w}' y1='{axis_y}' y2='{axis_y}' stroke='#444444'/>"
    )
    ticks = [k / 4 for k in range(-4, 5) if lo <= k / 4 <= hi]
    for v in ticks:
        body.append(
            f"<line x1='{sx(v):.1f}' x2='{sx(v):.1f}' y1='{axis_y}' y2='{axis_y + 4}' stroke='#444444'/>"
        )
        body.append(_text(sx(v), axis_y + 16, fmt(v, 2, True), 10, "middle"))
    return _svg(width, height, body, f"Forest plot of paired deltas {a} vs {b}")

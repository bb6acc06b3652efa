"""The report's tables as plain rows of strings, shared by the Markdown and HTML renderers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NA = "NA"


@dataclass
class Table:
    caption: str
    header: list[str]
    rows: list[list[str]]
    numeric: list[bool] = field(default_factory=list)  # right-align these columns
    note: str = ""


def fmt(value: float | None, digits: int = 3, signed: bool = False) -> str:
    if value is None:
        return NA
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.replace("-", "\u2212")  # a real minus sign reads better in tables


def fmt_p(p: float | None) -> str:
    if p is None:
        return NA
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def metric_label(metric: dict[str, Any]) -> str:
    return metric["title"] + ("" if metric.get("higher_is_better", True) else " (\u2193 better)")


def cell(stat: dict[str, Any] | None) -> str:
    """ "mean ± se (n)", the paper's Table 2 cell with its standard error added."""
    if not stat or stat.get("mean") is None:
        return f"{NA} (n={stat.get('n', 0) if stat else 0})"
    se = f" \u00b1 {fmt(stat['se'])}" if stat.get("se") is not None else ""
    return f"{fmt(stat['mean'])}{se} (n={stat['n']})"


POLICY_WORDS = {
    "intent_to_treat": "intent-to-treat (an unparseable answer counts as a wrong answer)",
    "per_protocol": "per-protocol (unparseable answers are left out of the means)",
}


def provenance_table(caption: str, rows: list[tuple[str, str]]) -> Table:
    """A provenance block (harness.provenance) as a two-column table."""
    return Table(caption, ["", ""], [[k, v] for k, v in rows], [False, False])


def model_heading(panel: dict[str, Any], kind: str = "Model") -> str:
    """`Baseline ref:oracle` or `Model openai:gpt-4o`: a baseline is never called a model."""
    return f"{kind} {panel.get('model', panel.get('slug'))}"


def counts_table(panel: dict[str, Any]) -> Table:
    cols = [
        "expected",
        "scored",
        "missing",
        "failed",
        "parse_failures",
        "unparseable",
        "unknown_id_responses",
    ]
    header = [
        "Condition",
        "Expected",
        "Scored",
        "Missing",
        "Failed",
        "Parse failures",
        "Unparseable",
        "Unknown ids",
    ]
    rows = [
        [cond, *(str(panel["counts"].get(cond, {}).get(c, 0)) for c in cols)]
        for cond in panel["conditions"]
    ]
    policy = (panel.get("scoring_policy") or {}).get("primary", "intent_to_treat")
    return Table(
        "Responses per condition",
        header,
        rows,
        [False, *[True] * len(cols)],
        "Missing and failed responses are not scored and never count as zeros. Parse failures "
        "(not the contract's shape, or JSON found inside other text) are scored on what could "
        "be read. Unparseable answers (no JSON object at all) enter the panel under the "
        f"primary policy, {POLICY_WORDS.get(policy, policy)}. 'Unknown ids' counts responses "
        "citing ids absent from the graph.",
    )


def panel_table(
    caption: str, panel: dict[str, Any], table: dict[str, Any], note: str = ""
) -> Table:
    conditions = panel["conditions"]
    rows = [
        [metric_label(m), *(cell(table.get(c, {}).get(m["name"])) for c in conditions)]
        for m in panel["metrics"]
    ]
    return Table(caption, ["Metric", *conditions], rows, [False, *[True] * len(conditions)], note)


def overall_table(panel: dict[str, Any]) -> Table:
    return panel_table(
        "Overall panel (mean \u00b1 standard error, n scenarios where the metric is defined)",
        panel,
        panel["overall"],
        "NA: the metric is undefined for every scenario of that condition under its scoring rule.",
    )


def alternative_table(panel: dict[str, Any]) -> Table | None:
    """The overall panel under the other unparseable-answer policy, where the two differ."""
    policy = panel.get("scoring_policy") or {}
    table = policy.get("alternative_overall")
    if not table:
        return None
    other = policy.get("alternative", "")
    return panel_table(
        f"Overall panel under {other.replace('_', '-')} scoring (secondary)",
        panel,
        table,
        f"{policy.get('unparseable_answers', 0)} answer(s) had no JSON object. The primary "
        f"panel above scores them {POLICY_WORDS.get(policy.get('primary', ''), '')}; this "
        f"one is {POLICY_WORDS.get(other, other)}.",
    )


def category_tables(panel: dict[str, Any]) -> list[Table]:
    return [
        panel_table(f"Category: {cat.replace('_', ' ')}", panel, table)
        for cat, table in sorted(panel.get("by_category", {}).items())
    ]


def paired_tables(panel: dict[str, Any]) -> list[Table]:
    titles = {m["name"]: metric_label(m) for m in panel["metrics"]}
    out = []
    for contrast in panel.get("paired", []):
        a, b = contrast["a"], contrast["b"]
        rows = []
        for metric in panel["metrics"]:
            name = metric["name"]
            r = contrast["metrics"].get(name, {})
            ci = (
                f"[{fmt(r['ci_low'], signed=True)}, {fmt(r['ci_high'], signed=True)}]"
                if r.get("ci_low") is not None
                else NA
            )
            test = {"mcnemar_exact": "McNemar (exact)", "sign_flip_permutation": "sign-flip"}.get(
                r.get("test") or "", NA
            )
            rows.append(
                [
                    titles.get(name, name),
                    fmt(r.get("mean_b")),
                    fmt(r.get("mean_a")),
                    fmt(r.get("delta"), signed=True),
                    ci,
                    test,
                    fmt_p(r.get("p")),
                    fmt_p(r.get("p_holm")),
                    fmt(r.get("correlation"), 2),
                    str(r.get("n", 0)),
                    r.get("favorable") or NA,
                ]
            )
        settings = panel.get("settings", {})
        out.append(
            Table(
                f"Paired within-scenario deltas, {a} vs {b}",
                [
                    "Metric",
                    f"{b} mean",
                    f"{a} mean",
                    f"\u0394 ({a} \u2212 {b})",
                    "95% CI",
                    "Test",
                    "p",
                    "p (Holm)",
                    "r",
                    "n",
                    f"Favorable to {a}?",
                ],
                rows,
                [False, True, True, True, True, False, True, True, True, True, False],
                f"Over scenarios where the metric is defined under both conditions (replicates "
                f"averaged first). Percentile bootstrap over scenarios, "
                f"{settings.get('bootstrap', '?')} resamples, seed {settings.get('seed', '?')}; "
                "exact McNemar for binary metrics, paired sign-flip permutation test otherwise; "
                "Holm correction across the panel; r: Pearson correlation between the "
                "conditions.",
            )
        )
    return out

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
    """ "mean ± se (n)", the paper's Table 2 cell with its standard error added; a binary
    metric with one 0/1 answer per scenario shows its 95% Wilson interval instead,
    "mean [low, high] (n)", since its SE is 0 at 0/n and n/n."""
    if not stat or stat.get("mean") is None:
        return f"{NA} (n={stat.get('n', 0) if stat else 0})"
    if stat.get("interval") == "wilson" and stat.get("ci_low") is not None:
        return (
            f"{fmt(stat['mean'])} [{fmt(stat['ci_low'])}, {fmt(stat['ci_high'])}] (n={stat['n']})"
        )
    se = f" \u00b1 {fmt(stat['se'])}" if stat.get("se") is not None else ""
    return f"{fmt(stat['mean'])}{se} (n={stat['n']})"


CELL_NOTE = (
    "mean \u00b1 SE for continuous metrics; [low, high] is the 95% Wilson interval of a binary "
    "metric with one 0/1 answer per scenario."
)

POLICY_WORDS = {
    "intent_to_treat": "intent-to-treat (an unparseable answer counts as a wrong answer)",
    "per_protocol": "per-protocol (unparseable answers are left out of the means)",
}


def provenance_table(caption: str, rows: list[tuple[str, str]]) -> Table:
    """A provenance block (harness.report.provenance) as a two-column table."""
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


# How causal edges were credited (panel.json `readings`, metrics.yaml's chain kinds).
READING_WORDS = {
    "validated_chains": "scored against every validated chain from the answer to the target "
    "(kgbench's declared reading)",
    "gold_path": "scored against the one gold path (the paper's reading, a declared variant)",
}


def readings_note(panel: dict[str, Any]) -> str:
    """One sentence naming the causal-edge reading the panel was scored under (none before)."""
    used = sorted(set((panel.get("readings") or {}).values()))
    if not used:
        return ""
    return " Causal edges " + "; ".join(READING_WORDS.get(r, r) for r in used) + "."


def volume_note(panel: dict[str, Any]) -> str:
    """The mean context size per condition (panel.json `context_volume`), beside the scores:
    the conditions differ in volume as well as in kind of content."""
    volume = panel.get("context_volume") or {}
    shown = [
        f"{cond} {v['characters']:,.0f} characters, {v['assertions']:g} assertions"
        + (
            f" (padded to {v['reference']}'s length, within tolerance in {v['matched']} of "
            f"{v['prompts']} prompts)"
            if "matched" in v
            else ""
        )
        for cond in panel.get("conditions", [])
        if (v := volume.get(cond)) and v.get("characters")
    ]
    if not shown:
        return ""
    return " Mean grounded context per condition: " + "; ".join(shown) + "."


def overall_table(panel: dict[str, Any]) -> Table:
    return panel_table(
        "Overall panel (mean \u00b1 standard error, n scenarios where the metric is defined)",
        panel,
        panel["overall"],
        "NA: the metric is undefined for every scenario of that condition under its scoring rule. "
        + CELL_NOTE
        + readings_note(panel)
        + volume_note(panel),
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
        panel_table(f"Category: {cat.replace('_', ' ')}", panel, table, CELL_NOTE)
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
                "conditions. Favorable: yes or no only where the Holm-adjusted p is below "
                "0.05; otherwise 'not significant', whatever the sign of \u0394.",
            )
        )
    return out


VERIFY_STATUSES = ("verified", "refuted", "unverifiable", "rejected")


def verify_tables(summary: dict[str, Any]) -> list[Table]:
    """The C5-only figures of one model (verify/<slug>/summary.json): what happened to the
    proposed triplets at first review and after revision, and how often revision fixed one."""
    cond = str(summary.get("condition", "C5"))
    first, final = summary.get("first_review", {}), summary.get("final", {})
    proposed = summary.get("proposed", 0) or 0

    def share(n: int) -> str:
        return fmt(n / proposed, 3) if proposed else NA

    rows = [
        ["proposed", str(proposed), NA, str(proposed), NA],
        *(
            [
                status,
                str(first.get(status, 0)),
                share(first.get(status, 0)),
                str(final.get(status, 0)),
                share(final.get(status, 0)),
            ]
            for status in VERIFY_STATUSES
        ),
    ]
    revised, fixed = summary.get("revised", 0), summary.get("fixed_by_revision", 0)
    by = summary.get("verified_by", {})
    p95 = summary.get("review_ms_p95")
    counts = Table(
        f"{cond} verify-and-revise: triplets (first review and after revision)",
        ["Triplets", "First review", "Share", "Final", "Share"],
        rows,
        [False, True, True, True, True],
        f"{summary.get('scenarios', 0)} scenarios. Revised: {revised} refuted triplet(s) sent "
        f"back with the graph's correction; fixed by revision (verified afterwards): {fixed}"
        f" ({fmt(summary['fix_rate']) if summary.get('fix_rate') is not None else NA}). "
        f"Verified by exact assertion: {by.get('exact', 0)}, by path: {by.get('path', 0)}. "
        "Rejected: not reviewable (unknown predicate, empty or over-long name, self-loop, more "
        f"than asked). Review p95 {fmt(p95, 1) if p95 is not None else NA} ms per triplet.",
    )
    reasons = {
        **{f"reason: {k}": v for k, v in (summary.get("reasons") or {}).items()},
        **{f"unusable answer: {k}": v for k, v in (summary.get("unusable_answers") or {}).items()},
    }
    out = [counts]
    if reasons:
        out.append(
            Table(
                f"{cond} verify-and-revise: reasons",
                ["Reason", "Count"],
                [[k, str(v)] for k, v in sorted(reasons.items())],
                [False, True],
                "Refutation and rejection reasons over every review round; unusable answers "
                "are model steps whose reply could not be read (counted, never a crash).",
            )
        )
    return out


def _ci(stat: dict[str, Any] | None, signed: bool = False) -> str:
    """ "mean [low, high] (n)" of an order-sensitivity figure."""
    if not stat or stat.get("mean") is None:
        return f"{NA} (n={stat.get('n', 0) if stat else 0})"
    return (
        f"{fmt(stat['mean'], signed=signed)} [{fmt(stat['ci_low'], signed=signed)}, "
        f"{fmt(stat['ci_high'], signed=signed)}] (n={stat['n']})"
    )


def order_table(order: dict[str, Any]) -> Table:
    """Order sensitivity (scores/<slug>/order.json): per condition and presentation."""
    rows = []
    for cond, figures in order.get("conditions", {}).items():
        for pid, f in figures.get("presentations", {}).items():
            chance = f.get("first_option_chance")
            rows.append(
                [
                    cond,
                    pid,
                    _ci(f.get("accuracy")),
                    _ci(f.get("accuracy_delta"), signed=True) if "accuracy_delta" in f else "—",
                    _ci(f.get("flip_rate")) if "flip_rate" in f else "—",
                    _ci(f.get("first_option_share")),
                    fmt(chance) if chance is not None else NA,
                ]
            )
    settings = order.get("settings", {})
    described = "; ".join(f"{p['id']}: {p['description']}" for p in order.get("presentations", []))
    return Table(
        "Order sensitivity: accuracy, flip rate and position bias per presentation",
        [
            "Condition",
            "Presentation",
            f"Accuracy ({order.get('accuracy_metric', '?')})",
            "\u0394 vs original",
            "Flip rate vs original",
            "First-option share",
            "Chance (1/k)",
        ],
        rows,
        [False, False, True, True, True, True, True],
        "Mean [95% percentile bootstrap interval over scenarios] (n). Paired within scenario "
        "with the original order; a flip is a changed choice (an option, abstaining, or an "
        "answer naming no option). First-option share: answers choosing the first-listed "
        "option, over answers that chose an option, against chance 1/k. Replicate "
        f"{settings.get('replicate', 0)}; {settings.get('bootstrap', '?')} resamples, seed "
        f"{settings.get('seed', '?')}. {described}.",
    )

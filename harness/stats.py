"""Statistics of the panel: per-condition summaries and paired within-scenario contrasts.

The unit of analysis is the scenario (paper section 3.5): replicates of one (scenario,
condition) are averaged first, so a scenario answered five times weighs as much as one
answered once. Everything is deterministic: resampling uses `random.Random` seeded from the
run seed and the metric name, so adding a metric never moves another metric's interval.

Missing and failed responses are counted beside the scores and never enter a mean as zeros.
An unparseable answer (no JSON object) enters the means as the declared policy says
(spec/declarations/metrics.yaml `unparseable_policy`): intent-to-treat scores it as an empty answer,
per-protocol leaves it out. The panel is computed under the primary policy; where some answer
was unparseable, the overall table under the other policy is carried beside it.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import product
from typing import Any

from harness.metrics import DEFAULT_UNPARSEABLE_POLICY, UNPARSEABLE_POLICIES
from kgbench.contract import Metric, ScoredPanel

PANEL_SCHEMA_VERSION = ScoredPanel.FORMAT  # 1.2: Wilson intervals, favourable after Holm
EXACT_SIGN_FLIP_MAX_N = 12  # 2**12 sign patterns; above that, seeded Monte Carlo


# --- primitives ---------------------------------------------------------------------------


def mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def summary(values: Sequence[float], binary: bool = False) -> dict[str, Any]:
    """Mean, n and standard error of the mean (sample sd / sqrt n; None below two values).

    For a `binary` metric whose values are all 0 or 1 (one answer per scenario), also the 95%
    Wilson interval (`interval: "wilson"`, `ci_low`, `ci_high`): at 10/10 the standard error
    is 0 and "1.000 ± 0.000" would claim a certainty ten answers cannot give; Wilson says
    [0.722, 1.000]. Continuous metrics (and binary ones averaged over replicates) keep the SE.
    """
    n = len(values)
    m = mean(values)
    se = None
    if n >= 2 and m is not None:
        var = math.fsum((v - m) ** 2 for v in values) / (n - 1)
        se = math.sqrt(var / n)
    out: dict[str, Any] = {"mean": m, "n": n, "se": se}
    if binary and n and all(v in (0.0, 1.0) for v in values):
        low, high = wilson_interval(sum(1 for v in values if v == 1.0), n)
        out.update(interval="wilson", ci_low=low, ci_high=high)
    return out


Z95 = 1.959963984540054  # standard normal 97.5% quantile
ALPHA = 0.05  # the level at which a Holm-adjusted difference is called favourable or not


def wilson_interval(successes: int, n: int) -> tuple[float, float] | None:
    """95% Wilson score interval of a proportion (sound at 0 and at n, unlike Wald)."""
    if n == 0:
        return None
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends, not 1 - 1e-16
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default) of already sorted values."""
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_ci(
    deltas: Sequence[float], resamples: int, rng: random.Random, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean, resampling the given units with replacement."""
    n = len(deltas)
    if n == 0:
        return None
    if n == 1:
        return deltas[0], deltas[0]
    means = sorted(math.fsum(rng.choices(deltas, k=n)) / n for _ in range(resamples))
    alpha = (1 - level) / 2
    return quantile(means, alpha), quantile(means, 1 - alpha)


def mcnemar_exact(pairs: Iterable[tuple[float, float]]) -> tuple[float, int, int]:
    """Exact McNemar test: two-sided binomial test on the discordant pairs.

    Returns (p, b, c) with b = pairs (1, 0) and c = pairs (0, 1). With no discordant pair
    the conditions cannot be told apart and p = 1.
    """
    b = c = 0
    for x, y in pairs:
        if x == 1 and y == 0:
            b += 1
        elif x == 0 and y == 1:
            c += 1
    n = b + c
    if n == 0:
        return 1.0, b, c
    k = min(b, c)
    tail = math.fsum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail), b, c


def sign_flip_test(deltas: Sequence[float], resamples: int, rng: random.Random) -> float:
    """Paired permutation test of a zero mean difference (two-sided), by flipping signs.

    Exact over all 2**n sign patterns for small n; otherwise Monte Carlo with the add-one
    estimate (1 + hits) / (1 + resamples), which never reports p = 0.
    """
    n = len(deltas)
    if n == 0:
        return 1.0
    observed = abs(math.fsum(deltas)) - 1e-12
    if n <= EXACT_SIGN_FLIP_MAX_N:
        hits = sum(
            1
            for signs in product((1, -1), repeat=n)
            if abs(math.fsum(s * d for s, d in zip(signs, deltas, strict=True))) >= observed
        )
        return hits / 2**n
    hits = 0
    for _ in range(resamples):
        bits = rng.getrandbits(n)
        total = math.fsum(-d if (bits >> i) & 1 else d for i, d in enumerate(deltas))
        hits += abs(total) >= observed
    return (1 + hits) / (1 + resamples)


def holm(pvalues: dict[str, float | None]) -> dict[str, float | None]:
    """Holm step-down adjustment across the tests of one contrast (None stays None)."""
    tested = sorted((p, name) for name, p in pvalues.items() if p is not None)
    m = len(tested)
    out: dict[str, float | None] = {name: None for name in pvalues}
    running = 0.0
    for i, (p, name) in enumerate(tested):
        running = max(running, min(1.0, (m - i) * p))
        out[name] = running
    return out


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson correlation; None with fewer than three pairs or a constant side."""
    n = len(x)
    if n < 3:
        return None
    mx, my = math.fsum(x) / n, math.fsum(y) / n
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = math.fsum((a - mx) ** 2 for a in x)
    syy = math.fsum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


# --- the panel ----------------------------------------------------------------------------

ScenarioValues = dict[str, dict[str, dict[str, float]]]  # condition -> metric -> scenario -> v


def scenario_values(
    items: Iterable[dict[str, Any]],
    metrics: Sequence[Metric],
    policy: str = DEFAULT_UNPARSEABLE_POLICY,
) -> ScenarioValues:
    """Each scenario's value per condition and metric: the mean of its defined replicates
    (per-protocol: over the answers that could be parsed)."""
    acc: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for item in items:
        if item.get("status") != "scored":
            continue
        if policy == "per_protocol" and item.get("parse_status") == "unparseable":
            continue
        for m in metrics:
            v = item["scores"].get(m.name)
            if v is not None:
                acc[(item["condition"], m.name, item["scenario_id"])].append(v)
    out: ScenarioValues = defaultdict(lambda: defaultdict(dict))
    for (cond, metric, sid), values in sorted(acc.items()):
        out[cond][metric][sid] = math.fsum(values) / len(values)
    return out


def panel_table(
    values: ScenarioValues,
    conditions: Sequence[str],
    metrics: Sequence[Metric],
    keep: set[str] | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """condition -> metric -> {mean, n, se} over scenarios (restricted to `keep` if given)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for cond in conditions:
        row = {}
        for m in metrics:
            by_scn = values.get(cond, {}).get(m.name, {})
            row[m.name] = summary(
                [v for s, v in sorted(by_scn.items()) if keep is None or s in keep], m.binary
            )
        out[cond] = row
    return out


COUNT_KEYS = (
    "expected",
    "scored",
    "missing",
    "failed",
    "parse_failures",
    "unparseable",
    "unknown_id_responses",
)


def counts(items: Iterable[dict[str, Any]], conditions: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per condition: expected answers, and how many were scored, missing, failed, unparseable."""
    out = {c: dict.fromkeys(COUNT_KEYS, 0) for c in conditions}
    for item in items:
        row = out.setdefault(item["condition"], dict.fromkeys(COUNT_KEYS, 0))
        row["expected"] += 1
        status = item.get("status")
        if status == "scored":
            row["scored"] += 1
            row["parse_failures"] += not (item.get("parse_ok") and item.get("schema_ok"))
            row["unparseable"] += item.get("parse_status") == "unparseable"
            row["unknown_id_responses"] += bool(item.get("unknown_ids"))
        elif status in ("missing", "failed"):
            row[status] += 1
    return out


def direction(delta: float | None, higher_is_better: bool) -> str | None:
    """Which way the point estimate moved: "better", "worse" or "no change" (not a test)."""
    if delta is None:
        return None
    if abs(delta) < 1e-12:
        return "no change"
    return "better" if (delta > 0) == higher_is_better else "worse"


def favorable(
    delta: float | None, higher_is_better: bool, p_holm: float | None, alpha: float = ALPHA
) -> str | None:
    """ "yes" or "no" only when the Holm-adjusted test rejects at `alpha`; otherwise "not
    significant" (or "no change" for a zero delta). A sign alone is not a finding: a Δ of
    −0.037 with p = 0.25 is not unfavourable, and the report must not colour it so."""
    moved = direction(delta, higher_is_better)
    if moved in (None, "no change"):
        return moved
    if p_holm is None or p_holm >= alpha:
        return "not significant"
    return "yes" if moved == "better" else "no"


def paired_contrast(
    values: ScenarioValues,
    a: str,
    b: str,
    metrics: Sequence[Metric],
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """Within-scenario deltas a - b per metric (Table 3), over scenarios defined under both.

    Interval: percentile bootstrap over scenarios. Test: exact McNemar for a binary metric
    whose paired values are all 0/1; otherwise (continuous metrics, or binary ones averaged
    over replicates) a paired sign-flip permutation test. Holm adjusts across the panel.
    """
    rows: dict[str, dict[str, Any]] = {}
    pvalues: dict[str, float | None] = {}
    for m in metrics:
        va = values.get(a, {}).get(m.name, {})
        vb = values.get(b, {}).get(m.name, {})
        shared = sorted(set(va) & set(vb))
        xa = [va[s] for s in shared]
        xb = [vb[s] for s in shared]
        deltas = [x - y for x, y in zip(xa, xb, strict=True)]
        rng = random.Random(f"{seed}:{a}:{b}:{m.name}")
        ci = bootstrap_ci(deltas, resamples, rng)
        row: dict[str, Any] = {
            "n": len(shared),
            "mean_a": mean(xa),
            "mean_b": mean(xb),
            "delta": mean(deltas),
            "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None,
            "correlation": pearson(xa, xb),
            "test": None,
            "p": None,
            "discordant": None,
        }
        if shared:
            binary_values = all(v in (0.0, 1.0) for v in (*xa, *xb))
            if m.binary and binary_values:
                p, n10, n01 = mcnemar_exact(zip(xa, xb, strict=True))
                row.update(test="mcnemar_exact", p=p, discordant={"a_only": n10, "b_only": n01})
            else:
                row.update(test="sign_flip_permutation", p=sign_flip_test(deltas, resamples, rng))
        row["direction"] = direction(row["delta"], m.higher_is_better)
        rows[m.name] = row
        pvalues[m.name] = row["p"]
    for name, p in holm(pvalues).items():
        rows[name]["p_holm"] = p
    for m in metrics:
        row = rows[m.name]
        row["favorable"] = favorable(row["delta"], m.higher_is_better, row.get("p_holm"))
    return {"a": a, "b": b, "metrics": rows}


def build_panel(
    items: Sequence[dict[str, Any]],
    metrics: Sequence[Metric],
    conditions: Sequence[str],
    *,
    pairs: Sequence[tuple[str, str]] = (("C4", "C2"),),
    bootstrap: int = 10000,
    seed: int = 0,
    policy: str = DEFAULT_UNPARSEABLE_POLICY,
) -> dict[str, Any]:
    """The whole panel of one model (panel.json): overall, per category, paired contrasts,
    under the primary `policy`; with the other policy's overall table where they differ."""
    values = scenario_values(items, metrics, policy)
    unparseable = sum(
        1 for i in items if i.get("status") == "scored" and i.get("parse_status") == "unparseable"
    )
    other = next(p for p in UNPARSEABLE_POLICIES if p != policy)
    scoring_policy: dict[str, Any] = {
        "primary": policy,
        "unparseable_answers": unparseable,
        "alternative": other,
        # only where the two policies can differ: some answer was unparseable
        "alternative_overall": panel_table(
            scenario_values(items, metrics, other), conditions, metrics
        )
        if unparseable
        else None,
    }
    by_cat: dict[str, set[str]] = defaultdict(set)
    for item in items:
        by_cat[item.get("category") or "uncategorised"].add(item["scenario_id"])
    return {
        "schema_version": PANEL_SCHEMA_VERSION,
        "conditions": list(conditions),
        "metrics": [
            {
                "name": m.name,
                "title": m.title,
                "higher_is_better": m.higher_is_better,
                "binary": m.binary,
            }
            for m in metrics
        ],
        "scenarios": len({i["scenario_id"] for i in items}),
        "counts": counts(items, conditions),
        "overall": panel_table(values, conditions, metrics),
        "by_category": {
            cat: panel_table(values, conditions, metrics, keep=sids)
            for cat, sids in sorted(by_cat.items())
        },
        "paired": [paired_contrast(values, a, b, metrics, bootstrap, seed) for a, b in pairs],
        "settings": {"bootstrap": bootstrap, "seed": seed, "ci_level": 0.95, "unit": "scenario"},
        "scoring_policy": scoring_policy,
    }

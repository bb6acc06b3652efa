"""Statistics of the panel: per-condition summaries and paired within-scenario contrasts.

The unit of analysis is the scenario (paper section 3.5): replicates of one (scenario,
condition) are averaged first, so a scenario answered five times weighs as much as one
answered once. Everything is deterministic: resampling uses the one resampling core below
(numpy, seeded from the run seed and drawn once over the panel's scenario list), so adding a
metric never moves another metric's interval, and the study (`harness.study.stats`) computes
the same interval and p-value for the same paired values.

Missing and failed responses are counted beside the scores and never enter a mean as zeros.
An unparseable answer (no JSON object) enters the means as the declared policy says
(spec/declarations/metrics.yaml `unparseable_policy`): intent-to-treat scores it as an empty answer,
per-protocol leaves it out. The panel is computed under the primary policy; where some answer
was unparseable, the overall table under the other policy is carried beside it.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import product
from typing import Any

import numpy as np

from harness.evaluation.metrics import DEFAULT_UNPARSEABLE_POLICY, UNPARSEABLE_POLICIES
from kgbench.contract import Metric, ScoredPanel

EXACT_SIGN_FLIP_MAX_N = 12  # 2**12 sign patterns; above that, seeded Monte Carlo
CI_LEVEL = 0.95


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


# --- the resampling core -------------------------------------------------------------------
# One implementation of the bootstrap and the sign-flip test (numpy, seeded), used by the
# panel (`paired_contrast`), the report, the probe, the order analysis and the study
# (`harness.study.stats`): the same values, seed and scenario list give the same interval and
# the same p-value whichever command computes them (tests/evaluation/test_stat_core.py).


def rng_for(seed: int | str, purpose: str) -> np.random.Generator:
    """A generator fixed by the seed and what it is for (independent streams per purpose).

    The "kgbench-study" prefix is kept from the study, where the core began, so that its
    published figures do not move."""
    digest = hashlib.sha256(f"kgbench-study|{seed}|{purpose}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def bootstrap_counts(n: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """B x n resampling counts: row b says how often each unit is drawn in resample b."""
    if n == 0:
        return np.zeros((resamples, 0))
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)


def random_signs(n: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """R x n matrix of +1/-1 (the sign-flip permutations)."""
    return rng.integers(0, 2, size=(resamples, n)).astype(np.float64) * 2.0 - 1.0


def draws(n: int, bootstrap: int, permutations: int, seed: int | str) -> tuple[Any, Any]:
    """The bootstrap counts and the sign matrix for n units: drawn once per seed and unit list
    and shared by every metric and comparison (adding a metric moves no other's numbers)."""
    counts = bootstrap_counts(n, bootstrap, rng_for(seed, "bootstrap"))
    signs = random_signs(n, permutations, rng_for(seed, "signs"))
    return counts, signs


def resampled_means(counts: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Bootstrap means of each row of x (rows x n, NaN where undefined): B x rows.

    A resample's mean is over the drawn units where the value is defined; a resample that
    drew none of them gives NaN (left out of the interval)."""
    defined = ~np.isnan(x)
    num = counts @ np.where(defined, x, 0.0).T
    den = counts @ defined.T.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def percentile_interval(samples: np.ndarray, level: float = CI_LEVEL) -> tuple[float, float] | None:
    """Percentile interval (linear interpolation, numpy's default) of a vector, NaN left out."""
    kept = samples[~np.isnan(samples)]
    if kept.size == 0:
        return None
    alpha = (1 - level) / 2
    lo, hi = np.quantile(kept, [alpha, 1 - alpha])
    return float(lo), float(hi)


def column_intervals(
    boot: np.ndarray, defined: np.ndarray, x: np.ndarray
) -> list[tuple[float, float] | None]:
    """Percentile interval of each column of `boot` (B x series); a series with one defined
    value has the degenerate interval at that value, one with none has no interval."""
    out: list[tuple[float, float] | None] = []
    ok = ~np.isnan(boot)
    alpha = (1 - CI_LEVEL) / 2
    full = ok.all(axis=0)
    q = (
        np.quantile(np.where(ok, boot, 0.0)[:, full], [alpha, 1 - alpha], axis=0)
        if full.any()
        else None
    )
    col = 0
    for s in range(boot.shape[1]):
        count = int(defined[s].sum())
        if count == 0:
            out.append(None)
        elif count == 1:
            v = float(x[s][defined[s]][0])
            out.append((v, v))
        elif full[s] and q is not None:
            out.append((float(q[0, col]), float(q[1, col])))
        else:
            out.append(percentile_interval(boot[:, s]))
        if full[s]:
            col += 1
    return out


def bootstrap_ci(
    values: Sequence[float], resamples: int, seed: int | str, purpose: str
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of `values` (the units, resampled with
    replacement), with the core's draws for (seed, purpose)."""
    if not values:
        return None
    x = np.asarray(values, dtype=np.float64)[None, :]
    counts = bootstrap_counts(x.shape[1], resamples, rng_for(seed, purpose))
    return column_intervals(resampled_means(counts, x), ~np.isnan(x), x)[0]


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


def sign_flip_p(deltas: np.ndarray, signs: np.ndarray | None) -> float:
    """Two-sided paired permutation test of a zero mean difference, flipping signs.

    Exact over all 2**n sign patterns up to `EXACT_SIGN_FLIP_MAX_N` deltas; beyond that Monte
    Carlo over the rows of `signs` (R x n for these deltas) with the add-one estimate
    (1 + hits) / (1 + R), which never reports 0, or Hoeffding's bound where that is smaller.
    """
    deltas = np.asarray(deltas, dtype=np.float64)
    n = deltas.size
    if n == 0:
        return 1.0
    observed = abs(float(math.fsum(deltas.tolist()))) - 1e-12
    if n <= EXACT_SIGN_FLIP_MAX_N or signs is None:
        patterns = np.array(list(product((1.0, -1.0), repeat=n)))
        return float(np.mean(np.abs(patterns @ deltas) >= observed))
    hits = int(np.count_nonzero(np.abs(signs @ deltas) >= observed))
    return min((1 + hits) / (1 + signs.shape[0]), hoeffding_bound(deltas))


def hoeffding_bound(deltas: np.ndarray) -> float:
    """Hoeffding's bound on the exact two-sided sign-flip p-value: under the null,
    P(|sum s_i d_i| >= |sum d_i|) <= 2 exp(-(sum d_i)^2 / (2 sum d_i^2)).

    Why: a Monte Carlo p-value cannot go below 1 / (R + 1) (1e-4 at 10,000 permutations), and
    Holm across a study's hundreds of tests multiplies that floor past 0.05, so a large,
    obvious difference on a continuous metric could never be called significant. The bound
    is never below the exact p-value, so taking it where it is smaller than the Monte Carlo
    estimate replaces an estimate stuck at its floor with a valid, smaller upper bound; it
    changes nothing elsewhere (for moderate effects it is far above the estimate)."""
    total = float(math.fsum(deltas.tolist()))
    squares = float(math.fsum((deltas * deltas).tolist()))
    if squares <= 0:
        return 1.0
    return min(1.0, 2.0 * math.exp(-(total * total) / (2.0 * squares)))


def paired_rows(
    xa_rows: np.ndarray,
    xb_rows: np.ndarray,
    counts: np.ndarray,
    signs: np.ndarray,
    binary: bool,
    allow_mcnemar: bool = True,
) -> list[dict[str, Any]]:
    """Paired deltas a - b for several pairs at once (row p of xa_rows against row p of
    xb_rows, NaN where undefined), each over the units defined for both: estimate, percentile
    bootstrap interval, and a test: exact McNemar for a binary metric whose paired values are
    all 0/1 (where allowed), otherwise the sign-flip permutation test.

    Batched so one bootstrap product and one sign-flip product serve every pair."""
    d = xa_rows - xb_rows  # NaN where either side is undefined
    shared = ~np.isnan(d)
    boot = resampled_means(counts, d)
    intervals = column_intervals(boot, shared, d)
    flipped = signs @ np.where(shared, d, 0.0).T  # R x pairs; an undefined pair adds 0
    rows = []
    for p in range(d.shape[0]):
        mask = shared[p]
        n = int(mask.sum())
        a, b, dp = xa_rows[p][mask], xb_rows[p][mask], d[p][mask]
        row: dict[str, Any] = {
            "n": n,
            "mean_a": float(math.fsum(a.tolist()) / n) if n else None,
            "mean_b": float(math.fsum(b.tolist()) / n) if n else None,
            "delta": float(math.fsum(dp.tolist()) / n) if n else None,
            "ci_low": intervals[p][0] if intervals[p] else None,
            "ci_high": intervals[p][1] if intervals[p] else None,
            "test": None,
            "p": None,
            "discordant": None,
        }
        if (
            n
            and allow_mcnemar
            and binary
            and np.isin(a, (0.0, 1.0)).all()
            and np.isin(b, (0.0, 1.0)).all()
        ):
            pv, n10, n01 = mcnemar_exact(zip(a.tolist(), b.tolist(), strict=True))
            row.update(test="mcnemar_exact", p=pv, discordant={"a_only": n10, "b_only": n01})
        elif n:
            if n <= EXACT_SIGN_FLIP_MAX_N:
                pv = sign_flip_p(dp, None)
            else:
                observed = abs(float(math.fsum(dp.tolist()))) - 1e-12
                hits = int(np.count_nonzero(np.abs(flipped[:, p]) >= observed))
                pv = min((1 + hits) / (1 + signs.shape[0]), hoeffding_bound(dp))
            row.update(test="sign_flip_permutation", p=pv)
        rows.append(row)
    return rows


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
    scenarios: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Within-scenario deltas a - b per metric (Table 3), over scenarios defined under both.

    Interval: percentile bootstrap over `scenarios` (default: every scenario in `values`,
    sorted), a resample's mean taken over its drawn scenarios defined under both. Test: exact
    McNemar for a binary metric whose paired values are all 0/1; otherwise (continuous
    metrics, or binary ones averaged over replicates) a paired sign-flip permutation test.
    Both come from the resampling core with the draws for (seed, scenario list), as in the
    study. Holm adjusts across the panel.
    """
    if scenarios is None:
        scenarios = sorted({s for per in values.values() for m in per.values() for s in m})
    index = {sid: j for j, sid in enumerate(scenarios)}
    counts, signs = draws(len(index), resamples, resamples, seed)
    rows: dict[str, dict[str, Any]] = {}
    pvalues: dict[str, float | None] = {}
    for m in metrics:
        va = values.get(a, {}).get(m.name, {})
        vb = values.get(b, {}).get(m.name, {})
        xa = np.full((1, len(index)), np.nan)
        xb = np.full((1, len(index)), np.nan)
        for sid, v in va.items():
            if sid in index:
                xa[0, index[sid]] = v
        for sid, v in vb.items():
            if sid in index:
                xb[0, index[sid]] = v
        row = paired_rows(xa, xb, counts, signs, m.binary)[0]
        shared = [sid for sid in scenarios if sid in va and sid in vb]
        row["correlation"] = pearson([va[s] for s in shared], [vb[s] for s in shared])
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
    universe = sorted({i["scenario_id"] for i in items})  # the units every contrast resamples
    by_cat: dict[str, set[str]] = defaultdict(set)
    for item in items:
        by_cat[item.get("category") or "uncategorised"].add(item["scenario_id"])
    return {
        "format_version": ScoredPanel.FORMAT,
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
        "scenarios": len(universe),
        "counts": counts(items, conditions),
        "overall": panel_table(values, conditions, metrics),
        "by_category": {
            cat: panel_table(values, conditions, metrics, keep=sids)
            for cat, sids in sorted(by_cat.items())
        },
        "paired": [
            paired_contrast(values, a, b, metrics, bootstrap, seed, scenarios=universe)
            for a, b in pairs
        ],
        "settings": {"bootstrap": bootstrap, "seed": seed, "ci_level": 0.95, "unit": "scenario"},
        "scoring_policy": scoring_policy,
    }

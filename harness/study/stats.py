"""Statistics of a study: models compared on the same items, with the scenario as the unit.

Design (paper section 3.5, extended to several models): every model answers every scenario
under every condition, `k` times. Replicates are averaged within (scenario, condition) first
(`harness.evaluation.stats.scenario_values`), so the unit of every interval and test is the scenario,
and a scenario answered three times weighs as much as one answered once.

* Panel: each model's mean per condition and metric, its standard error
  (`harness.evaluation.stats.summary`), and a percentile bootstrap interval over scenarios.
* Paired model-versus-model deltas (a - b) over the scenarios where both models have the
  metric defined: bootstrap interval; exact McNemar (`harness.evaluation.stats.mcnemar_exact`) for a
  binary metric whose paired values are all 0/1, otherwise a paired sign-flip permutation
  test (exact up to `EXACT_SIGN_FLIP_MAX_N` pairs, else Monte Carlo with the add-one
  estimate, or Hoeffding's bound on the exact p-value where that is smaller, see
  `hoeffding_bound`); Holm (`harness.evaluation.stats.holm`) across the comparisons of a family (the
  whole study by default). The same rule as the single-model report's condition contrasts.
* Model x condition interaction: per scenario, model a's grounding effect (condition minus
  the baseline condition) minus model b's; the same bootstrap and sign-flip test (never
  McNemar: a difference of differences is not a pair of binary outcomes), Holm across them.
* Ranking: each model's rank in every bootstrap resample gives a 95% rank interval and the
  share of resamples in which no other model is better; a table of ranks with intervals,
  never a bare leaderboard.
* Reliability across replicates (k > 1): answer stability (the share of items whose
  recommendation is the same in every replicate, with a Wilson interval) and ICC(2,1) of each
  continuous metric (see `icc_2_1` for why that form).

The resampling is the one core in `harness.evaluation.stats` (also used by the single-model panel, the
report, the probe and the order analysis): one matrix of bootstrap counts (B resamples x N
scenarios, multinomial) is drawn once per study and shared by every model, condition and
metric (a joint bootstrap over scenarios, which is also what makes the rank intervals
coherent), and one matrix of random signs serves every permutation test. A resample's mean is
(counts . values) / (counts . defined), so an undefined value is never a zero. Everything is
a pure function of the data and `seed`: adding a model or a metric never moves another's
numbers (beyond floating-point rounding in the batched products), since the draws depend only
on the seed and the scenario list; `harness.evaluation.stats.paired_contrast` over the same scenario list
and seed gives the same interval and p-value as a pairwise row here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from harness.evaluation.stats import (
    CI_LEVEL,
    EXACT_SIGN_FLIP_MAX_N,
    column_intervals,
    direction,
    draws,
    favorable,
    holm,
    paired_rows,
    percentile_interval,
    resampled_means,
    rng_for,
    summary,
    wilson_interval,
)
from kgbench.contract import Metric, StudyStatistics

ScenarioValues = dict[str, dict[str, dict[str, float]]]  # condition -> metric -> scenario -> v


@dataclass
class StudyData:
    """What the statistics read: per model, replicate-averaged values and per-replicate data.

    `values[model]` is `harness.evaluation.stats.scenario_values` of the model's scored items;
    `replicate_values[model][cond][metric][sid]` holds the k per-replicate values (None where
    undefined or unanswered); `answers[model][(sid, cond)]` the k recommendation keys (None
    where a replicate has no scored answer).
    """

    models: list[str]
    conditions: list[str]
    metrics: list[Metric]
    scenarios: list[str]
    values: dict[str, ScenarioValues]
    replicates: int = 1
    replicate_values: dict[str, dict[str, dict[str, dict[str, list[float | None]]]]] = field(
        default_factory=dict
    )
    answers: dict[str, dict[tuple[str, str], list[str | None]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    bootstrap: int = 10_000
    permutations: int = 10_000
    seed: int = 0
    holm_family: str = "study"  # "study" | "metric"
    interaction_baseline: str | None = None


# --- primitives of the study (the resampling core is harness.evaluation.stats) ----------------------------


def icc_2_1(y: np.ndarray) -> float | None:
    """ICC(2,1) of an n x k table (targets x replicates): two-way random effects, absolute
    agreement, single measurement (Shrout & Fleiss 1979; McGraw & Wong's ICC(A,1)).

    Why this form: the replicates of a study are crossed with the items (replicate r of every
    item is requested with seed + r, in the same pass), so a replicate effect, such as drift
    between passes or a seed that shifts every answer, is estimable; absolute agreement counts
    it against reliability, as a user relying on one sample must. Without such an effect it
    equals the one-way ICC(1,1). None when there is no variance at all (the ratio is 0/0).
    """
    n, k = y.shape
    if n < 2 or k < 2:
        return None
    return _icc_from_moments(y[None, :, :])[0]


def _icc_from_moments(y: np.ndarray) -> list[float | None]:
    """ICC(2,1) of each table in a stack (S x n x k), vectorised for the bootstrap."""
    _, n, k = y.shape
    grand = y.mean(axis=(1, 2))
    rows = y.mean(axis=2)
    cols = y.mean(axis=1)
    ssr = k * ((rows - grand[:, None]) ** 2).sum(axis=1)
    ssc = n * ((cols - grand[:, None]) ** 2).sum(axis=1)
    sst = ((y - grand[:, None, None]) ** 2).sum(axis=(1, 2))
    sse = np.maximum(sst - ssr - ssc, 0.0)
    msr, msc = ssr / (n - 1), ssc / (k - 1)
    mse = sse / ((n - 1) * (k - 1))
    den = msr + (k - 1) * mse + k * (msc - mse) / n
    out: list[float | None] = []
    for num, d in zip(msr - mse, den, strict=True):
        out.append(None if abs(d) < 1e-15 else float(max(-1.0, min(1.0, num / d))))
    return out


def ranks(scores: np.ndarray) -> np.ndarray:
    """Rank of each column in each row (1 = best, ties share the average rank); `scores` is
    already oriented so that larger is better. NaN where a score is NaN."""
    valid = ~np.isnan(scores)
    s = np.where(valid, scores, -np.inf)
    better = (s[:, None, :] > s[:, :, None]).sum(axis=2)
    ties = (s[:, None, :] == s[:, :, None]).sum(axis=2) - 1
    out = 1.0 + better + 0.5 * ties
    return np.where(valid, out, np.nan)


# --- the study --------------------------------------------------------------------------------


def _matrix(data: StudyData, cond: str, metric: str) -> np.ndarray:
    """models x scenarios, NaN where undefined (replicates already averaged)."""
    out = np.full((len(data.models), len(data.scenarios)), np.nan)
    index = {s: j for j, s in enumerate(data.scenarios)}
    for i, model in enumerate(data.models):
        for sid, v in data.values.get(model, {}).get(cond, {}).get(metric, {}).items():
            if sid in index:
                out[i, index[sid]] = v
    return out


def _apply_holm(rows: list[dict[str, Any]], family_of: Any) -> None:
    families: dict[Any, dict[str, float | None]] = {}
    for i, row in enumerate(rows):
        families.setdefault(family_of(row), {})[str(i)] = row["p"]
    for pvalues in families.values():
        for key, adjusted in holm(pvalues).items():
            rows[int(key)]["p_holm"] = adjusted
    for row in rows:
        row["holm_family_size"] = sum(1 for p in families[family_of(row)].values() if p is not None)


def compute(data: StudyData, settings: Settings | None = None) -> dict[str, Any]:
    """Every comparison of the study, as plain data (statistics.json)."""
    settings = settings or Settings()
    n = len(data.scenarios)
    counts, signs = draws(n, settings.bootstrap, settings.permutations, settings.seed)
    metrics = {m.name: m for m in data.metrics}
    panels: dict[str, dict[str, dict[str, Any]]] = {}
    ranking: dict[str, dict[str, list[dict[str, Any]]]] = {}
    pairwise: list[dict[str, Any]] = []
    matrices: dict[tuple[str, str], np.ndarray] = {}
    pairs = list(combinations(range(len(data.models)), 2))

    for cond in data.conditions:
        panels[cond], ranking[cond] = {}, {}
        for m in data.metrics:
            x = _matrix(data, cond, m.name)
            matrices[(cond, m.name)] = x
            boot = resampled_means(counts, x)  # B x models
            cells = _cells(data.models, x, boot)
            panels[cond][m.name] = cells
            pairwise += _pairwise(data.models, cond, m, x, pairs, counts, signs)
            ranking[cond][m.name] = _ranking(data.models, cells, boot, m)

    if settings.holm_family == "metric":
        _apply_holm(pairwise, lambda r: (r["condition"], r["metric"]))
    else:
        _apply_holm(pairwise, lambda r: "study")
    better = {m.name: m.higher_is_better for m in data.metrics}
    for row in pairwise:  # after Holm: favourable means a difference the test supports
        row["favorable"] = favorable(row["delta"], better[row["metric"]], row.get("p_holm"))
    for cond in data.conditions:
        for m in data.metrics:
            _mark_indistinguishable(
                ranking[cond][m.name],
                [r for r in pairwise if r["condition"] == cond and r["metric"] == m.name],
            )

    interaction = _interaction(data, settings, matrices, counts, signs, metrics)
    return {
        "format_version": StudyStatistics.FORMAT,
        "settings": {
            "bootstrap": settings.bootstrap,
            "permutations": settings.permutations,
            "seed": settings.seed,
            "ci_level": CI_LEVEL,
            "unit": "scenario",
            "holm_family": settings.holm_family,
            "exact_sign_flip_max_n": EXACT_SIGN_FLIP_MAX_N,
        },
        "models": list(data.models),
        "conditions": list(data.conditions),
        "metrics": [
            {
                "name": m.name,
                "title": m.title,
                "higher_is_better": m.higher_is_better,
                "binary": m.binary,
            }
            for m in data.metrics
        ],
        "scenarios": n,
        "replicates": data.replicates,
        "panels": panels,
        "pairwise": pairwise,
        "ranking": ranking,
        "interaction": interaction,
        "reliability": reliability(data, settings) if data.replicates > 1 else None,
    }


def _cells(models: Sequence[str], x: np.ndarray, boot: np.ndarray) -> dict[str, Any]:
    """One metric's panel under one condition: each model's summary of its defined values
    and its bootstrap interval (from `boot`, the resampled means, B x models)."""
    defined = ~np.isnan(x)
    intervals = column_intervals(boot, defined, x)
    cells: dict[str, Any] = {}
    for i, model in enumerate(models):
        cell = summary(x[i][defined[i]].tolist())
        ci = intervals[i]
        cell["ci_low"], cell["ci_high"] = ci if ci else (None, None)
        cells[model] = cell
    return cells


def _pairwise(
    models: Sequence[str],
    cond: str,
    m: Metric,
    x: np.ndarray,
    pairs: list[tuple[int, int]],
    counts: np.ndarray,
    signs: np.ndarray,
) -> list[dict[str, Any]]:
    """One metric's paired contrasts under one condition, every pair of models in `pairs`
    order, each with its direction (Holm and favourability come after, study-wide)."""
    if not pairs:
        return []
    first = np.array([i for i, _ in pairs])
    second = np.array([j for _, j in pairs])
    rows = []
    for (i, j), row in zip(
        pairs, paired_rows(x[first], x[second], counts, signs, m.binary), strict=True
    ):
        row.update(condition=cond, metric=m.name, a=models[i], b=models[j])
        row["direction"] = direction(row["delta"], m.higher_is_better)
        rows.append(row)
    return rows


def _ranking(
    models: list[str], cells: dict[str, Any], boot: np.ndarray, m: Metric
) -> list[dict[str, Any]]:
    """Models by mean with their rank, the rank's bootstrap interval and P(best).

    Only models with the metric defined somewhere are ranked; a resample in which one of
    them has no defined value (it drew none of its scenarios) is left out of the intervals."""
    sign = 1.0 if m.higher_is_better else -1.0
    ranked = [i for i, x in enumerate(models) if cells[x]["mean"] is not None]
    if not ranked:
        return []
    point = np.array([[cells[models[i]]["mean"] for i in ranked]])
    point_ranks = ranks(point * sign)[0]
    sub = boot[:, ranked]
    complete = ~np.isnan(sub).any(axis=1)
    boot_ranks = ranks(sub[complete] * sign) if complete.any() else np.empty((0, len(ranked)))
    best = boot_ranks.min(axis=1) if boot_ranks.size else np.empty(0)
    rows = []
    for k, i in enumerate(ranked):
        cell = cells[models[i]]
        r = boot_ranks[:, k] if boot_ranks.size else np.array([])
        rows.append(
            {
                "model": models[i],
                "mean": cell["mean"],
                "ci_low": cell["ci_low"],
                "ci_high": cell["ci_high"],
                "n": cell["n"],
                "rank": float(point_ranks[k]),
                "rank_low": float(np.quantile(r, 0.025, method="lower")) if r.size else None,
                "rank_high": float(np.quantile(r, 0.975, method="higher")) if r.size else None,
                "p_best": float(np.mean(r == best)) if r.size else None,
                "indistinguishable_from": [],
            }
        )
    rows.sort(key=lambda row: (row["rank"], row["model"]))
    return rows


def _mark_indistinguishable(rows: list[dict[str, Any]], tests: list[dict[str, Any]]) -> None:
    """Each model's list of models it is not told apart from (Holm-adjusted p >= 0.05)."""
    by_model = {row["model"]: row for row in rows}
    for t in tests:
        told_apart = t["p_holm"] is not None and t["p_holm"] < 0.05
        if not told_apart and t["a"] in by_model and t["b"] in by_model:
            by_model[t["a"]]["indistinguishable_from"].append(t["b"])
            by_model[t["b"]]["indistinguishable_from"].append(t["a"])
    for row in rows:
        row["indistinguishable_from"].sort()


def _interaction(
    data: StudyData,
    settings: Settings,
    matrices: dict[tuple[str, str], np.ndarray],
    counts: np.ndarray,
    signs: np.ndarray,
    metrics: dict[str, Metric],
) -> dict[str, Any] | None:
    """Does grounding help one model more than another? Per condition X (vs the baseline R),
    metric and model pair: mean over scenarios of (a_X - a_R) - (b_X - b_R)."""
    base = settings.interaction_baseline or (data.conditions[0] if data.conditions else None)
    others = [c for c in data.conditions if c != base]
    if base is None or not others or len(data.models) < 2:
        return None
    effects: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for cond in others:
        for name, m in metrics.items():
            e = matrices[(cond, name)] - matrices[(base, name)]  # models x scenarios
            boot = resampled_means(counts, e)
            defined = ~np.isnan(e)
            intervals = column_intervals(boot, defined, e)
            for i, model in enumerate(data.models):
                values = e[i][defined[i]]
                ci = intervals[i]
                effects.append(
                    {
                        "condition": cond,
                        "metric": name,
                        "model": model,
                        "n": int(values.size),
                        "effect": float(values.mean()) if values.size else None,
                        "ci_low": ci[0] if ci else None,
                        "ci_high": ci[1] if ci else None,
                    }
                )
            pairs = list(combinations(range(len(data.models)), 2))
            first = np.array([i for i, _ in pairs])
            second = np.array([j for _, j in pairs])
            paired = paired_rows(e[first], e[second], counts, signs, m.binary, allow_mcnemar=False)
            for (i, j), row in zip(pairs, paired, strict=True):
                row.update(
                    condition=cond,
                    baseline=base,
                    metric=name,
                    a=data.models[i],
                    b=data.models[j],
                )
                row["effect_a"], row["effect_b"] = row.pop("mean_a"), row.pop("mean_b")
                rows.append(row)
    _apply_holm(rows, lambda r: "interaction")
    return {"baseline": base, "effects": effects, "rows": rows}


# --- reliability ------------------------------------------------------------------------------


def reliability(data: StudyData, settings: Settings) -> dict[str, Any]:
    """Answer stability and ICC(2,1) per model (only meaningful with replicates > 1)."""
    stability: dict[str, Any] = {}
    for model in data.models:
        answers = data.answers.get(model, {})
        per: dict[str, Any] = {}
        pooled = [0, 0]
        for cond in data.conditions:
            items = [keys for (sid, c), keys in sorted(answers.items()) if c == cond]
            complete = [keys for keys in items if all(k is not None for k in keys)]
            stable = sum(1 for keys in complete if len(set(keys)) == 1)
            per[cond] = _share(stable, len(complete), len(items) - len(complete))
            pooled[0] += stable
            pooled[1] += len(complete)
        per["all"] = _share(pooled[0], pooled[1], None)
        stability[model] = per
    icc: dict[str, Any] = {}
    rng = rng_for(settings.seed, "icc")
    continuous = [m for m in data.metrics if not m.binary]
    for model in data.models:
        icc[model] = {}
        for m in continuous:
            icc[model][m.name] = {}
            for cond in data.conditions:
                reps = data.replicate_values.get(model, {}).get(cond, {}).get(m.name, {})
                table = [
                    v
                    for _, v in sorted(reps.items())
                    if len(v) == data.replicates and None not in v
                ]
                icc[model][m.name][cond] = _icc_entry(np.array(table, dtype=float), settings, rng)
    return {"replicates": data.replicates, "stability": stability, "icc": icc}


def _share(stable: int, n: int, incomplete: int | None) -> dict[str, Any]:
    ci = wilson_interval(stable, n)
    out: dict[str, Any] = {
        "stable": stable,
        "n": n,
        "share": stable / n if n else None,
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
    }
    if incomplete is not None:
        out["incomplete"] = incomplete
    return out


def _icc_entry(y: np.ndarray, settings: Settings, rng: np.random.Generator) -> dict[str, Any]:
    if y.ndim != 2 or y.shape[0] < 2 or y.shape[1] < 2:
        return {
            "icc": None,
            "n": int(y.shape[0]) if y.ndim == 2 else 0,
            "ci_low": None,
            "ci_high": None,
        }
    n = y.shape[0]
    point = icc_2_1(y)
    resamples = min(settings.bootstrap, 2000)
    values: list[float] = []
    for start in range(0, resamples, 500):  # chunks keep the stack small for large n
        idx = rng.integers(0, n, size=(min(500, resamples - start), n))
        values += [v for v in _icc_from_moments(y[idx]) if v is not None]
    ci = percentile_interval(np.array(values)) if values and point is not None else None
    return {
        "icc": point,
        "n": n,
        "k": int(y.shape[1]),
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "bootstrap": resamples,
    }


# --- assembling the data from a scored run ------------------------------------------------------


def study_data(
    models: Sequence[str],
    conditions: Sequence[str],
    metrics: Sequence[Metric],
    scenarios: Sequence[str],
    items: dict[str, list[dict[str, Any]]],
    replicates: int,
    policy: str,
    answers: dict[str, dict[tuple[str, str], list[str | None]]] | None = None,
) -> StudyData:
    """StudyData from each model's scored items (scores/<model>/items.jsonl)."""
    from harness.evaluation.stats import scenario_values

    values = {m: scenario_values(items[m], metrics, policy) for m in models}
    per_rep: dict[str, Any] = {}
    for model in models:
        table: dict[str, dict[str, dict[str, list[float | None]]]] = {}
        for item in items[model]:
            cond, sid, rep = item["condition"], item["scenario_id"], item["replicate"]
            if rep >= replicates:
                continue
            usable = item.get("status") == "scored" and not (
                policy == "per_protocol" and item.get("parse_status") == "unparseable"
            )
            for m in metrics:
                slot = table.setdefault(cond, {}).setdefault(m.name, {})
                row = slot.setdefault(sid, [None] * replicates)
                row[rep] = item["scores"].get(m.name) if usable else None
        per_rep[model] = table
    return StudyData(
        models=list(models),
        conditions=list(conditions),
        metrics=list(metrics),
        scenarios=list(scenarios),
        values=values,
        replicates=replicates,
        replicate_values=per_rep,
        answers=answers or {},
    )

"""The study statistics against scipy and statsmodels (reference implementations, tests only),
against the single-model contrast code they share a definition with, and for determinism."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from harness.evaluation.stats import hoeffding_bound, paired_contrast, sign_flip_p, wilson_interval
from harness.study.stats import Settings, StudyData, compute, icc_2_1, ranks
from kgbench.contract import Metric, MetricPanel

CARDIO_PANEL = Path(__file__).resolve().parents[2] / "generated" / "cardio" / MetricPanel.PATH
BINARY = Metric(
    name="acc",
    title="Accuracy",
    kind="intervention_match",
    response_field="r",
    gold_field="g",
    defined_when="always",
    higher_is_better=True,
    binary=True,
)
SCORE = Metric(
    name="f1",
    title="F1",
    kind="set_f1",
    response_field="r",
    gold_field="g",
    defined_when="always",
    higher_is_better=True,
    binary=False,
)
RATE = Metric(
    name="bad",
    title="Bad rate",
    kind="unsupported_claims",
    response_field="r",
    gold_field="g",
    defined_when="always",
    higher_is_better=False,
    binary=False,
)


def synthetic(
    models: dict[str, tuple[float, float]],
    conditions: tuple[str, ...] = ("C1", "C2"),
    n: int = 80,
    seed: int = 1,
    missing: float = 0.0,
) -> StudyData:
    """models: name -> (accuracy, f1 level); values per scenario with a scenario effect, so
    the pairing matters (as it does with real items)."""
    rng = random.Random(seed)
    sids = [f"S{i:03d}" for i in range(n)]
    difficulty = {s: rng.gauss(0, 0.15) for s in sids}
    values: dict = {}
    for name, (acc, level) in models.items():
        per = values.setdefault(name, {})
        for c_i, cond in enumerate(conditions):
            lift = 0.05 * c_i
            per[cond] = {
                "acc": {s: float(rng.random() < acc + lift) for s in sids},
                "f1": {
                    s: min(1.0, max(0.0, level + lift + difficulty[s] + rng.gauss(0, 0.1)))
                    for s in sids
                    if rng.random() >= missing
                },
                "bad": {s: min(1.0, max(0.0, 0.5 - level / 2 + rng.gauss(0, 0.1))) for s in sids},
            }
    return StudyData(list(models), list(conditions), [BINARY, SCORE, RATE], sids, values)


def row(out: dict, cond: str, metric: str, a: str, b: str) -> dict:
    return next(
        r
        for r in out["pairwise"]
        if (r["condition"], r["metric"], r["a"], r["b"]) == (cond, metric, a, b)
    )


def paired_arrays(data: StudyData, cond: str, metric: str, a: str, b: str):
    va, vb = data.values[a][cond][metric], data.values[b][cond][metric]
    shared = sorted(set(va) & set(vb))
    return np.array([va[s] for s in shared]), np.array([vb[s] for s in shared])


@pytest.fixture(scope="module")
def study() -> tuple[StudyData, dict]:
    data = synthetic({"A": (0.9, 0.8), "B": (0.6, 0.6), "C": (0.6, 0.6)}, missing=0.1)
    return data, compute(data, Settings(bootstrap=10_000, permutations=10_000, seed=3))


def test_mcnemar_is_statsmodels_exact_test(study) -> None:
    data, out = study
    for a, b in (("A", "B"), ("B", "C")):
        r = row(out, "C1", "acc", a, b)
        xa, xb = paired_arrays(data, "C1", "acc", a, b)
        table = [
            [int(np.sum((xa == 1) & (xb == 1))), int(np.sum((xa == 1) & (xb == 0)))],
            [int(np.sum((xa == 0) & (xb == 1))), int(np.sum((xa == 0) & (xb == 0)))],
        ]
        assert r["test"] == "mcnemar_exact"
        assert r["p"] == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
        assert (r["discordant"]["a_only"], r["discordant"]["b_only"]) == (table[0][1], table[1][0])


def test_holm_is_statsmodels_holm_over_the_whole_study(study) -> None:
    _, out = study
    tested = [r for r in out["pairwise"] if r["p"] is not None]
    _, adjusted, _, _ = multipletests([r["p"] for r in tested], method="holm")
    assert [r["p_holm"] for r in tested] == pytest.approx(list(adjusted), rel=1e-12)
    assert {r["holm_family_size"] for r in tested} == {len(tested)}


def test_holm_per_metric_family() -> None:
    data = synthetic({"A": (0.9, 0.8), "B": (0.6, 0.6), "C": (0.5, 0.5)})
    out = compute(data, Settings(bootstrap=500, permutations=500, seed=1, holm_family="metric"))
    for cond in data.conditions:
        for metric in ("acc", "f1", "bad"):
            family = [
                r for r in out["pairwise"] if r["condition"] == cond and r["metric"] == metric
            ]
            _, adjusted, _, _ = multipletests([r["p"] for r in family], method="holm")
            assert [r["p_holm"] for r in family] == pytest.approx(list(adjusted), rel=1e-12)


def test_sign_flip_is_scipy_exact_permutation_test_for_small_n() -> None:
    rng = np.random.default_rng(4)
    for n in (3, 7, 12):
        x, y = rng.random(n), rng.random(n) * 0.8
        ref = sps.permutation_test(
            (x, y),
            lambda a, b: np.mean(a - b),
            permutation_type="samples",
            n_resamples=np.inf,
            alternative="two-sided",
        )
        assert sign_flip_p(x - y, None) == pytest.approx(ref.pvalue, rel=1e-9)


def test_hoeffding_bound_never_falls_below_the_exact_p_value() -> None:
    rng = np.random.default_rng(6)
    for n in (5, 9, 12):
        for shift in (0.0, 0.2, 0.5, 1.0):
            d = rng.normal(shift, 0.5, n)
            exact = sps.permutation_test(
                (d,),
                lambda x, axis: np.mean(x, axis=axis),
                permutation_type="samples",
                n_resamples=np.inf,
                vectorized=True,
            ).pvalue
            assert hoeffding_bound(d) >= exact - 1e-12


def test_monte_carlo_sign_flip_agrees_with_scipy_exact(study) -> None:
    """n = 18 pairs: exact reference over all 2**18 sign patterns; ours by Monte Carlo."""
    data, _ = study
    small = StudyData(
        ["A", "B"],
        ["C1"],
        [SCORE],
        data.scenarios[:18],
        {
            m: {
                "C1": {
                    "f1": {
                        s: data.values[m]["C1"]["f1"].get(s, 0.5) - (0.03 if m == "B" else 0)
                        for s in data.scenarios[:18]
                    }
                }
            }
            for m in ("A", "B")
        },
    )
    out = compute(small, Settings(bootstrap=1000, permutations=100_000, seed=2))
    r = row(out, "C1", "f1", "A", "B")
    xa, xb = paired_arrays(small, "C1", "f1", "A", "B")
    ref = sps.permutation_test(
        (xa, xb),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    assert r["test"] == "sign_flip_permutation" and r["n"] == 18
    assert r["p"] == pytest.approx(ref.pvalue, abs=0.005)


def test_bootstrap_interval_agrees_with_scipy_percentile_bootstrap(study) -> None:
    data, out = study
    for metric, (a, b) in (("f1", ("A", "B")), ("bad", ("B", "C")), ("acc", ("A", "C"))):
        r = row(out, "C2", metric, a, b)
        xa, xb = paired_arrays(data, "C2", metric, a, b)
        ref = sps.bootstrap(
            (xa - xb,),
            np.mean,
            method="percentile",
            n_resamples=20_000,
            rng=np.random.default_rng(0),
        ).confidence_interval
        assert r["delta"] == pytest.approx(float(np.mean(xa - xb)), abs=1e-12)
        assert r["ci_low"] == pytest.approx(ref.low, abs=0.01)
        assert r["ci_high"] == pytest.approx(ref.high, abs=0.01)


def test_panel_interval_agrees_with_scipy_and_standard_error_with_scipy_sem(study) -> None:
    data, out = study
    values = np.array(list(data.values["B"]["C1"]["f1"].values()))
    cell = out["panels"]["C1"]["f1"]["B"]
    ref = sps.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=20_000, rng=np.random.default_rng(1)
    ).confidence_interval
    assert cell["n"] == values.size and cell["mean"] == pytest.approx(values.mean(), abs=1e-12)
    assert cell["se"] == pytest.approx(sps.sem(values), rel=1e-9)
    assert (cell["ci_low"], cell["ci_high"]) == pytest.approx((ref.low, ref.high), abs=0.01)


def test_same_contrast_same_numbers_as_the_single_model_panel(study) -> None:
    """One resampling core: the panel's paired contrast over the same scenario list and seed
    gives the study's pairwise row exactly (delta, interval, test and p), not merely within
    Monte Carlo error. Only the Holm family differs (the study adjusts across the study)."""
    data, out = study
    metrics = [BINARY, SCORE, RATE]
    per = {"A": data.values["A"]["C2"], "B": data.values["B"]["C2"]}
    ref = paired_contrast(per, "A", "B", metrics, 10_000, 3, scenarios=data.scenarios)["metrics"]
    tested = set()
    for m in metrics:
        ours = row(out, "C2", m.name, "A", "B")
        theirs = ref[m.name]
        assert (ours["n"], ours["test"], ours["discordant"]) == (
            theirs["n"],
            theirs["test"],
            theirs["discordant"],
        )
        for key in ("delta", "mean_a", "mean_b", "ci_low", "ci_high"):
            assert ours[key] == pytest.approx(theirs[key], abs=1e-12), key
        assert ours["p"] == theirs["p"]
        tested.add(ours["test"])
    assert tested == {"mcnemar_exact", "sign_flip_permutation"}  # both tests compared


SHROUT_FLEISS = np.array(  # Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
    dtype=float,
)


def icc_from_statsmodels_anova(y: np.ndarray) -> float:
    n, k = y.shape
    frame = pd.DataFrame(
        [(i, j, y[i, j]) for i in range(n) for j in range(k)], columns=["t", "j", "y"]
    )
    table = anova_lm(ols("y ~ C(t) + C(j)", data=frame).fit())
    ms = table["sum_sq"] / table["df"]
    msr, msc, mse = ms["C(t)"], ms["C(j)"], ms["Residual"]
    return (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)


def test_icc_2_1_reproduces_shrout_fleiss_and_statsmodels_anova() -> None:
    assert icc_2_1(SHROUT_FLEISS) == pytest.approx(0.2898, abs=5e-4)  # the paper's .29
    assert icc_2_1(SHROUT_FLEISS) == pytest.approx(
        icc_from_statsmodels_anova(SHROUT_FLEISS), rel=1e-10
    )
    rng = np.random.default_rng(9)
    target = rng.random((40, 1))
    y = target + rng.normal(0, 0.2, (40, 3)) + np.array([0.0, 0.1, -0.05])
    assert icc_2_1(y) == pytest.approx(icc_from_statsmodels_anova(y), rel=1e-10)


def test_icc_edges() -> None:
    assert icc_2_1(np.ones((5, 3))) is None  # no variance at all: undefined, not 0 or 1
    assert icc_2_1(np.repeat(np.arange(5.0)[:, None], 3, axis=1)) == pytest.approx(1.0)
    assert icc_2_1(np.ones((1, 3))) is None


def test_wilson_interval_is_statsmodels_wilson() -> None:
    for k, n in ((0, 10), (3, 10), (10, 10), (57, 80)):
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert wilson_interval(k, n) == pytest.approx((lo, hi), abs=1e-9)
    assert wilson_interval(0, 0) is None


def test_ranks_average_ties_like_scipy() -> None:
    scores = np.array([[0.9, 0.5, 0.5, 0.1], [0.2, 0.2, 0.2, 0.7]])
    expected = [sps.rankdata(-row) for row in scores]
    assert ranks(scores).tolist() == [list(e) for e in expected]


def test_large_gaps_are_significant_and_identical_models_are_not(study) -> None:
    _, out = study
    big = row(out, "C1", "f1", "A", "B")
    assert big["ci_low"] > 0 and big["p_holm"] < 0.001 and big["favorable"] == "yes"
    same = row(out, "C1", "f1", "B", "C")  # same generating levels, independent noise
    assert same["ci_low"] < 0 < same["ci_high"]
    ranking = {r["model"]: r for r in out["ranking"]["C1"]["f1"]}
    assert ranking["A"]["rank"] == 1 and ranking["A"]["rank_high"] == 1
    assert ranking["A"]["p_best"] > 0.99
    assert "C" in ranking["B"]["indistinguishable_from"]
    assert "A" not in ranking["B"]["indistinguishable_from"]


def test_exactly_identical_models_give_a_zero_delta() -> None:
    data = synthetic({"A": (0.7, 0.6), "B": (0.5, 0.5)})
    data.models.append("A2")
    data.values["A2"] = json.loads(json.dumps(data.values["A"]))
    out = compute(data, Settings(bootstrap=1000, permutations=1000, seed=0))
    for metric in ("acc", "f1", "bad"):
        r = row(out, "C2", metric, "A", "A2")
        assert r["delta"] == 0 and r["ci_low"] == 0 == r["ci_high"]
        assert r["p"] == 1.0 and r["favorable"] == "no change"


def test_lower_is_better_metric_ranks_and_favours_the_lower_value(study) -> None:
    _, out = study
    top = out["ranking"]["C1"]["bad"][0]
    assert top["model"] == "A"  # A's rate is the lowest
    assert row(out, "C1", "bad", "A", "B")["favorable"] == "yes"


def test_interaction_is_the_difference_of_grounding_effects() -> None:
    # A gains 0.3 under C2 on every scenario, B gains nothing: an interaction of 0.3
    sids = [f"S{i:02d}" for i in range(30)]
    rng = random.Random(0)
    base = {s: rng.random() * 0.5 for s in sids}
    values = {
        "A": {"C1": {"f1": dict(base)}, "C2": {"f1": {s: v + 0.3 for s, v in base.items()}}},
        "B": {"C1": {"f1": dict(base)}, "C2": {"f1": dict(base)}},
    }
    data = StudyData(["A", "B"], ["C1", "C2"], [SCORE], sids, values)
    out = compute(data, Settings(bootstrap=1000, permutations=1000, seed=0))
    inter = out["interaction"]
    r = inter["rows"][0]
    assert (inter["baseline"], r["condition"], r["a"], r["b"]) == ("C1", "C2", "A", "B")
    assert r["delta"] == pytest.approx(0.3) and r["ci_low"] == pytest.approx(0.3)
    assert r["effect_a"] == pytest.approx(0.3) and r["effect_b"] == 0
    assert r["test"] == "sign_flip_permutation" and r["p"] < 0.001
    effects = {(e["model"], e["metric"]): e["effect"] for e in inter["effects"]}
    assert effects[("A", "f1")] == pytest.approx(0.3)


def test_reliability_stability_and_icc() -> None:
    sids = [f"S{i:02d}" for i in range(20)]
    data = StudyData(
        ["steady", "flaky"],
        ["C1"],
        [SCORE],
        sids,
        {m: {"C1": {"f1": dict.fromkeys(sids, 0.5)}} for m in ("steady", "flaky")},
        replicates=3,
        replicate_values={
            "steady": {"C1": {"f1": {s: [i / 20] * 3 for i, s in enumerate(sids)}}},
            "flaky": {"C1": {"f1": {s: [0.1, 0.9, 0.5] for s in sids}}},
        },
        answers={
            "steady": {(s, "C1"): ["DRG_1"] * 3 for s in sids},
            "flaky": {
                (s, "C1"): ["DRG_1", "DRG_2", "DRG_1"] if i % 2 else ["DRG_3"] * 3
                for i, s in enumerate(sids)
            }
            | {("S00", "C1"): ["DRG_1", None, "DRG_1"]},
        },
    )
    out = compute(data, Settings(bootstrap=500, permutations=500, seed=0))
    rel = out["reliability"]
    assert rel["stability"]["steady"]["C1"]["share"] == 1.0
    flaky = rel["stability"]["flaky"]["C1"]
    assert (flaky["stable"], flaky["n"], flaky["incomplete"]) == (9, 19, 1)
    assert rel["icc"]["steady"]["f1"]["C1"]["icc"] == pytest.approx(1.0)
    # every scenario has the same three values: all variance is the replicate effect
    assert rel["icc"]["flaky"]["f1"]["C1"]["icc"] == pytest.approx(0.0, abs=1e-12)


def test_no_reliability_section_with_one_replicate(study) -> None:
    assert study[1]["reliability"] is None


def test_deterministic_given_the_seed_and_stable_when_a_model_is_added() -> None:
    data = synthetic({"A": (0.8, 0.7), "B": (0.6, 0.6)}, missing=0.1)
    settings = Settings(bootstrap=2000, permutations=2000, seed=11)
    first = json.dumps(compute(data, settings), sort_keys=True)
    assert json.dumps(compute(data, settings), sort_keys=True) == first
    other = compute(data, Settings(bootstrap=2000, permutations=2000, seed=12))
    assert json.dumps(other, sort_keys=True) != first
    bigger = synthetic({"A": (0.8, 0.7), "B": (0.6, 0.6)}, missing=0.1)
    bigger.models.append("Z")
    bigger.values["Z"] = synthetic({"Z": (0.3, 0.3)}, seed=5).values["Z"]
    with_z = compute(bigger, settings)
    before = row(json.loads(first), "C2", "f1", "A", "B")
    after = row(with_z, "C2", "f1", "A", "B")
    for key in ("ci_low", "ci_high", "p"):  # the same draws; only float rounding may differ
        assert after[key] == pytest.approx(before[key], rel=1e-12, abs=1e-15)


def test_default_panel_metrics_run_end_to_end() -> None:
    """The real metric panel (10 metrics, some undefined per scenario) in the study code."""
    metrics = MetricPanel.model_validate_json(CARDIO_PANEL.read_text(encoding="utf-8")).metrics
    rng = random.Random(2)
    sids = [f"S{i:02d}" for i in range(40)]
    values = {
        m: {
            c: {
                x.name: {
                    s: float(rng.random() < 0.6) if x.binary else rng.random()
                    for s in sids
                    if x.binary or rng.random() < 0.7
                }
                for x in metrics
            }
            for c in ("C1", "C4")
        }
        for m in ("A", "B", "C")
    }
    data = StudyData(["A", "B", "C"], ["C1", "C4"], list(metrics), sids, values)
    out = compute(data, Settings(bootstrap=500, permutations=500, seed=0))
    assert len(out["pairwise"]) == 3 * 2 * len(metrics)
    assert len(out["interaction"]["rows"]) == 3 * len(metrics)
    assert all(r["p_holm"] is not None for r in out["pairwise"])

"""Statistics: known values of the tests, and the panel's unit of analysis (the scenario)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.evaluation.stats import (
    bootstrap_ci,
    build_panel,
    holm,
    mcnemar_exact,
    pearson,
    sign_flip_p,
    summary,
)
from kgbench.contract import Metric

ACC = Metric(
    name="acc",
    title="Accuracy",
    kind="boolean_match",
    response_field="x",
    gold_field="y",
    defined_when="always",
    higher_is_better=True,
    binary=True,
)
F1 = Metric(
    name="f1",
    title="F1",
    kind="set_f1",
    response_field="x",
    gold_field="y",
    defined_when="both_nonempty",
    higher_is_better=True,
    binary=False,
)
RATE = Metric(
    name="rate",
    title="Rate",
    kind="unsupported_claims",
    response_field="x",
    gold_field="y",
    defined_when="always",
    higher_is_better=False,
    binary=False,
)


def test_mcnemar_exact_matches_the_binomial_test():
    assert mcnemar_exact([(1, 0)] * 5) == (0.0625, 5, 0)
    p, b, c = mcnemar_exact([(1, 0)] * 10 + [(0, 1)] * 2 + [(1, 1)] * 30)
    assert (b, c) == (10, 2)
    assert p == pytest.approx(2 * (1 + 12 + 66) / 4096)  # scipy binomtest(2, 12): 0.03857
    assert mcnemar_exact([(1, 1), (0, 0)])[0] == 1.0
    assert mcnemar_exact([(1, 0), (0, 1)])[0] == 1.0


def test_holm_step_down():
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": None})
    assert adjusted["a"] == pytest.approx(0.03)
    assert adjusted["c"] == pytest.approx(0.06)
    assert adjusted["b"] == pytest.approx(0.06)  # monotone: never below an earlier step
    assert adjusted["d"] is None
    assert holm({"a": 0.6, "b": 0.9}) == {"a": 1.0, "b": 1.0}


def test_pearson_and_summary():
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert pearson([1, 1, 1], [1, 2, 3]) is None
    assert pearson([1, 2], [1, 2]) is None
    assert summary([0.0, 1.0]) == {"mean": 0.5, "n": 2, "se": pytest.approx(0.5)}
    assert summary([0.7]) == {"mean": 0.7, "n": 1, "se": None}
    assert summary([]) == {"mean": None, "n": 0, "se": None}


def _signs(n: int, seed: int = 0, resamples: int = 2000):
    from harness.evaluation.stats import random_signs, rng_for

    return random_signs(n, resamples, rng_for(seed, "signs"))


def test_sign_flip_exact_and_monte_carlo():
    assert sign_flip_p([1.0, 1.0, 1.0], _signs(3)) == 0.25  # exact: 2 of 8 patterns
    assert sign_flip_p([0.0, 0.0], _signs(2)) == 1.0
    deltas = np.full(20, 0.5)
    p = sign_flip_p(deltas, _signs(20, 1))
    # no resample reaches the all-positive sum, so the Monte Carlo estimate sits at its floor
    # 1/2001; Hoeffding's bound 2 exp(-10^2 / (2 * 5)) is smaller and valid, and is reported
    assert p == pytest.approx(min(1 / 2001, 2 * math.exp(-10.0)))
    noise = np.array([(-1) ** i * 0.3 for i in range(30)])
    assert sign_flip_p(noise, _signs(30, 2)) > 0.5


def test_bootstrap_interval_is_seeded_and_sane():
    deltas = [0.1 * (i % 7) - 0.2 for i in range(40)]
    a = bootstrap_ci(deltas, 2000, 0, "x")
    b = bootstrap_ci(deltas, 2000, 0, "x")
    assert a == b
    assert bootstrap_ci(deltas, 2000, 0, "y") != a  # another purpose, another stream
    mean = sum(deltas) / len(deltas)
    assert a[0] < mean < a[1]
    se = math.sqrt(sum((d - mean) ** 2 for d in deltas) / (len(deltas) - 1) / len(deltas))
    assert a[1] - a[0] == pytest.approx(2 * 1.96 * se, rel=0.2)
    assert bootstrap_ci([0.4] * 5, 100, 0, "x") == (
        pytest.approx(0.4),
        pytest.approx(0.4),
    )
    assert bootstrap_ci([0.7], 100, 0, "x") == (0.7, 0.7)
    assert bootstrap_ci([], 100, 0, "x") is None


def _item(sid, cond, rep, status="scored", cat="direct_effect", **scores):
    item = {
        "scenario_id": sid,
        "condition": cond,
        "replicate": rep,
        "status": status,
        "category": cat,
    }
    if status == "scored":
        item.update(parse_ok=True, schema_ok=True, unknown_ids=[], scores=scores)
    return item


def test_panel_averages_replicates_and_keeps_failures_apart():
    items = [
        _item("S1", "C2", 0, acc=1.0, f1=0.5, rate=0.0),
        _item("S1", "C2", 1, acc=0.0, f1=None, rate=0.5),
        _item("S1", "C4", 0, acc=1.0, f1=1.0, rate=0.0),
        _item("S1", "C4", 1, acc=1.0, f1=1.0, rate=0.0),
        _item("S2", "C2", 0, acc=0.0, f1=0.0, rate=1.0),
        _item("S2", "C2", 1, status="failed"),
        _item("S2", "C4", 0, status="missing"),
        _item("S2", "C4", 1, acc=1.0, f1=0.5, rate=0.0, cat="x"),
    ]
    panel = build_panel(items, [ACC, F1, RATE], ["C2", "C4"], pairs=[("C4", "C2")], bootstrap=200)
    c2 = panel["overall"]["C2"]
    assert c2["acc"]["n"] == 2 and c2["acc"]["mean"] == pytest.approx((0.5 + 0.0) / 2)
    assert c2["f1"]["mean"] == pytest.approx((0.5 + 0.0) / 2)  # undefined replicate skipped
    assert panel["counts"]["C2"] == {
        "expected": 4,
        "scored": 3,
        "missing": 0,
        "failed": 1,
        "parse_failures": 0,
        "unparseable": 0,
        "unknown_id_responses": 0,
    }
    assert panel["counts"]["C4"]["missing"] == 1
    acc_cell = panel["overall"]["C4"]["acc"]
    assert {k: acc_cell[k] for k in ("mean", "n", "se", "interval")} == {
        "mean": 1.0,
        "n": 2,
        "se": 0.0,
        "interval": "wilson",  # binary, one 0/1 value per scenario: 2/2 is not certainty
    }
    assert acc_cell["ci_low"] == pytest.approx(0.3424, abs=1e-4) and acc_cell["ci_high"] == 1.0
    pair = panel["paired"][0]
    assert (pair["a"], pair["b"]) == ("C4", "C2")
    acc = pair["metrics"]["acc"]
    assert acc["delta"] == pytest.approx(((1 - 0.5) + (1 - 0.0)) / 2)
    assert acc["test"] == "sign_flip_permutation"  # replicate means are not 0/1
    rate = pair["metrics"]["rate"]
    assert rate["delta"] < 0 and rate["direction"] == "better"  # lower is better
    assert rate["favorable"] == "not significant"  # two scenarios: the sign is not a finding
    assert set(panel["by_category"]) == {"direct_effect", "x"}


def test_binary_metric_without_replicates_uses_mcnemar():
    items = []
    for i in range(12):
        items.append(_item(f"S{i}", "C2", 0, acc=float(i < 3)))
        items.append(_item(f"S{i}", "C4", 0, acc=float(i < 11)))
    panel = build_panel(items, [ACC], ["C2", "C4"], bootstrap=500, seed=3)
    acc = panel["paired"][0]["metrics"]["acc"]
    assert acc["test"] == "mcnemar_exact" and acc["discordant"] == {"a_only": 8, "b_only": 0}
    assert acc["p"] == pytest.approx(2 / 2**8)
    assert acc["p_holm"] == acc["p"]
    again = build_panel(items, [ACC], ["C2", "C4"], bootstrap=500, seed=3)
    assert again == panel

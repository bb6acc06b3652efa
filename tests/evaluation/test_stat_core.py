"""One statistics core (issue 32, item 5): the bootstrap, the sign-flip test and the exact
tests are written once, in `harness.evaluation.stats`, and every command that reports an interval or a
p-value (panel, report, probe, ratings, order analysis, study) calls them. The numeric
equality of the panel and the study on the same contrast is
tests/study/test_study_stats.py::test_same_contrast_same_numbers_as_the_single_model_panel."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from harness.evaluation.stats import (
    bootstrap_ci,
    bootstrap_counts,
    column_intervals,
    paired_contrast,
    resampled_means,
    rng_for,
)
from kgbench.contract import Metric

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "harness" / "evaluation" / "stats.py"
# what writing a bootstrap, a permutation test or an exact test again would look like
RESAMPLING = re.compile(
    r"multinomial\(|\.choices\(|getrandbits\(|product\(\(1|def \w*bootstrap\w*\(|"
    r"def \w*sign_flip\w*\(|def \w*mcnemar\w*\(|def \w*hoeffding\w*\(|def \w*percentile\w*\("
)


def test_no_module_but_the_core_implements_resampling_or_an_exact_test() -> None:
    offenders = []
    for folder in ("harness", "kgbench", "compiler"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path == CORE:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if RESAMPLING.search(line):
                    offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == [], "resampling written outside harness/evaluation/stats.py:\n" + "\n".join(
        offenders
    )
    assert RESAMPLING.search(CORE.read_text(encoding="utf-8"))  # the grep sees the core itself


def test_the_probe_and_order_intervals_are_the_cores_draws() -> None:
    """bootstrap_ci is the panel's bootstrap on one series: the same counts, the same
    percentile rule."""
    values = [0.2, 0.9, 0.4, 0.4, 1.0, 0.0, 0.7]
    x = np.asarray(values)[None, :]
    counts = bootstrap_counts(len(values), 3000, rng_for(5, "probe:precision"))
    expected = column_intervals(resampled_means(counts, x), ~np.isnan(x), x)[0]
    assert bootstrap_ci(values, 3000, 5, "probe:precision") == expected


def test_the_panel_contrast_does_not_move_when_a_metric_is_added() -> None:
    """Draws depend on the seed and the scenario list only, never on the metric list."""

    def metric(name: str) -> Metric:
        return Metric(
            name=name,
            title=name,
            kind="set_f1",
            response_field="r",
            gold_field="g",
            defined_when="always",
            higher_is_better=True,
            binary=False,
        )

    rng = np.random.default_rng(0)
    sids = [f"S{i:02d}" for i in range(30)]
    values = {
        c: {m: {s: float(v) for s, v in zip(sids, rng.random(30), strict=True)} for m in "fg"}
        for c in ("C2", "C4")
    }
    alone = paired_contrast(values, "C4", "C2", [metric("f")], 2000, 1)["metrics"]["f"]
    both = paired_contrast(values, "C4", "C2", [metric("g"), metric("f")], 2000, 1)["metrics"]
    for key in ("delta", "ci_low", "ci_high", "p"):
        assert both["f"][key] == pytest.approx(alone[key], abs=1e-12)
    assert alone["test"] == "sign_flip_permutation" and alone["n"] == 30

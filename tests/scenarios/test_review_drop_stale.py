"""`kgbench review --drop-stale` never loses a verdict silently (reliability review 2026-12:
rv.drop-stale-seed99, rv.drop-stale-other-set).

Given a scenario set other than the domain's own (another seed, an older release: same ids,
other items), every verdict looks stale. Pruning lists what it removes, refuses to remove a
verdict still current in the domain's own set unless `--yes`, keeps `reviews.csv.bak`, and
rewrites the file only after the sheet is written.
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest

import harness.review.sheet
from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.review.verdicts import content_sha256
from harness.scenarios.generator import generate_file
from tests.scenarios.test_review import TOY, accept_all, review, run, write_reviews


@pytest.fixture
def toy_env(tmp_path: Path) -> dict:
    """The toy domain compiled into a private generated/ folder, with its own scenario set."""
    generated = tmp_path / "generated"
    compile_domain(TOY, out_root=generated, force=True)
    domain = CompiledDomain.open("toy", generated)
    path, records, _ = generate_file(domain)
    return {"tmp": tmp_path, "scenarios": path, "records": records, "domain": domain}


def _other_set(records: list[dict], path: Path) -> Path:
    """The same ids, every item changed (as a set generated with another seed would be)."""
    other = copy.deepcopy(records)
    for rec in other:
        rec["title"] = rec.get("title", "") + " (other set)"
    path.write_text("".join(json.dumps(r) + "\n" for r in other), encoding="utf-8")
    return path


def _ids(reviews: Path) -> list[str]:
    return [r["scenario_id"] for r in csv.DictReader(reviews.open(encoding="utf-8"))]


def test_drop_stale_with_another_set_refuses_to_remove_current_verdicts(toy_env) -> None:
    records, tmp = toy_env["records"], toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    write_reviews(reviews, accept_all(records))
    before = reviews.read_bytes()
    other = _other_set(records, tmp / "seed99.jsonl")
    code, out = run(
        "review", "-d", str(toy_env["domain"].root), "--scenarios", str(other), "--reviews", str(reviews),
        "--out", str(tmp / "s"), "--drop-stale",
    )  # fmt: skip
    assert code == 2, out
    assert f"would remove {len(records)} verdict(s)" in out and "--yes" in out
    assert records[0]["scenario_id"] in out  # what it would delete is shown
    assert reviews.read_bytes() == before  # nothing deleted
    assert not (tmp / "reviews.csv.bak").exists() and not (tmp / "s").exists()


def test_drop_stale_with_yes_removes_them_and_keeps_a_backup(toy_env) -> None:
    records, tmp = toy_env["records"], toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    write_reviews(reviews, accept_all(records))
    before = reviews.read_bytes()
    other = _other_set(records, tmp / "seed99.jsonl")
    code, out = run(
        "review", "-d", str(toy_env["domain"].root), "--scenarios", str(other), "--reviews", str(reviews),
        "--out", str(tmp / "s"), "--drop-stale", "--yes",
    )  # fmt: skip
    assert code == 0, out
    assert f"removed {len(records)} stale verdict(s)" in out
    assert _ids(reviews) == []
    assert (tmp / "reviews.csv.bak").read_bytes() == before


def test_drop_stale_of_the_own_set_lists_what_it_removes(toy_env) -> None:
    records, tmp = toy_env["records"], toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    rows = accept_all(records[:2])
    rows[1][1] = "f" * 64  # SCN_0002 was edited after its review: truly stale
    write_reviews(reviews, rows)
    code, out = review(toy_env, reviews, tmp / "s", "--drop-stale")
    assert code == 0, out
    assert "removed 1 stale verdict(s)" in out and "line 3: SCN_0002 ffffffffffff" in out
    assert _ids(reviews) == [records[0]["scenario_id"]]
    assert (tmp / "reviews.csv.bak").is_file()


def test_drop_stale_deletes_nothing_when_the_sheet_fails(toy_env, monkeypatch) -> None:
    """rv.drop-stale-other-set: reviews.csv was rewritten before the sheet crashed."""
    records, tmp = toy_env["records"], toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    rows = accept_all(records[:2])
    rows[1][1] = "f" * 64
    write_reviews(reviews, rows)
    before = reviews.read_bytes()

    def broken(*args: object, **kwargs: object) -> str:
        raise KeyError("CLS_003")

    monkeypatch.setattr(harness.review.sheet, "render_html", broken)
    with pytest.raises(KeyError):
        run_raising(reviews, tmp)
    assert reviews.read_bytes() == before and not (tmp / "reviews.csv.bak").exists()


def run_raising(reviews: Path, tmp: Path) -> None:
    from typer.testing import CliRunner

    from kgbench.cli import app

    toy = str(tmp / "generated" / "toy")
    args = ["review", "-d", toy, "--reviews", str(reviews), "--out", str(tmp / "s")]
    result = CliRunner().invoke(app, [*args, "--drop-stale"])
    if result.exception is not None:
        raise result.exception


def test_content_hash_of_the_other_set_differs(toy_env) -> None:
    """The premise of the cases above: the other set's items hash differently."""
    records, tmp = toy_env["records"], toy_env["tmp"]
    other = [json.loads(line) for line in _other_set(records, tmp / "o.jsonl").open()]
    assert content_sha256(other[0]) != content_sha256(records[0])

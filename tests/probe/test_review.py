"""Human review: rating sheets per graph, reviewers' ratings read with located errors, and
their aggregation (means with intervals, Krippendorff's alpha); the report's probe section
beside the QA panel of the same model."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from harness.probe.rating_sheets import aggregate_ratings, write_review
from harness.probe.ratings import aggregate
from harness.report import write_report
from harness.runner.api import answer_with_reference
from kgbench.errors import UserError

from .conftest import probe_once

SLUG = "ref-noisy"


@pytest.fixture
def reviewed(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    probe_once(run, "ref:noisy", limit_roots=3)
    write_review(run)
    return run


def template(run: Path) -> list[dict[str, str]]:
    path = run / "probe" / SLUG / "review" / "ratings.csv"
    return list(csv.DictReader(io.StringIO(path.read_text())))


def write_ratings(path: Path, rows: list[dict[str, str]]) -> Path:
    fields = [
        "model",
        "root_id",
        "graph_sha256",
        "reviewer",
        "accuracy",
        "comprehensiveness",
        "comment",
    ]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def filled(run: Path, scores: dict[str, list[tuple[int, int]]]) -> list[dict[str, str]]:
    rows = []
    for base in template(run):
        for reviewer, (acc, comp) in zip(("r1", "r2", "r3"), scores[base["root_id"]], strict=False):
            rows.append(
                {**base, "reviewer": reviewer, "accuracy": str(acc), "comprehensiveness": str(comp)}
            )
    return rows


def test_sheets_per_graph_are_self_contained(reviewed):
    review = reviewed / "probe" / SLUG / "review"
    roots = ["DIS_0001", "DIS_0002", "DIS_0003"]
    assert sorted(p.stem for p in review.glob("*.html")) == roots
    html = (review / "DIS_0001.html").read_text()
    assert "<script" not in html and "http" not in html.replace("http-equiv", "")
    assert "Essential hypertension" in html and "accuracy" in html
    edges = list(csv.DictReader(io.StringIO((review / "DIS_0001.csv").read_text())))
    assert edges and set(edges[0]) == {
        "cause",
        "effect",
        "cause_entity",
        "effect_entity",
        "produced_by",
    }
    assert [r["root_id"] for r in template(reviewed)] == roots


def test_ratings_aggregate_with_interval_and_krippendorff_alpha(reviewed, tmp_path):
    scores = {"DIS_0001": [(4, 3), (4, 3), (3, 3)], "DIS_0002": [(2, 1), (2, 2), (1, 1)],
              "DIS_0003": [(3, 4), (3, 4), (3, 3)]}  # fmt: skip
    path = write_ratings(tmp_path / "ratings.csv", filled(reviewed, scores))
    [(out, summary)] = aggregate_ratings(reviewed, path, None, 500, 0)
    assert out == reviewed / "probe" / SLUG / "ratings.json"
    assert summary["reviewers"] == 3 and summary["graphs"] == 3 and summary["ratings"] == 9
    acc = summary["accuracy"]
    assert acc["mean"] == pytest.approx(np.mean([11 / 3, 5 / 3, 3]))
    assert acc["ci_low"] <= acc["mean"] <= acc["ci_high"]
    data = np.array([[4, 2, 3], [4, 2, 3], [3, 1, 3]], dtype=float)  # reviewers x graphs
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal",
                                  value_domain=[1, 2, 3, 4])  # fmt: skip
    assert acc["krippendorff_alpha"] == pytest.approx(expected)
    md, _ = write_report(reviewed)
    assert "Human ratings (9 ratings by 3 reviewer(s) on 3 graph(s))" in md.read_text()


def test_alpha_is_undefined_with_one_reviewer():
    rows = [{"model": SLUG, "root_id": r, "reviewer": "r1", "accuracy": a, "comprehensiveness": 2}
            for r, a in (("A", 1), ("B", 4))]  # fmt: skip
    summary = aggregate(rows, 100, 0)
    assert summary["accuracy"]["krippendorff_alpha"] is None
    assert summary["accuracy"]["mean"] == 2.5


BAD = [
    ({"accuracy": "5"}, "field 'accuracy': expected a whole number from 1 to 4, got '5'"),
    ({"comprehensiveness": "three"}, "field 'comprehensiveness': expected a whole number"),
    ({"root_id": "DIS_9999"}, "field 'root_id': no generated graph for model"),
    ({"graph_sha256": "0" * 64}, "field 'graph_sha256': the graph changed"),
    ({"reviewer": "", "accuracy": "3"}, "field 'reviewer': expected a reviewer id"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_bad_rating_rows_name_file_line_field_and_expectation(reviewed, tmp_path, change, message):
    rows = filled(reviewed, {r: [(3, 3)] for r in ("DIS_0001", "DIS_0002", "DIS_0003")})
    rows[1] = {**rows[1], **change}
    path = write_ratings(tmp_path / "ratings.csv", rows)
    with pytest.raises(UserError) as info:
        aggregate_ratings(reviewed, path, None, 100, 0)
    assert str(info.value).startswith(f"{path}, line 3, ")
    assert message in str(info.value)


def test_duplicate_ratings_and_cli_exit_2(reviewed, tmp_path):
    rows = filled(reviewed, {r: [(3, 3)] for r in ("DIS_0001", "DIS_0002", "DIS_0003")})
    path = write_ratings(tmp_path / "ratings.csv", [*rows, rows[0]])
    result = subprocess.run(
        [sys.executable, "-c", "from kgbench.cli import app; app()", "probe-review", "--run-dir",
         str(reviewed), "--ratings", str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "line 5, field 'reviewer': reviewer 'r1' rated this graph already (line 2)" in " ".join(
        result.stderr.split()
    )


def test_report_puts_the_qa_panel_and_the_probe_side_by_side(tmp_path):
    import shutil

    from compiler.api import compile_domain
    from harness.evaluation.prompts import build_prompts
    from harness.evaluation.run_scoring import score_run

    repo = Path(__file__).resolve().parents[2]
    mini_dir = repo / "tests" / "fixtures" / "domains" / "mini"
    mini_run = repo / "tests" / "evaluation" / "fixtures" / "mini_run"

    run = tmp_path / "run"
    shutil.copytree(mini_run, run)
    mini = compile_domain(str(mini_dir), out_root=tmp_path / "gen").out_dir
    build_prompts(run, str(mini))
    answer_with_reference(run, "oracle")
    score_run(run, bootstrap=100, seed=0, domain=str(mini))
    probe_once(run, "ref:oracle", limit_roots=4)
    md, html = write_report(run)
    text = md.read_text()
    assert "QA panel and graph-generation probe, side by side" in text
    table = text[text.index("QA panel and graph-generation probe, side by side") :]
    assert "| Measure | ref:oracle |" in table  # one column per model, one row per measure
    row = next(line for line in table.splitlines() if line.startswith("| Probe precision@k"))
    from .conftest import oracle_precision

    assert f"{oracle_precision(4):.3f}" in row
    assert "Precision and recall over the path bound k" in text
    page = html.read_text()
    assert "Probe precision and recall by k" in page and "<script" not in page
    (curve,) = (run / "report" / "figures").glob("probe-*/curve.svg")  # also a standalone SVG
    assert curve.read_text().split("\n", 1)[1].strip() in page

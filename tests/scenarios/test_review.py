"""`kgbench explain`, `kgbench review`, reviews.csv and publish's review gate, end to end on
the toy domain through the real command line (and the review page in headless Chromium)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.review.verdicts import COLUMNS, content_sha256
from harness.scenarios.generator import generate_file
from kgbench.cli import app

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "tests" / "fixtures" / "domains" / "toy"


@pytest.fixture
def toy_env(tmp_path: Path) -> dict:
    """The toy domain compiled into a private generated/ folder, with its scenarios."""
    generated = tmp_path / "generated"
    compile_domain(TOY, out_root=generated, force=True)
    domain = CompiledDomain.open("toy", generated)
    path, records, _ = generate_file(domain)
    return {"tmp": tmp_path, "scenarios": path, "records": records, "domain": domain}


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def review(toy_env: dict, reviews: Path, out: Path, *extra: str) -> tuple[int, str]:
    """`kgbench review` of the env's compiled toy domain with a verdicts file and a sheet folder."""
    return run(
        "review", "-d", str(toy_env["domain"].root), "--reviews", str(reviews), "--out", str(out),
        *extra,
    )  # fmt: skip


def write_reviews(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(rows)


def accept_all(records: list[dict]) -> list[list[str]]:
    return [
        [
            r["scenario_id"],
            content_sha256(r),
            "accept",
            "kgbench maintainers",
            "author",
            "2026-12-01",
            "",
        ]
        for r in records
    ]


def test_explain_prints_every_verdict_and_its_evidence(toy_env) -> None:
    rec = next(r for r in toy_env["records"] if r["category"] == "contraindication_sensitive")
    code, out = run("explain", rec["scenario_id"], "-d", str(toy_env["domain"].root))
    assert code == 0, out
    for v in rec["gold"]["justification"]["candidates"]:
        assert v["summary"] in out
    for aid in rec["gold"]["outcome_assertion_ids"]:
        assert f"[{aid}]" in out
    assert "Sources:" in out and "EV_0006" in out
    code, out = run("explain", "SCN_9999", "-d", str(toy_env["domain"].root))
    assert code == 2 and "no scenario 'SCN_9999'" in out and "Traceback" not in out


def test_review_writes_a_sheet_and_reads_verdicts(toy_env) -> None:
    records, tmp = toy_env["records"], toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    write_reviews(reviews, accept_all(records[:3]))
    code, out = review(toy_env, reviews, tmp / "sheet")
    assert code == 0, out
    assert f"{len(records)} items: 3 accepted, 0 disputed, {len(records) - 3} not reviewed" in out
    rows = list(csv.DictReader((tmp / "sheet" / "review.csv").open(encoding="utf-8")))
    assert [r["scenario_id"] for r in rows] == [r["scenario_id"] for r in records]
    assert all(
        row["content_sha256"] == content_sha256(r) for row, r in zip(rows, records, strict=False)
    )
    assert [row["verdict"] for row in rows[:4]] == ["accept", "accept", "accept", ""]
    page = (tmp / "sheet" / "review.html").read_text(encoding="utf-8")
    assert page.count('<section class="item"') == len(records)
    # `-d` named the compiled folder: the page is titled by the domain's name, not that path
    assert "<title>Clinical review: toy</title>" in page and str(tmp) not in page
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        (
            ["SCN_0999", "0" * 64, "accept", "me", "author", "2026-12-01", ""],
            "scenario_id",
            "unknown scenario",
        ),
        (
            ["SCN_0001", "abc", "accept", "me", "author", "2026-12-01", ""],
            "content_sha256",
            "expected a sha256",
        ),
        (
            ["SCN_0001", "0" * 64, "accept", "me", "author", "2026-12-01", ""],
            "content_sha256",
            "changed since",
        ),
        (
            ["SCN_0001", None, "approve", "me", "author", "2026-12-01", ""],
            "verdict",
            "expected one of accept",
        ),
        (["SCN_0001", None, "dispute", "me", "author", "2026-12-01", ""], "note", "needs a note"),
        (["SCN_0001", None, "accept", "me", "author", "1 Dec", ""], "date", "YYYY-MM-DD"),
        (["SCN_0001", None, "accept", "", "author", "2026-12-01", ""], "reviewer", "is required"),
        (
            ["SCN_0001", None, "accept", "me", "clinician", "2026-12-01", ""],
            "role",
            "expected one of author, independent",
        ),
    ],
)
def test_a_bad_verdict_row_is_one_located_error(toy_env, row, field, message) -> None:
    records, tmp = toy_env["records"], toy_env["tmp"]
    if row[1] is None:
        row = [row[0], content_sha256(records[0]), *row[2:]]
    reviews = tmp / "reviews.csv"
    write_reviews(reviews, [row])
    sheet = tmp / "sheet"
    code, out = run(
        "review", "-d", str(toy_env["domain"].root), "--reviews", str(reviews), "--out", str(sheet)
    )
    assert code == 2, out
    assert f"reviews.csv, line 2, field '{field}'" in out and message in out
    assert "Traceback" not in out and not sheet.exists()  # nothing written


def test_drop_stale_removes_outdated_verdicts(toy_env) -> None:
    records, tmp = toy_env["records"], toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    rows = accept_all(records[:2])
    rows[1][1] = "f" * 64  # SCN_0002 was edited after its review
    write_reviews(reviews, rows)
    code, out = review(toy_env, reviews, tmp / "s", "--drop-stale")
    assert code == 0, out
    assert [r["scenario_id"] for r in csv.DictReader(reviews.open())] == ["SCN_0001"]


def test_publish_refuses_disputed_items_and_records_coverage(toy_env) -> None:
    records, tmp, domain = toy_env["records"], toy_env["tmp"], toy_env["domain"]
    reviews = tmp / "reviews.csv"
    rows = accept_all(records)
    rows[2][2:] = ["dispute", "kgbench maintainers", "author", "2026-12-01", "wrong population"]
    write_reviews(reviews, rows)
    code, out = run(
        "publish",
        "-d",
        str(toy_env["domain"].root),
        "--release",
        "1.0.0",
        "--reviews",
        str(reviews),
    )
    assert code == 2 and "1 item(s) are disputed" in out and "wrong population" in out
    assert not (domain.root / "gold").exists()
    write_reviews(reviews, accept_all(records)[:-1])
    changelog = tmp / "CHANGELOG.md"
    changelog.write_text("# 1.0.0\n\nFirst release.\n", encoding="utf-8")
    code, out = run(
        "publish", "-d", str(toy_env["domain"].root), "--release", "1.0.0", "--reviews", str(reviews),
        "--changelog", str(changelog),
    )  # fmt: skip
    assert code == 0, out
    assert f"1 item(s) not reviewed: {records[-1]['scenario_id']}" in out
    manifest = json.loads((domain.root / "gold" / "1.0.0" / "manifest.json").read_text())
    n = len(records)
    assert manifest["review"] == {
        "reviews": "reviews.csv",
        "accepted": n - 1,
        "disputed": 0,
        "unreviewed": 1,
        "unreviewed_ids": [records[-1]["scenario_id"]],
        "by_role": {
            "author": {"accepted": n - 1, "disputed": 0, "unreviewed": 1},
            "independent": {"accepted": 0, "disputed": 0, "unreviewed": n},
        },
        "independently_reviewed": False,
    }
    page = (domain.root / "gold" / "1.0.0" / "CHANGELOG.md").read_text()
    assert page.startswith(changelog.read_text().rstrip("\n"))
    assert f"{n - 1} of {n} items accepted" in page and "NOT independently reviewed" in page
    code, out = run("verify-release", str(domain.root / "gold" / "1.0.0"))
    assert code == 0, out


def test_the_review_page_renders_in_headless_chromium(toy_env, chromium) -> None:
    tmp, records = toy_env["tmp"], toy_env["records"]
    write_reviews(tmp / "none.csv", [])  # a named verdicts file must exist; this one is empty
    code, out = review(toy_env, tmp / "none.csv", tmp / "sheet")
    assert code == 0, out
    page = tmp / "sheet" / "review.html"
    dom = chromium(page, "--dump-dom").stdout
    assert dom.count('class="item"') == len(records)
    assert "Clinical review: toy" in dom and "abstain" in dom
    shot = tmp / "review.png"
    chromium(page, f"--screenshot={shot}")
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one


def independent(record: dict, verdict: str = "accept", note: str = "") -> list[str]:
    return [
        record["scenario_id"],
        content_sha256(record),
        verdict,
        "clinician X",
        "independent",
        "2026-12-05",
        note,
    ]


def test_agreement_reports_coverage_by_role_and_kappa(toy_env) -> None:
    """Several reviewers per item; kappa and raw agreement computed from the rows: authors
    accept 4 items, the independent reviewer accepts 2 and disputes 2, and one of the
    authors' accepts is a dispute by the independent reviewer too (a real agreement on it)."""
    records, tmp = toy_env["records"], toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    rows = accept_all(records[:4])
    rows[3][2], rows[3][6] = "dispute", "wrong class"
    rows += [
        independent(records[0]),
        independent(records[1]),
        independent(records[2], "dispute", "the abstention is wrong"),
        independent(records[3], "dispute", "misattributed class"),
    ]
    write_reviews(reviews, rows)
    code, out = run(
        "review", "-d", str(toy_env["domain"].root), "--reviews", str(reviews), "--agreement"
    )
    assert code == 0, out
    n = len(records)
    assert f"author       accepted 3, disputed 1, not reviewed {n - 4}" in out
    assert f"independent  accepted 2, disputed 2, not reviewed {n - 4}" in out
    assert "independently reviewed: no" in out
    # pairs: (a,a) (a,a) (a,d) (d,d): p_o = 3/4; p_e = 3/4*2/4 + 1/4*2/4 = 1/2; kappa = 0.5
    assert "n=4 item versions, raw agreement 3/4 = 0.750, Cohen's kappa 0.500" in out
    assert f"{records[2]['scenario_id']}: author accept, independent dispute" in out


def test_independently_reviewed_only_with_an_independent_accept_for_every_item(toy_env) -> None:
    from harness.review.verdicts import read_reviews, role_coverage

    records, tmp = toy_env["records"], toy_env["tmp"]
    reviews = tmp / "reviews.csv"
    write_reviews(reviews, [*accept_all(records), *(independent(r) for r in records[:-1])])
    cov = role_coverage(records, read_reviews(reviews, records))
    assert cov["independently_reviewed"] is False  # one item has only the authors' accept
    write_reviews(reviews, [*accept_all(records), *(independent(r) for r in records)])
    cov = role_coverage(records, read_reviews(reviews, records))
    assert cov["independently_reviewed"] is True
    assert cov["by_role"]["independent"] == {
        "accepted": len(records),
        "disputed": 0,
        "unreviewed": 0,
    }

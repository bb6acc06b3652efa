"""The whole matrix from the command line: prompts, reference answers, scores, report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.evaluation.run_scoring import score_run
from harness.report import write_report
from harness.runner.api import answer_with_reference
from kgbench.cli import app

runner = CliRunner()


def cli(*args: str | Path) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def _panel(run_dir: Path, slug: str) -> dict:
    return json.loads((run_dir / "scores" / slug / "panel.json").read_text())


def _log(run_dir: Path, slug: str, lines: list[str]) -> None:
    path = run_dir / "responses" / f"{slug}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))


def test_full_matrix_from_the_command_line(run_dir, mini_domain):
    code, out = cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    assert code == 0, out
    for name in ("oracle", "context-reader", "ungrounded"):
        code, out = cli("run", "--run-dir", run_dir, "--model", f"ref:{name}", "--no-cache")
        assert code == 0, out
    code, out = cli(
        "score", "--run-dir", run_dir, "--domain", mini_domain.root, "--bootstrap", "1000",
        "--pair", "C4:C2", "--pair", "C3:C1",
    )  # fmt: skip
    assert code == 0, out
    code, out = cli("report", "--run-dir", run_dir)
    assert code == 0, out

    oracle = _panel(run_dir, "ref-oracle")
    for cond, row in oracle["overall"].items():
        assert oracle["counts"][cond]["scored"] == 8
        for metric, stat in row.items():
            if metric != "unsupported_claim_rate" and stat["n"]:
                assert stat["mean"] == 1.0, (cond, metric)
    assert oracle["overall"]["C4"]["unsupported_claim_rate"]["mean"] == 0.0
    assert oracle["overall"]["C1"]["unsupported_claim_rate"]["n"] == 0

    reader = _panel(run_dir, "ref-context-reader")["overall"]
    # C1 cites nothing: causal-edge F1 is undefined (NA, n = 0, as in the paper's Table 2) and
    # recall is zero, below both conditions that retrieve the chains.
    assert reader["C1"]["causal_edge_f1"]["n"] == 0
    assert reader["C1"]["causal_edge_recall"]["mean"] == 0.0
    for cond in ("C3", "C4"):
        assert reader[cond]["causal_edge_f1"]["mean"] > 0.5
        assert (
            reader[cond]["causal_edge_recall"]["mean"] > reader["C1"]["causal_edge_recall"]["mean"]
        )
    pairs = [(p["a"], p["b"]) for p in _panel(run_dir, "ref-context-reader")["paired"]]
    assert pairs == [("C4", "C2"), ("C3", "C1")]

    md = (run_dir / "report" / "report.md").read_text()
    html = (run_dir / "report" / "report.html").read_text()
    for text in (md, html):
        assert "ref:oracle" in text and "ref:context-reader" in text
        assert "C4 vs C2" in text and "C3 vs C1" in text
    assert html.count("<svg") >= 3 * (1 + 2 + 10)  # per model: heatmap, 2 forests, 10 bars
    # Self-contained: nothing is fetched, no scripts.
    assert not re.search(r"<script|<link|<img|@import|url\(|src=", html, re.I)
    assert set(re.findall(r"https?://[^'\" ]+", html)) <= {"http://www.w3.org/2000/svg"}


def test_failures_and_malformed_answers_are_counted_not_zeroed(run_dir, mini_domain):
    cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    oracle_log = answer_with_reference(run_dir, "oracle")
    records = [json.loads(line) for line in oracle_log.read_text().splitlines()]
    oracle_log.unlink()
    by_id = {r["prompt_id"]: r for r in records}
    lines = []
    for pid, rec in by_id.items():
        if pid == "SCN_0001/C2":
            continue  # missing
        if pid == "SCN_0001/C3":
            lines.append(
                json.dumps(
                    {**rec, "status": "failed", "raw": "", "parsed": None, "error": "timeout"}
                )
            )
            continue
        if pid == "SCN_0001/C4":
            lines.append(json.dumps({**rec, "status": "failed", "error": "HTTP 500"}))  # retried
        if pid == "SCN_0002/C4":
            rec = {
                **rec,
                "parse_ok": False,
                "parsed": None,
                "raw": "Sorry, I can't answer \x00\x1b",
            }
        if pid == "SCN_0003/C4":
            rec = {
                **rec,
                "parse_ok": False,
                "parsed": None,
                "raw": rec["raw"][: len(rec["raw"]) // 2],
            }
        if pid == "SCN_0004/C4":
            rec = {**rec, "parsed": {**rec["parsed"], "causal_path_assertion_ids": ["ASR_9999"]}}
        lines.append(json.dumps(rec))
    lines.append(json.dumps({"prompt_id": "SCN_9999/C4", "status": "ok", "raw": "{}"}))
    lines.append('{"prompt_id": "SCN_0005/C1", "status": "ok", "raw": "trunc')  # a torn last line
    _log(run_dir, "mixed", lines)
    code, out = cli(
        "score",
        "--run-dir",
        run_dir,
        "--log-name",
        "mixed",
        "--bootstrap",
        "200",
        "--domain",
        mini_domain.root,
    )
    assert code == 0, out
    panel = _panel(run_dir, "mixed")
    counts = panel["counts"]
    assert counts["C2"]["missing"] == 1 and counts["C2"]["scored"] == 7
    assert counts["C3"]["failed"] == 1 and counts["C3"]["scored"] == 7
    assert counts["C4"] == {
        "expected": 8,
        "scored": 8,  # the retried failure was followed by an ok record
        "missing": 0,
        "failed": 0,
        "parse_failures": 2,
        "unparseable": 2,
        "unknown_id_responses": 1,
    }
    assert panel["log"] == {
        "records_for_unknown_prompts": 1,
        "unreadable_records": 1,
        "superseded_records": 1,  # the retried failure, reported rather than dropped silently
        "out_of_range_records": 0,
    }
    # Missing and failed answers are not zeros: the oracle's remaining C2/C3 answers are perfect.
    c2 = panel["overall"]["C2"]["intervention_accuracy"]
    assert {k: c2[k] for k in ("mean", "n", "se", "interval")} == {
        "mean": 1.0,
        "n": 7,
        "se": 0.0,
        "interval": "wilson",  # 7/7 correct: [0.646, 1.000], not certainty
    }
    assert panel["overall"]["C3"]["intervention_accuracy"]["n"] == 7
    # Unparseable answers count as wrong under the primary policy (intent-to-treat), and the
    # per-protocol figures (them left out) are carried beside it.
    assert panel["scoring_policy"]["primary"] == "intent_to_treat"
    assert panel["scoring_policy"]["unparseable_answers"] == 2
    assert panel["overall"]["C4"]["intervention_accuracy"]["mean"] == pytest.approx(6 / 8)
    per_protocol = panel["scoring_policy"]["alternative_overall"]["C4"]["intervention_accuracy"]
    assert {k: per_protocol[k] for k in ("mean", "n", "se")} == {"mean": 1.0, "n": 6, "se": 0.0}
    items = [json.loads(x) for x in (run_dir / "scores/mixed/items.jsonl").read_text().splitlines()]
    bad = next(i for i in items if i["prompt_id"] == "SCN_0002/C4")
    assert bad["status"] == "scored" and bad["parse_ok"] is False
    assert bad["problems"] == ["not JSON"]
    statuses = {i["prompt_id"]: i["status"] for i in items}
    assert statuses["SCN_0001/C2"] == "missing" and statuses["SCN_0001/C3"] == "failed"


def test_scores_and_report_are_deterministic(run_dir, mini_domain):
    cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    answer_with_reference(run_dir, "context-reader")
    score_run(run_dir, bootstrap=300, seed=7, domain=str(mini_domain.root))
    first = [
        (run_dir / "scores/ref-context-reader" / n).read_bytes()
        for n in ("items.jsonl", "panel.json")
    ]
    md, html = write_report(run_dir)
    report = (md.read_bytes(), html.read_bytes())
    score_run(run_dir, bootstrap=300, seed=7, domain=str(mini_domain.root))
    again = [
        (run_dir / "scores/ref-context-reader" / n).read_bytes()
        for n in ("items.jsonl", "panel.json")
    ]
    assert again == first
    md, html = write_report(run_dir)
    assert (md.read_bytes(), html.read_bytes()) == report
    score_run(run_dir, bootstrap=300, seed=8, domain=str(mini_domain.root))
    assert (run_dir / "scores/ref-context-reader/panel.json").read_bytes() != first[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "--run-dir", "{run}/nope"], "does not exist"),
        (["score", "--run-dir", "{run}", "--pair", "C4"], "A:B"),
        (["score", "--run-dir", "{run}", "--pair", "C4:C9"], "unknown condition 'C9'"),
        (["score", "--run-dir", "{run}", "--model", "openai:nobody"], "no responses log"),
        (
            ["score", "--run-dir", "{run}", "--model", "ref-oracle"],
            "did you mean --model ref:oracle",
        ),
        (["score", "--run-dir", "{run}", "--bootstrap", "5"], "at least 100"),
        (["report", "--run-dir", "{run}"], "kgbench score"),
        (["prompts", "--run-dir", "{run}", "--domain", "{run}/none/x"], "not a compiled domain"),
    ],
)
def test_bad_input_is_one_clear_message_and_exit_2(run_dir, mini_domain, args, message):
    cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    answer_with_reference(run_dir, "ungrounded")
    argv = [a.replace("{run}", str(run_dir)) for a in args]
    if argv[0] == "score":
        argv += ["--domain", str(mini_domain.root)]
    code, out = cli(*argv)
    assert code == 2, out
    assert message in out and "Traceback" not in out


def test_scoring_before_answering_says_what_to_run(run_dir, mini_domain):
    cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    code, out = cli("score", "--run-dir", run_dir, "--domain", mini_domain.root)
    assert code == 2 and "kgbench run --run-dir" in out


def test_report_escapes_hostile_names(run_dir, mini_domain):
    cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    log = answer_with_reference(run_dir, "ungrounded")
    hostile = "<script>alert(1)</script> | x\n# injected"
    records = [json.loads(x) for x in log.read_text().splitlines()]
    _log(run_dir, "hostile", [json.dumps({**r, "model": hostile}) for r in records])
    log.unlink()
    score_run(run_dir, bootstrap=100, domain=str(mini_domain.root))
    md, html = write_report(run_dir)
    html_text = html.read_text()
    assert "<script>" not in html_text and "&lt;script&gt;" in html_text
    md_text = md.read_text()
    assert "\n# injected" not in md_text and "<script>" not in md_text

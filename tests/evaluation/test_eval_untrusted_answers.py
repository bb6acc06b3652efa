"""Answers Python's JSON reader cannot read are scored, never a crash (reliability review
2026-12: sc.bigint-whole, sc.bigint-fenced, sc.bigint-e2e).

An integer of more than 4,300 digits makes `json.loads` raise a plain ValueError (not a
JSONDecodeError); the scorer read it only through `json.loads`, so one such answer stopped
`kgbench score` for the whole run. Answers are now read by `kgbench.untrusted`.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from harness.evaluation.judge import parse_text
from harness.evaluation.scoring import score_response
from kgbench.cli import app

BIG = "9" * 5000


def cli(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def test_sc_bigint_whole_is_not_parsed_and_scored(mini_domain, load_context, mini_scenarios):
    raw = '{"recommended_intervention": "X", "n": ' + BIG + "}"
    assert parse_text(raw) == (None, None)
    scenario = mini_scenarios[0]
    context = load_context(scenario["scenario_id"], "C4")
    scores = score_response(scenario["gold"], raw, context, domain=mini_domain)
    assert len(scores) == 10
    assert all(v is None or 0.0 <= v <= 1.0 for v in scores.values())


def test_sc_bigint_fenced_is_not_parsed_and_scored(mini_domain, load_context, mini_scenarios):
    raw = 'Answer:\n```json\n{"n": ' + BIG + "}\n```"
    assert parse_text(raw) == (None, None)
    scenario = mini_scenarios[1]
    scores = score_response(scenario["gold"], raw, None, domain=mini_domain)
    assert all(v is None or 0.0 <= v <= 1.0 for v in scores.values())


def test_a_fenced_answer_beside_a_bigint_is_still_read() -> None:
    """Only the unreadable attempt is skipped: a later readable block still parses."""
    raw = "x " + BIG + ' ```json\n{"a": 1}\n```'
    assert parse_text(raw) == ({"a": 1}, "extracted")


def test_sc_bigint_e2e_score_of_a_run_with_a_bigint_answer(run_dir, mini_domain) -> None:
    code, out = cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    assert code == 0, out
    code, out = cli("run", "--run-dir", run_dir, "--model", "ref:oracle", "--no-cache")
    assert code == 0, out
    log = run_dir / "responses" / "ref-oracle.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    hostile = records[0]
    hostile["raw"] = '{"recommended_intervention": ' + BIG + "}"
    hostile["parsed"], hostile["parse_ok"] = None, False
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out = cli("score", "--run-dir", run_dir, "--domain", mini_domain.root)
    assert code == 0, out
    assert "Traceback" not in out
    items = run_dir / "scores" / "ref-oracle" / "items.jsonl"
    rows = [json.loads(line) for line in items.read_text().splitlines() if line.strip()]
    row = next(r for r in rows if r["prompt_id"] == hostile["prompt_id"])
    assert row["parse_ok"] is False

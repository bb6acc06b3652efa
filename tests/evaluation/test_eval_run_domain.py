"""A run folder is scored only with its own domain, and a reading command takes only plain
log names (reliability review 2026-12: rf.domain-mismatch, cli.score)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgbench.cli import app


def cli(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.fixture
def answered(run_dir, mini_domain) -> Path:
    code, out = cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    assert code == 0, out
    code, out = cli("run", "--run-dir", run_dir, "--model", "ref:oracle", "--no-cache")
    assert code == 0, out
    return run_dir


def test_cli_score_with_another_domain_is_refused(answered) -> None:
    code, out = cli("score", "--run-dir", answered, "--domain", "cardio")
    assert code == 2 and "Traceback" not in out, out
    assert "a run is scored only with its own domain" in out
    assert not (answered / "scores").exists()


def test_rf_domain_mismatch_a_run_json_naming_another_domain(answered, mini_domain) -> None:
    run_json = answered / "run.json"
    data = json.loads(run_json.read_text())
    data["domain"] = "afib"
    run_json.write_text(json.dumps(data))
    for args in (["score"], ["report"]):
        code, out = cli(*args, "--run-dir", answered)
        assert code == 2 and "Traceback" not in out, (args, out)
    code, out = cli("score", "--run-dir", answered)
    assert "the run's scenarios are of 'mini'" in out
    assert not (answered / "scores").exists()


def test_the_own_domain_is_accepted(answered, mini_domain) -> None:
    code, out = cli("score", "--run-dir", answered, "--domain", mini_domain.root)
    assert code == 0, out


@pytest.mark.parametrize("name", ["../responses/ref-oracle", "/etc/passwd", "a/b", ".hidden"])
def test_cli_score_a_log_name_that_is_not_a_plain_name(answered, name: str) -> None:
    code, out = cli("score", "--run-dir", answered, "--log-name", name)
    assert code == 2 and "is not a plain file name" in out and "Traceback" not in out, out
    assert not (answered / "scores").exists()

"""Failures fail (issue 31, item 4): a command whose requests ended failed or missing exits 1
with one summary line, unless --allow-failures; the failed records stay in the log."""

from __future__ import annotations

import subprocess

import pytest

from harness.runner.failures import checked_failures, failure_ledger, note_requests
from harness.runner.stage import Stage, StageConfig, StageRequest, run_stage
from harness.server.faults import FaultPlan
from kgbench.errors import RequestsFailed

from .conftest import fast_env, make_run_folder, read_log, runner_cmd

FAST = ["--max-attempts", "1", "--backoff-base", "0", "--no-cache", "--concurrency", "4"]


def test_run_against_a_server_that_fails_every_request_exits_1(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 12)
    url, _ = server(faults=FaultPlan(rate=1.0, kinds=("500",)))
    args = ["--run-dir", str(folder), "--model", "openai:context-reader", "--base-url", url]
    done = subprocess.run(runner_cmd(*args, *FAST), capture_output=True, text=True, env=fast_env())
    assert done.returncode == 1, done.stderr
    assert "error: 12 request(s) failed and 0 missing: run " in done.stderr
    assert "Traceback" not in done.stderr
    log = folder / "responses" / "openai-context-reader.jsonl"
    assert str(log) in done.stdout  # the log is still named and kept
    assert [r["status"] for r in read_log(log)] == ["failed"] * 12

    allowed = subprocess.run(
        runner_cmd(*args, *FAST, "--retry-failed", "--allow-failures"),
        capture_output=True,
        text=True,
        env=fast_env(),
    )
    assert allowed.returncode == 0, allowed.stderr
    assert "failed 12" in allowed.stderr


def test_a_run_where_every_request_succeeds_exits_0(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 6)
    url, _ = server()
    args = ["--run-dir", str(folder), "--model", "openai:context-reader", "--base-url", url]
    done = subprocess.run(runner_cmd(*args, *FAST), capture_output=True, text=True, env=fast_env())
    assert done.returncode == 0, done.stderr
    assert "error:" not in done.stderr


def test_a_failed_stage_is_counted_by_the_ledger_of_the_command(tmp_path, server):
    url, _ = server(faults=FaultPlan(rate=1.0, kinds=("500",)))
    config = StageConfig(
        out_dir=tmp_path / "stages", model="openai:oracle", base_url=url, use_cache=False
    )
    config = StageConfig(**{**config.__dict__, "policy": type(config.policy)(max_attempts=1)})
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    requests = [
        StageRequest(f"r{i}", [{"role": "user", "content": f"question {i}"}], schema)
        for i in range(3)
    ]
    expected = r"3 request\(s\) failed and 0 missing: stage s1"
    with pytest.raises(RequestsFailed, match=expected), checked_failures(allow_failures=False):
        run_stage(config, Stage("s1", requests))
    with checked_failures(allow_failures=True) as ledger:
        run_stage(config, Stage("s1", requests))
    assert ledger.failed == 3


def test_the_ledger_counts_pending_batches_apart_and_nests():
    with failure_ledger() as outer:
        note_requests("run a", 0, 0, pending=5)  # --batch --no-wait: submitted, not missing
        assert not outer.any
        with failure_ledger() as inner:
            note_requests("stage b", 2, 1)
        assert inner.any and inner.steps == ["stage b (2 failed, 1 missing)"]
    assert (outer.failed, outer.missing, outer.pending) == (2, 1, 5)
    note_requests("outside any command", 9, 9)  # no ledger: nothing to record, no error

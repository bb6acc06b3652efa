"""A run killed with SIGKILL and restarted ends where an uninterrupted run ends, having sent
only what was missing.

The kill point is drawn from a seeded generator (a failure names a point that can be run
again). The killed and the restarted runner identify themselves to the server by
OPENAI_ORG_ID, so what the restart sent is counted exactly, with no wait for requests the
killed process had already put on the wire."""

from __future__ import annotations

import random
import signal
import subprocess

import pytest

from harness.runner.log import JsonlLog
from harness.server.app import wait_until

from .conftest import fast_env, make_run_folder, read_log, runner_cmd

TIMING = {"latency_s", "created_at", "attempts", "request_id"}


def _content(records: list[dict]) -> dict[str, dict]:
    return {r["key"]: {k: v for k, v in r.items() if k not in TIMING} for r in records}


@pytest.mark.parametrize("seed", [20261130])
def test_sigkill_mid_run_then_restart_matches_uninterrupted(tmp_path, server, seed):
    url, srv = server(latency_ms=15)
    killed = make_run_folder(tmp_path / "killed", 320)
    args = ["--model", "openai:m", "--base-url", url, "--concurrency", "8", "--no-cache"]
    log = killed / "responses" / "openai-m.jsonl"

    proc = subprocess.Popen(
        runner_cmd("--run-dir", str(killed), *args),
        env=fast_env(OPENAI_ORG_ID="org-killed"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    cut = random.Random(seed).randint(20, 250)
    assert wait_until(
        lambda: log.exists() and log.stat().st_size > 0 and log.read_bytes().count(b"\n") >= cut,
        timeout=30,
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = len(JsonlLog(log).load()[0])  # also cuts a partial last line
    assert 0 < done_before < 320

    restart = subprocess.run(
        runner_cmd("--run-dir", str(killed), *args),
        env=fast_env(OPENAI_ORG_ID="org-restart"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert restart.returncode == 0, restart.stderr
    assert srv.stats.snapshot()["chat_requests_org:org-restart"] == 320 - done_before
    resumed = read_log(log)
    assert len(resumed) == 320 == len({r["key"] for r in resumed})

    clean = make_run_folder(tmp_path / "clean", 320)
    once = subprocess.run(
        runner_cmd("--run-dir", str(clean), *args),
        env=fast_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert once.returncode == 0, once.stderr
    assert _content(resumed) == _content(read_log(clean / "responses" / "openai-m.jsonl"))

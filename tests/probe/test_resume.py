"""A probe killed with SIGKILL mid-stage and restarted ends where an uninterrupted probe
ends, having sent only what no log held; through the local OpenAI-compatible server and the
real `openai` client. The kill point comes from a seeded generator; the killed and the
restarted probe identify themselves to the server by OPENAI_ORG_ID, so what the restart sent
is counted exactly, with no wait for requests already on the wire."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.runner.log import JsonlLog
from harness.server import start_server_in_thread
from harness.server.app import wait_until

MODEL = "openai:oracle"


def probe_cmd(run_dir: Path, url: str) -> list[str]:
    return [
        sys.executable, "-c", "from kgbench.cli import app; app()", "probe", "--domain",
        "cardio", "--model", MODEL, "--base-url", url, "--run-dir", str(run_dir),
        "--concurrency", "4", "--no-cache", "--bootstrap", "200",
    ]  # fmt: skip


def env(**extra: str) -> dict[str, str]:
    out = {**os.environ, "OPENAI_API_KEY": "sk-test-CANARY-123456", **extra}
    out.pop("OPENAI_BASE_URL", None)
    return out


@pytest.fixture
def server():
    url, stop = start_server_in_thread(probe_domain="cardio", latency_ms=15)
    yield url, stop.server
    stop()


def _logged(stages: Path) -> int:
    return sum(len(JsonlLog(p).load()[0]) for p in stages.glob("*.jsonl"))


@pytest.mark.parametrize("seed", [20261130])
def test_sigkill_mid_probe_then_restart_matches_uninterrupted(tmp_path, server, seed):
    url, srv = server
    killed = tmp_path / "killed"
    stages = killed / "probe" / "openai-oracle" / "stages"
    proc = subprocess.Popen(
        probe_cmd(killed, url),
        env=env(OPENAI_ORG_ID="org-killed"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    cut = random.Random(seed).randint(5, 100)
    log = stages / "expand-2.jsonl"
    assert wait_until(lambda: log.exists() and log.read_bytes().count(b"\n") >= cut, timeout=60)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = _logged(stages)  # also cuts a partial last line
    assert 40 < done_before < 40 + 128

    restart = subprocess.run(
        probe_cmd(killed, url),
        env=env(OPENAI_ORG_ID="org-restart"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert restart.returncode == 0, restart.stderr
    distinct = _logged(stages)
    assert srv.stats.snapshot()["chat_requests_org:org-restart"] == distinct - done_before
    assert not list(killed.rglob("*.tmp"))  # nothing half-written

    clean = tmp_path / "clean"
    once = subprocess.run(
        probe_cmd(clean, url), env=env(), capture_output=True, text=True, timeout=120
    )
    assert once.returncode == 0, once.stderr
    a, b = killed / "probe" / "openai-oracle", clean / "probe" / "openai-oracle"
    for rel in [
        "scores.json",
        "mapping.json",
        *(f"graphs/{p.name}" for p in (b / "graphs").iterdir()),
    ]:
        assert json.loads((a / rel).read_text()) == json.loads((b / rel).read_text()), rel
    from .conftest import oracle_precision

    mean = json.loads((a / "scores.json").read_text())["overall"]["precision"]["mean"]
    assert mean == oracle_precision()


def test_probe_through_the_server_with_the_real_openai_client(tmp_path, server):
    url, srv = server
    result = subprocess.run(
        [*probe_cmd(tmp_path / "run", url), "--limit-roots", "4"],
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    scores_path = Path(result.stdout.strip())
    scores = json.loads(scores_path.read_text())
    from .conftest import oracle_precision

    expected = oracle_precision(4)  # two of the first four roots are treated, not caused
    assert scores["model"] == MODEL and scores["overall"]["precision"]["mean"] == expected
    stats = srv.stats.snapshot()
    assert stats["chat_answered"] == stats["chat_requests"] > 0
    assert f"precision@6 {expected:.3f}" in result.stderr
    # the answers were requested with the step's strict schema
    record = json.loads(
        (scores_path.parent / "stages" / "expand-1.jsonl").read_text().splitlines()[0]
    )
    assert record["structured"] is True and record["schema_ok"] is True

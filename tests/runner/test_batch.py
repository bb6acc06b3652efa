"""The Batch API path against the reference server's Files and Batches endpoints."""

from __future__ import annotations

import json
import signal
import subprocess

from harness.runner.job import BatchLimits, BatchOptions
from harness.server.app import wait_until

from .conftest import fast_env, make_run_folder, read_log, runner_cmd
from .helpers import run

POLL = {"poll_interval_s": 0.02, "poll_cap_s": 0.1}


def _state(folder):
    return json.loads((folder / "batches" / "state.json").read_text())


def test_batch_run_completes_split_at_the_limits(run_folder, server, tmp_path):
    url, srv = server(batch_step_ms=10)
    options = BatchOptions(limits=BatchLimits(max_requests=100), **POLL)
    result = run(
        run_folder, "openai:m", tmp_path / "c", base_url=url, batch=True, batch_options=options
    )
    records = read_log(result.log_path)
    assert len(records) == 320 == len({r["key"] for r in records})
    assert all(r["status"] == "ok" and r["schema_ok"] and r["mode"] == "batch" for r in records)
    stats = srv.stats.snapshot()
    assert stats["files_uploaded"] == stats["batches_created"] == 4  # 100+100+100+20
    state = _state(run_folder)
    assert len(state["batches"]) == 4 and all(b["collected"] for b in state["batches"].values())
    assert {cid for b in state["batches"].values() for cid in b["custom_ids"]} == {
        r["key"] for r in records
    }


def test_crash_after_submit_reattaches_without_paying_twice(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 60)
    url, srv = server(batch_step_ms=10)
    crash = BatchOptions(limits=BatchLimits(max_requests=25), stop_after_submit=True, **POLL)
    run(folder, "openai:m", tmp_path / "c", base_url=url, batch=True, batch_options=crash)
    assert srv.stats.snapshot()["batches_created"] == 3
    assert not (folder / "responses" / "openai-m.jsonl").exists() or not read_log(
        folder / "responses" / "openai-m.jsonl"
    )

    # also lose the last batch id, as a crash between create and the state write would:
    state = _state(folder)
    lost = sorted(state["batches"])[-1]
    file_id = state["batches"].pop(lost)["input_file_id"]
    state["uploads"][file_id]["batch_id"] = None
    (folder / "batches" / "state.json").write_text(json.dumps(state))

    result = run(
        folder,
        "openai:m",
        tmp_path / "c",
        base_url=url,
        batch=True,
        batch_options=BatchOptions(**POLL),
    )
    stats = srv.stats.snapshot()
    assert stats["files_uploaded"] == 3 and stats["batches_created"] == 3
    assert lost in _state(folder)["batches"]  # found again by its input file
    assert len(read_log(result.log_path)) == 60 and result.tally.final_ok == 60


def test_sigkill_while_waiting_reattaches(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 40)
    url, srv = server(batch_step_ms=400)
    args = [
        "--run-dir",
        str(folder),
        "--model",
        "openai:m",
        "--base-url",
        url,
        "--batch",
        "--poll-interval",
        "0.05",
        "--poll-max",
        "0.1",
        "--no-cache",
    ]
    proc = subprocess.Popen(
        runner_cmd(*args), env=fast_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    state = folder / "batches" / "state.json"
    assert wait_until(lambda: state.exists() and _state(folder)["batches"], timeout=30)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    again = subprocess.run(
        runner_cmd(*args), env=fast_env(), capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0, again.stderr
    assert "re-attached" in again.stderr
    stats = srv.stats.snapshot()
    assert stats["files_uploaded"] == 1 and stats["batches_created"] == 1
    assert len(read_log(folder / "responses" / "openai-m.jsonl")) == 40


def test_expired_batch_keeps_partial_results_and_the_next_run_sends_the_rest(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 50)
    url, srv = server(batch_step_ms=10, expire_batches=1)
    first = run(
        folder,
        "openai:m",
        tmp_path / "c",
        base_url=url,
        batch=True,
        batch_options=BatchOptions(**POLL),
    )
    assert first.tally.final_ok == 25 and first.tally.missing == 25
    assert any("ended expired" in n for n in first.tally.notes)
    second = run(
        folder,
        "openai:m",
        tmp_path / "c",
        base_url=url,
        batch=True,
        batch_options=BatchOptions(**POLL),
    )
    records = read_log(second.log_path)
    assert len(records) == 50 == len({r["key"] for r in records})
    assert second.tally.final_ok == 50 and second.tally.missing == 0
    state = _state(folder)
    assert srv.stats.snapshot()["batches_created"] == 2
    second_batch = [b for b in state["batches"].values() if b["status"] == "completed"]
    assert len(second_batch[0]["custom_ids"]) == 25  # only what the expired batch never ran


def test_no_wait_submits_then_a_later_run_collects(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 20)
    url, srv = server(batch_step_ms=10)
    first = run(
        folder,
        "openai:m",
        tmp_path / "c",
        base_url=url,
        batch=True,
        batch_options=BatchOptions(wait=False, **POLL),
    )
    assert first.tally.missing == 20
    assert wait_until(lambda: all(b.status == "completed" for b in srv.store.batches.values()), 5)
    second = run(
        folder,
        "openai:m",
        tmp_path / "c",
        base_url=url,
        batch=True,
        batch_options=BatchOptions(**POLL),
    )
    assert second.tally.final_ok == 20 and srv.stats.snapshot()["batches_created"] == 1

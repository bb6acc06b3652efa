"""The online runner against the real reference server over loopback (real openai client)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from harness.runfolder import RUN_FORMAT
from harness.runner.engine import RetryPolicy
from harness.server import FaultPlan
from kgbench.errors import ServiceError, UserError

from .conftest import CANDIDATES, DOMAIN, make_run_folder, read_log
from .helpers import run


def _keys(records: list[dict]) -> Counter:
    return Counter(r["key"] for r in records)


def test_faults_of_every_transport_kind_end_with_all_answers(run_folder, server, tmp_path):
    kinds = ("429", "500", "drop", "timeout")
    # The client's timeout catches the server's hang; it is long enough (1 s against 5 ms of
    # latency) that on a loaded 2-core machine no healthy request times out before the server
    # reads it, which would make the client count an attempt the server never saw (0.4 s did).
    url, srv = server(
        latency_ms=5, faults=FaultPlan(0.1, kinds, seed=3), retry_after_ms=20, hang_s=2.5
    )
    result = run(
        run_folder, "openai:context-reader", tmp_path / "cache", base_url=url, timeout_s=1.0
    )
    records = read_log(result.log_path)
    assert len(records) == 320
    assert max(_keys(records).values()) == 1
    assert all(r["status"] == "ok" and r["parse_ok"] and r["schema_ok"] for r in records)
    stats = srv.stats.snapshot()
    assert all(stats.get(f"fault_{k}", 0) > 0 for k in kinds), stats
    faults = sum(stats[f"fault_{k}"] for k in kinds)
    # every fault cost at least one extra attempt, and the log counts every request sent
    assert sum(r["attempts"] for r in records) == stats["chat_requests"] >= 320 + faults
    assert result.tally.retries >= faults
    assert any("concurrency was halved" in n for n in result.tally.notes)


def test_malformed_and_truncated_answers_are_recorded_not_retried(run_folder, server, tmp_path):
    url, srv = server(faults=FaultPlan(0.3, ("malformed", "truncated"), seed=5))
    result = run(run_folder, "openai:context-reader", tmp_path / "cache", base_url=url)
    records = read_log(result.log_path)
    stats = srv.stats.snapshot()
    assert len(records) == 320 == stats["chat_requests"]  # recorded, never re-sent
    assert stats["chat_with_bearer"] == 320  # the key is sent, in the header only
    bad = [r for r in records if not r["parse_ok"]]
    truncated = [r for r in records if r["finish_reason"] == "length"]
    assert len(truncated) == stats["fault_truncated"] > 0
    assert len(bad) == stats["fault_malformed"] + stats["fault_truncated"]
    assert all(r["status"] == "ok" and r["parsed"] is None and r["raw"] for r in bad)
    assert all(r["truncated"] for r in truncated)
    assert result.tally.parse_failures == len(bad) and result.tally.truncated == len(truncated)


def test_exhausted_retries_are_failed_then_retry_failed_completes(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 40)
    cache = tmp_path / "cache"
    url, srv = server(faults=FaultPlan(1.0, ("500",), seed=1))
    policy = RetryPolicy(max_attempts=2, base_s=0.001, cap_s=0.002)
    first = run(folder, "openai:m", cache, base_url=url, policy=policy)
    records = read_log(first.log_path)
    assert len(records) == 40
    assert all(
        r["status"] == "failed" and r["attempts"] == 2 and "500" in r["error"] for r in records
    )
    assert first.tally.final_failed == 40

    # without --retry-failed, failed requests are not re-sent
    again = run(folder, "openai:m", cache, base_url=url, policy=policy)
    assert again.tally.previous_failed == 40 and srv.stats.snapshot()["chat_requests"] == 80

    # same endpoint (same keys), faults switched off: --retry-failed completes them
    srv.config = srv.config.__class__(**{**srv.config.__dict__, "faults": FaultPlan()})
    done = run(folder, "openai:m", cache, base_url=url, policy=policy, retry_failed=True)
    records = read_log(done.log_path)
    assert len(records) == 40 and max(_keys(records).values()) == 1  # compacted
    assert all(r["status"] == "ok" for r in records)
    assert done.tally.final_ok == 40


def test_cache_serves_a_second_run_without_requests(tmp_path, server):
    cache = tmp_path / "cache"
    url, srv = server()
    first = run(make_run_folder(tmp_path / "a", 50), "openai:m", cache, base_url=url)
    second = run(make_run_folder(tmp_path / "b", 50), "openai:m", cache, base_url=url)
    assert srv.stats.snapshot()["chat_requests"] == 50
    records = read_log(second.log_path)
    assert len(records) == 50 and all(r["cached"] for r in records)
    assert second.tally.cached == 50 and first.tally.cached == 0
    # the same command again sends nothing: everything is already in the log
    third = run(tmp_path / "b", "openai:m", cache, base_url=url)
    assert third.tally.previous_ok == 50 and len(read_log(third.log_path)) == 50


def test_structured_output_falls_back_when_the_endpoint_rejects_it(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 30)
    url, srv = server(structured=False)
    result = run(folder, "openai:m", tmp_path / "cache", base_url=url, concurrency=4)
    records = read_log(result.log_path)
    assert len(records) == 30 and all(r["schema_ok"] and not r["structured"] for r in records)
    assert 1 <= srv.stats.snapshot()["rejected_response_format"] <= 4
    assert any("rejected response_format" in n for n in result.tally.notes)


def test_no_structured_sends_no_response_format(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 10)
    url, srv = server(structured=False)
    from harness.runner.plan import Settings

    run(folder, "openai:m", tmp_path / "c", base_url=url, settings=Settings(structured=False))
    assert srv.stats.snapshot().get("rejected_response_format", 0) == 0


def test_reference_models_run_in_process(tmp_path):
    folder = make_run_folder(tmp_path / "run", 20)
    for name in ("context-reader", "ungrounded", "oracle"):
        result = run(folder, f"ref:{name}", tmp_path / "cache")
        records = read_log(result.log_path)
        assert len(records) == 20 and all(r["schema_ok"] for r in records)
        assert all(r["mode"] == "reference" and r["cost_usd"] == 0 for r in records)
    oracle = {r["scenario_id"]: r for r in read_log(folder / "responses" / "ref-oracle.jsonl")}
    assert oracle["SCN_0007"]["parsed"]["recommended_intervention"] == CANDIDATES[7 % 5]
    assert not (tmp_path / "cache").exists()  # reference answers are never cached


def test_unreachable_endpoint_is_one_service_error(tmp_path, server):
    folder = make_run_folder(tmp_path / "run", 5)
    url, srv = server()
    srv.stop()
    policy = RetryPolicy(max_attempts=2, base_s=0.001, cap_s=0.002)
    with pytest.raises(ServiceError, match="is the endpoint running"):
        run(folder, "openai:m", tmp_path / "c", base_url=url, policy=policy)


def test_user_errors(tmp_path, monkeypatch):
    folder = make_run_folder(tmp_path / "run", 3)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(UserError, match="OPENAI_API_KEY is not set"):
        run(folder, "openai:gpt-4o", tmp_path / "c")
    with pytest.raises(UserError, match="not a model spec"):
        run(folder, "gpt-4o", tmp_path / "c")
    with pytest.raises(UserError, match="does not exist"):
        run(tmp_path / "nowhere", "ref:oracle", tmp_path / "c")
    (folder / "prompts" / "prompts.jsonl").unlink()
    with pytest.raises(UserError, match=r"prompts\.jsonl not found; run `kgbench prompts"):
        run(folder, "ref:ungrounded", tmp_path / "c")
    make_run_folder(folder, 3)
    (folder / "run.json").write_text(json.dumps({"format_version": RUN_FORMAT, "domain": "nope"}))
    with pytest.raises(UserError, match="domain 'nope' is not compiled"):
        run(folder, "ref:ungrounded", tmp_path / "c")
    (folder / "run.json").write_text(json.dumps({"domain": DOMAIN}))  # an older kgbench's
    with pytest.raises(UserError, match=r"run\.json: written by an older kgbench"):
        run(folder, "ref:ungrounded", tmp_path / "c")


def test_replicates_and_limit(tmp_path, server):
    from harness.runner.plan import Settings

    folder = make_run_folder(tmp_path / "run", 30)
    url, _ = server()
    result = run(
        folder,
        "openai:m",
        tmp_path / "c",
        base_url=url,
        limit=10,
        settings=Settings(seed=11, replicates=3),
    )
    records = read_log(result.log_path)
    assert len(records) == 30 and len({r["prompt_id"] for r in records}) == 10
    assert {r["params"]["seed"] for r in records} == {11, 12, 13}
    assert Counter(r["replicate"] for r in records) == {0: 10, 1: 10, 2: 10}


def test_api_key_never_written(tmp_path, server):
    """The fake key must not appear in any file under the run folder or the cache."""
    canary = "sk-test-CANARY-123456"
    folder = make_run_folder(tmp_path / "run", 60)
    cache = tmp_path / "cache"
    url, _ = server(faults=FaultPlan(0.2, ("500", "429", "malformed"), seed=2), retry_after_ms=5)
    run(folder, "openai:m", cache, base_url=url)
    url2, _ = server(faults=FaultPlan(1.0, ("500",), seed=2))
    run(
        folder,
        "openai:other",
        cache,
        base_url=url2,
        policy=RetryPolicy(max_attempts=2, base_s=0.001, cap_s=0.002),
    )
    url3, _ = server(batch_step_ms=5)
    run(folder, "openai:batched", cache, base_url=url3, batch=True)
    files = [p for root in (folder, cache) for p in root.rglob("*") if p.is_file()]
    assert len(files) > 8
    for path in files:
        data = path.read_bytes()
        assert canary.encode() not in data and b"CANARY" not in data, path


def test_a_second_runner_on_the_same_log_is_refused(tmp_path):
    from harness.runner.log import RunLock

    folder = make_run_folder(tmp_path / "run", 3)
    with (
        RunLock(folder / "responses" / ".ref-ungrounded.lock"),
        pytest.raises(UserError, match="another `kgbench run`"),
    ):
        run(folder, "ref:ungrounded", tmp_path / "c")
    assert run(folder, "ref:ungrounded", tmp_path / "c").tally.final_ok == 3


def test_openai_base_url_env_is_honoured_and_keyed(tmp_path, server, monkeypatch):
    folder = make_run_folder(tmp_path / "run", 5)
    url, srv = server()
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    result = run(folder, "openai:m", tmp_path / "c")
    assert srv.stats.snapshot()["chat_requests"] == 5
    assert {r["params"]["base_url"] for r in read_log(result.log_path)} == {url}

"""Stages (harness.runner.stage): a named list of requests, each with its own schema, run
through the runner like QA prompts: online or batch, logged, resumable, cached, deduplicated."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from harness.runner.job import BatchOptions
from harness.runner.stage import Stage, StageConfig, StageRequest, run_stage


def schema(field: str) -> dict:
    return {
        "type": "object",
        "properties": {field: {"type": "string"}},
        "required": [field],
        "additionalProperties": False,
    }


def echo(name: str, prompt: str, gold) -> dict:
    """Server-side responder: answers {"x": <the prompt>} to everything."""
    return {"x": prompt}


def requests(n: int = 6) -> list[StageRequest]:
    out = []
    for i in range(n):
        field = "x" if i % 2 == 0 else "y"  # odd requests expect another field
        out.append(
            StageRequest(
                f"q{i}", [{"role": "user", "content": f"question {i}"}], schema(field), f"s_{field}"
            )
        )
    return out


def config(out: Path, url: str | None = None, **kw) -> StageConfig:
    model = "openai:echo" if url else "ref:echo"
    extra = (
        {}
        if url
        else {"responders": ("echo",), "respond": lambda n, r: {"x": r.messages[-1]["content"]}}
    )
    return StageConfig(out_dir=out, model=model, base_url=url, **extra, **kw)


def quiet() -> Console:
    return Console(file=io.StringIO())


def test_each_request_is_judged_against_its_own_schema(tmp_path, server):
    url, _ = server(respond=echo)
    result = run_stage(config(tmp_path, url, use_cache=False), Stage("step-1", requests()), quiet())
    assert result.complete and sorted(result.records) == [f"q{i}" for i in range(6)]
    for rid, record in result.records.items():
        assert record["prompt_id"] == rid and record["condition"] == "step-1"
        assert record["structured"] is True and record["parse_ok"] is True
        assert record["schema_ok"] is (int(rid[1:]) % 2 == 0)
        assert len(record["params"]["schema_sha256"]) == 16
    assert (tmp_path / "step-1.jsonl").exists() and (tmp_path / "step-1.run.json").exists()


def test_rerun_sends_nothing_and_the_cache_serves_another_folder(tmp_path, server):
    url, srv = server(respond=echo)
    cache = tmp_path / "cache"
    run_stage(config(tmp_path / "a", url, cache_dir=cache), Stage("s", requests()), quiet())
    sent = srv.stats.snapshot()["chat_requests"]
    again = run_stage(config(tmp_path / "a", url, cache_dir=cache), Stage("s", requests()), quiet())
    assert again.tally.previous_ok == 6 and srv.stats.snapshot()["chat_requests"] == sent
    other = run_stage(config(tmp_path / "b", url, cache_dir=cache), Stage("s", requests()), quiet())
    assert other.tally.cached == 6 and srv.stats.snapshot()["chat_requests"] == sent
    assert other.records["q0"]["cached"] is True


def test_identical_requests_share_one_request_and_record(tmp_path):
    same = [
        StageRequest(f"r{i}", [{"role": "user", "content": "same"}], schema("x")) for i in range(3)
    ]
    result = run_stage(config(tmp_path), Stage("dup", same), quiet())
    assert result.tally.planned == 1 and len(result.records) == 3
    assert len({r["key"] for r in result.records.values()}) == 1
    assert len((tmp_path / "dup.jsonl").read_text().splitlines()) == 1


def test_a_schema_change_is_a_new_request(tmp_path):
    one = [StageRequest("r", [{"role": "user", "content": "q"}], schema("x"))]
    two = [StageRequest("r", [{"role": "user", "content": "q"}], schema("y"))]
    a = run_stage(config(tmp_path), Stage("s", one), quiet()).records["r"]
    b = run_stage(config(tmp_path), Stage("s", two), quiet()).records["r"]
    assert a["key"] != b["key"] and b["schema_ok"] is False


def test_failures_are_recorded_and_retried_on_request(tmp_path):
    calls = {"r0": 0}

    def flaky(name, request):
        if request.request_id == "r0":
            calls["r0"] += 1
            if calls["r0"] == 1:
                raise RuntimeError("boom")
        return {"x": "ok"}

    def cfg(**kw):
        return StageConfig(
            out_dir=tmp_path, model="ref:flaky", responders=("flaky",), respond=flaky, **kw
        )

    reqs = [
        StageRequest(f"r{i}", [{"role": "user", "content": f"q{i}"}], schema("x")) for i in range(4)
    ]
    first = run_stage(cfg(), Stage("s", reqs), quiet())
    assert first.records["r0"]["status"] == "failed" and "boom" in first.records["r0"]["error"]
    assert all(first.records[f"r{i}"]["status"] == "ok" for i in range(1, 4))
    kept = run_stage(cfg(), Stage("s", reqs), quiet())
    assert kept.records["r0"]["status"] == "failed" and calls["r0"] == 1
    retried = run_stage(cfg(retry_failed=True), Stage("s", reqs), quiet())
    assert retried.records["r0"]["status"] == "ok" and calls["r0"] == 2
    assert len((tmp_path / "s.jsonl").read_text().splitlines()) == 4  # compacted


def test_stage_through_the_batch_api(tmp_path, server):
    url, srv = server(respond=echo, batch_step_ms=20)
    cfg = config(
        tmp_path, url, batch=True, use_cache=False, batch_options=BatchOptions(poll_interval_s=0.05)
    )
    result = run_stage(cfg, Stage("batched", requests()), quiet())
    assert result.complete and all(r["mode"] == "batch" for r in result.records.values())
    assert srv.stats.snapshot()["batches_created"] == 1
    state = json.loads((tmp_path / "batches" / "batched" / "batches" / "state.json").read_text())
    assert len(state["batches"]) == 1
    line = (tmp_path / "batches" / "batched" / "batches" / "inputs").iterdir().__next__()
    body = json.loads(line.read_text().splitlines()[1])["body"]
    assert body["response_format"]["json_schema"]["name"] == "s_y"
    assert body["response_format"]["json_schema"]["schema"] == schema("y")


def test_bad_stage_settings_are_user_errors(tmp_path):
    from harness.runner.plan import Settings
    from kgbench.errors import UserError

    with pytest.raises(UserError, match="replicates must be 1"):
        run_stage(
            config(tmp_path, settings=Settings(replicates=2)), Stage("s", requests()), quiet()
        )
    with pytest.raises(UserError, match="unknown reference responder"):
        run_stage(StageConfig(out_dir=tmp_path, model="ref:nope"), Stage("s", requests()), quiet())

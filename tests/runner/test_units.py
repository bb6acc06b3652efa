"""Pure pieces of the runner: AIMD, backoff, keys, chunking, scrubbing, faults, parsing."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest

from harness.evaluation.judge import compile_contract
from harness.runner.batch import split_chunks
from harness.runner.client import build_body, retry_after_seconds, scrub
from harness.runner.controller import AIMDController, backoff_delay
from harness.runner.job import BatchLimits
from harness.runner.keys import request_key
from harness.runner.pricing import resolve_prices, table_price
from harness.runner.records import verdict_fields
from harness.runner.spec import model_slug, parse_model_spec
from harness.server.faults import FaultPlan, parse_fault_kinds
from kgbench.errors import UserError


def test_aimd_halves_on_429_and_recovers_additively() -> None:
    c = AIMDController(32)
    assert c.limit == 32
    assert c.on_rate_limited(c.epoch)
    assert c.limit == 16
    # 429s from requests that started before the decrease are one signal, not five
    for _ in range(5):
        assert not c.on_rate_limited(0)
    assert c.limit == 16
    assert c.on_rate_limited(c.epoch) and c.limit == 8
    for _ in range(8):  # a run of successes as long as the limit adds one
        c.on_success()
    assert c.limit == 9
    for _ in range(10_000):
        c.on_success()
    assert c.limit == 32  # never above the maximum


def test_aimd_never_below_one() -> None:
    c = AIMDController(3)
    for _ in range(10):
        c.on_rate_limited(c.epoch)
    assert c.limit == 1
    with pytest.raises(ValueError):
        AIMDController(0)


def test_backoff_is_full_jitter_and_capped() -> None:
    rng = random.Random(1)
    for attempt in range(12):
        ceiling = min(5.0, 0.1 * 2**attempt)
        delays = [backoff_delay(attempt, 0.1, 5.0, rng) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # spread over the whole range (full jitter)


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    date = retry_after_seconds({"retry-after": formatdate(usegmt=True)})
    assert date is not None and date <= 1.0
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"retry-after": "soon"}) is None


def test_keys_are_canonical_and_sensitive() -> None:
    msgs = [{"role": "user", "content": "hi"}]
    params = {"temperature": 0, "seed": 1}
    k = request_key("openai:m", msgs, params, 0)
    assert k == request_key(
        "openai:m", [{"content": "hi", "role": "user"}], {"seed": 1, "temperature": 0}, 0
    )
    assert k != request_key("openai:m", msgs, params, 1)
    assert k != request_key("openai:m", msgs, {**params, "seed": 2}, 0)
    assert k != request_key("openai:n", msgs, params, 0)
    assert model_slug("openai:gpt-4o") == "openai-gpt-4o"


def test_split_chunks_respects_both_limits() -> None:
    lines = [(f"id{i}", b"x" * 10 + b"\n") for i in range(25)]
    by_count = split_chunks(lines, BatchLimits(max_requests=10, max_bytes=10_000))
    assert [len(c) for c in by_count] == [10, 10, 5]
    by_bytes = split_chunks(lines, BatchLimits(max_requests=100, max_bytes=50))
    assert all(sum(len(d) for _, d in c) <= 50 for c in by_bytes)
    assert sum(len(c) for c in by_bytes) == 25
    with pytest.raises(UserError):
        split_chunks(lines, BatchLimits(max_requests=10, max_bytes=5))


def test_scrub_removes_keys() -> None:
    text = "Incorrect API key sk-test-CANARY-123456; header Bearer abc.def"
    out = scrub(text, ("sk-test-CANARY-123456",))
    assert "CANARY" not in out and "abc.def" not in out
    assert "sk-proj-" not in scrub("key sk-proj-AbCdEf123456 leaked")


def test_fault_plan_is_deterministic_and_near_rate() -> None:
    plan = FaultPlan(0.1, parse_fault_kinds("429,500,drop,timeout"), seed=7)
    draws = [plan.decide(f"body{i}", 0) for i in range(5000)]
    assert draws == [plan.decide(f"body{i}", 0) for i in range(5000)]
    rate = sum(d is not None for d in draws) / len(draws)
    assert 0.08 < rate < 0.12
    assert {d for d in draws if d} == {"429", "500", "drop", "timeout"}
    with pytest.raises(ValueError):
        parse_fault_kinds("429,explode")


def test_judge_never_repairs() -> None:
    contract = compile_contract(
        {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    )
    assert verdict_fields('{"a": "x"}', contract)["schema_ok"]
    fenced = verdict_fields('```json\n{"a": "x"}\n```', contract)
    assert (fenced["parsed"], fenced["parse_ok"], fenced["schema_ok"]) == (None, False, False)
    assert fenced["parse_status"] == "extracted"  # the scorer reads it from raw, as judged
    wrong = verdict_fields('{"a": 1}', contract)
    assert wrong["parse_ok"] and not wrong["schema_ok"] and wrong["schema_errors"]
    assert wrong["parse_status"] == "schema_error"


def test_model_specs_and_prices() -> None:
    assert parse_model_spec("openai:gpt-4o").is_openai_platform
    local = parse_model_spec("openai:llama3", "http://127.0.0.1:8000/v1/")
    assert local.base_url == "http://127.0.0.1:8000/v1" and not local.is_openai_platform
    assert parse_model_spec("ref:oracle").is_reference
    for bad in ("gpt-4o", "ref:nobody", "anthropic:claude", "openai:"):
        with pytest.raises(UserError):
            parse_model_spec(bad)
    assert table_price("gpt-4o-2024-08-06") == table_price("gpt-4o")
    assert table_price("gpt-4o-mini") != table_price("gpt-4o")
    assert table_price("gpt-4o-audio-preview") is None
    assert resolve_prices(parse_model_spec("openai:mystery"), None, None).source == "unknown"
    assert resolve_prices(local, None, None).source == "endpoint"
    assert (
        resolve_prices(local, 1.0, 2.0).cost({"prompt_tokens": 10**6, "completion_tokens": 10**6})
        == 3.0
    )


def test_body_uses_the_right_token_parameter() -> None:
    msgs = [{"role": "user", "content": "x"}]
    params = {"temperature": 0.0, "seed": 3, "max_tokens": 50}
    platform = build_body(parse_model_spec("openai:gpt-4o"), msgs, params, {"type": "object"})
    assert platform["max_completion_tokens"] == 50 and "max_tokens" not in platform
    assert platform["response_format"]["json_schema"]["strict"] is True
    other = build_body(parse_model_spec("openai:m", "http://127.0.0.1:1/v1"), msgs, params, None)
    assert other["max_tokens"] == 50 and "response_format" not in other

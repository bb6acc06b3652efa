"""Response records, in the format harness/README.md documents (plus run bookkeeping)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .client import Completion
from .parse import ResponseJudge
from .plan import RequestItem
from .pricing import Prices
from .spec import ModelSpec


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _base(item: RequestItem, spec: ModelSpec) -> dict[str, Any]:
    return {
        "key": item.key,
        "prompt_id": item.prompt_id,
        "scenario_id": item.scenario_id,
        "condition": item.condition,
        "replicate": item.replicate,
        "model": spec.text,
    }


def ok_record(
    item: RequestItem,
    spec: ModelSpec,
    completion: Completion,
    judge: ResponseJudge,
    prices: Prices,
    *,
    attempts: int,
    latency_s: float | None,
    mode: str,
    batch_id: str | None = None,
) -> dict[str, Any]:
    """An answer was received: kept verbatim, judged, never repaired."""
    verdict = judge.for_item(item).judge(completion.raw)
    return {
        **_base(item, spec),
        "status": "ok",
        "raw": completion.raw,
        "parsed": verdict.parsed,
        "parse_ok": verdict.parse_ok,
        "schema_ok": verdict.schema_ok,
        "schema_errors": verdict.schema_errors,
        "finish_reason": completion.finish_reason,
        "truncated": completion.finish_reason == "length",
        "refusal": completion.refusal,
        "usage": completion.usage,
        "latency_s": None if latency_s is None else round(latency_s, 4),
        "cost_usd": prices.cost(completion.usage, batch=mode == "batch", spec=spec),
        "error": None,
        "attempts": attempts,
        "cached": False,
        "structured": completion.structured,
        "mode": mode,
        "batch_id": batch_id,
        "response_model": completion.response_model,
        "system_fingerprint": completion.system_fingerprint,
        "request_id": completion.request_id,
        "params": item.params,
        "created_at": _now(),
    }


def failed_record(
    item: RequestItem,
    spec: ModelSpec,
    error: str,
    *,
    attempts: int,
    mode: str,
    status_code: int | None = None,
    batch_id: str | None = None,
) -> dict[str, Any]:
    """No answer after all attempts: kept so it is visible, re-sent by --retry-failed."""
    return {
        **_base(item, spec),
        "status": "failed",
        "raw": None,
        "parsed": None,
        "parse_ok": False,
        "schema_ok": False,
        "schema_errors": [],
        "finish_reason": None,
        "truncated": False,
        "refusal": None,
        "usage": None,
        "latency_s": None,
        "cost_usd": 0.0,
        "error": error,
        "http_status": status_code,
        "attempts": attempts,
        "cached": False,
        "structured": None,
        "mode": mode,
        "batch_id": batch_id,
        "response_model": None,
        "system_fingerprint": None,
        "request_id": None,
        "params": item.params,
        "created_at": _now(),
    }


def cached_copy(record: dict[str, Any], item: RequestItem) -> dict[str, Any]:
    """A cache hit, copied into this run's log without a request; prompt ids are this run's."""
    copy = dict(record)
    copy.update(
        prompt_id=item.prompt_id,
        scenario_id=item.scenario_id,
        condition=item.condition,
        cached=True,
        cache_created_at=record.get("created_at"),
        created_at=_now(),
    )
    return copy

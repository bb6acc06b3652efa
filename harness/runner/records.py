"""Response records: kgbench.contract.ResponseRecord, which every record is built through
(a field missing or of the wrong type is a bug here, not a line the scorer meets later).

An answer is judged here by the one judge (harness.evaluation.judge) and kept verbatim: an
answer that is not JSON as a whole is recorded as such (parsed=null, parse_ok=false), never
repaired; the scorer reads a fenced or prose-wrapped object out of `raw` with the same judge.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from harness.evaluation.judge import Contract, Judgement, compile_contract, judge
from kgbench.contract import ResponseRecord
from kgbench.contract.judgement import RecordedJudgement
from kgbench.io import canonical_json

from .client import Completion
from .plan import RequestItem
from .pricing import Prices
from .spec import ModelSpec

# The first problems of an answer kept in its record (`schema_errors`).
MAX_SCHEMA_ERRORS = 5


class Judges:
    """The compiled contract of each response schema a send meets: the job's, and each stage
    request's own. All are compiled when the send starts, so a schema the judge cannot
    interpret is refused before any request goes out."""

    def __init__(self, schema: dict[str, Any], items: Iterable[RequestItem] = ()) -> None:
        self._by_schema: dict[str, Contract] = {}
        self.default = self._of(schema, "the run's response schema") if schema else None
        for item in items:
            self.for_item(item)

    def _of(self, schema: dict[str, Any], source: str) -> Contract:
        text = canonical_json(schema)
        contract = self._by_schema.get(text)
        if contract is None:
            contract = self._by_schema[text] = compile_contract(schema, source)
        return contract

    def for_item(self, item: RequestItem) -> Contract:
        """The contract of one request: its own schema's when it carries one."""
        if item.schema is not None:
            return self._of(item.schema, f"the answer schema of request {item.prompt_id}")
        if self.default is None:
            raise AssertionError(f"request {item.prompt_id} has no response schema")
        return self.default


def verdict_fields(raw: str | None, contract: Contract) -> dict[str, Any]:
    """The record's verdict on one answer. `parsed` is the answer only when the whole of it is
    JSON (never a repaired one); `parse_status` is the judge's, `judged_with` the digest of
    the schema it judged against, and `judgement` the rest of the verdict, so the scorer takes
    it as made under that schema and never judges the answer again."""
    verdict = judge(raw, contract)
    if raw is None:  # no text came: recorded as unparseable, its verdict as the judge gave it
        return {
            "parsed": None,
            "parse_ok": False,
            "schema_ok": False,
            "schema_errors": [],
            "parse_status": "unparseable",
            "judged_with": contract.digest,
            "judgement": _judgement(verdict, None),
        }
    whole = verdict.whole
    parsed = verdict.value if whole else None
    return {
        "parsed": parsed,
        "parse_ok": whole,
        "schema_ok": whole and verdict.schema_ok,
        "schema_errors": list(verdict.problems[:MAX_SCHEMA_ERRORS]) if whole else [],
        "parse_status": verdict.parse_status,
        "judged_with": contract.digest,
        "judgement": _judgement(verdict, parsed),
    }


def _judgement(verdict: Judgement, parsed: Any) -> dict[str, Any]:
    """The rest of the verdict (kgbench.contract.judgement), with the well-typed fields once:
    not again when they are the recorded `parsed` object itself."""
    return RecordedJudgement(
        json_read=verdict.parse_ok,
        schema_ok=verdict.schema_ok,
        problems=list(verdict.problems),
        fields=None if parsed is not None and verdict.response == parsed else verdict.response,
    ).model_dump()


def _record(**fields: Any) -> dict[str, Any]:
    """One record, checked by its model and written as a plain dict (the fields given, in the
    model's order, with this runner's record_version)."""
    record = ResponseRecord(record_version=ResponseRecord.FORMAT, **fields)
    return record.model_dump(exclude_unset=True)


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
    judges: Judges,
    prices: Prices,
    *,
    attempts: int,
    latency_s: float | None,
    mode: str,
    batch_id: str | None = None,
) -> dict[str, Any]:
    """An answer was received: kept verbatim, judged, never repaired."""
    return _record(
        **{
            **_base(item, spec),
            "status": "ok",
            "raw": completion.raw,
            **verdict_fields(completion.raw, judges.for_item(item)),
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
    )


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
    return _record(
        **{
            **_base(item, spec),
            "status": "failed",
            "raw": None,
            "parsed": None,
            "parse_ok": False,
            "schema_ok": False,
            "schema_errors": [],
            "parse_status": None,
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
    )


def cached_copy(record: dict[str, Any], item: RequestItem) -> dict[str, Any]:
    """A cache hit, copied into this run's log without a request; prompt ids are this run's.
    The record keeps its own format (an unversioned one of an earlier runner stays so, and
    the scorer judges its answer again)."""
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

"""The Batch API path: write, upload, create, persist, poll, collect.

The one rule: never pay twice. The state file (DIR/batches/state.json, rewritten atomically)
records each upload as soon as its file id exists and each batch as soon as its id exists,
mapping batch id -> input file id -> custom ids (the request keys). A later run first
re-attaches: an upload without a batch is matched to an existing batch by input file id
(the API lists batches) or gets one created from the same file; custom ids inside a batch
that is not yet collected are never submitted again. Results are joined on custom_id from
both the output and the error file; requests an expired or cancelled batch never ran stay
missing and are sent by the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kgbench.errors import ServiceError, UserError
from kgbench.io import atomic_write_bytes, atomic_write_json, utf8_bytes
from kgbench.untrusted import ParseError, load_json_object, parse_json
from kgbench.untrusted import lines as untrusted_lines

from .client import Completion, MalformedCompletion, build_body, scrub
from .job import BatchLimits, Books, Job, SendOptions
from .plan import RequestItem
from .records import failed_record, ok_record
from .spec import ModelSpec, safe_url

TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})
NOT_RUN = frozenset({"batch_expired", "batch_cancelled"})
CHAT_URL = "/v1/chat/completions"


class BatchState:
    """DIR/batches/state.json: uploads and batches of every model, saved atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {"version": 1, "uploads": {}, "batches": {}}
        if path.exists():
            try:
                self.data = load_json_object(path, "batch state")
            except UserError:
                raise UserError(
                    f"{path} is not valid JSON; it tracks batches you may be paying for, so it "
                    "is not overwritten: fix or remove it"
                ) from None

    @property
    def uploads(self) -> dict[str, dict[str, Any]]:
        return self.data.setdefault("uploads", {})

    @property
    def batches(self) -> dict[str, dict[str, Any]]:
        return self.data.setdefault("batches", {})

    def save(self) -> None:
        atomic_write_json(self.path, self.data)

    def open_batches(self, owner: dict[str, Any]) -> list[str]:
        return [b for b, v in self.batches.items() if _owned(v, owner) and not v["collected"]]

    def in_flight_ids(self, owner: dict[str, Any]) -> set[str]:
        ids: set[str] = set()
        for bid in self.open_batches(owner):
            ids.update(self.batches[bid]["custom_ids"])
        for upload in self.uploads.values():
            if _owned(upload, owner) and upload.get("batch_id") is None:
                ids.update(upload["custom_ids"])
        return ids


def _owned(entry: dict[str, Any], owner: dict[str, Any]) -> bool:
    """Entries belong to a (model, endpoint): another endpoint cannot know their ids."""
    return all(entry.get(k) == v for k, v in owner.items())


def batch_lines(
    items: list[RequestItem], spec: ModelSpec, schema: dict[str, Any] | None
) -> list[tuple[str, bytes]]:
    """(custom_id, JSONL line) per request."""
    out = []
    for item in items:
        own = schema if schema is None or item.schema is None else item.schema
        line = {
            "custom_id": item.key,
            "method": "POST",
            "url": CHAT_URL,
            "body": build_body(spec, item.messages, item.params, own, item.schema_name),
        }
        out.append((item.key, utf8_bytes(json.dumps(line, ensure_ascii=False) + "\n")))
    return out


def split_chunks(
    lines: list[tuple[str, bytes]], limits: BatchLimits
) -> list[list[tuple[str, bytes]]]:
    """Greedy split so no file exceeds the request or byte limit."""
    chunks: list[list[tuple[str, bytes]]] = []
    current: list[tuple[str, bytes]] = []
    size = 0
    for cid, data in lines:
        if len(data) > limits.max_bytes:
            raise UserError(
                f"one batch request is {len(data)} bytes, over the {limits.max_bytes}-byte file limit"
            )
        if current and (len(current) >= limits.max_requests or size + len(data) > limits.max_bytes):
            chunks.append(current)
            current, size = [], 0
        current.append((cid, data))
        size += len(data)
    if current:
        chunks.append(current)
    return chunks


class BatchRunner:
    """Sends a job's requests through the Batch API; records go to the job's books."""

    def __init__(
        self,
        client: Any,
        job: Job,
        books: Books,
        options: SendOptions,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.client = client
        self.spec = job.spec
        self.owner = {"model": job.spec.text, "endpoint": safe_url(job.spec.base_url)}
        self.dir = job.batch_dir
        self.state = BatchState(self.dir / "state.json")
        self.schema = job.schema
        self.structured = options.settings.structured
        self.judge = job.judge
        self.prices = books.prices
        self.log = books.log
        self.cache = books.cache
        self.lookup = job.lookup
        self.done = books.done
        self.tally = books.tally
        self.progress = books.progress
        self.console = books.console
        self.options = options.batch_options
        self.policy = options.policy
        self.secrets = secrets
        self.rng = random.Random()
        self.submitted = 0

    async def run(self, items: list[RequestItem]) -> None:
        await self._reattach_uploads()
        in_flight = self.state.in_flight_ids(self.owner)
        fresh = [i for i in items if i.key not in in_flight]
        if in_flight:
            self.tally.notes.append(
                f"re-attached to {len(self.state.open_batches(self.owner))} batch(es) "
                f"already submitted ({len(in_flight)} requests)"
            )
        await self._submit(fresh)
        if self.options.stop_after_submit:
            return
        if not self.options.wait:
            self.tally.notes.append("batches submitted; run the same command again to collect them")
            return
        await self._poll()

    # -- control-plane calls, retried -------------------------------------------------------

    async def _call(self, what: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        import openai

        for attempt in range(self.policy.max_attempts):
            try:
                return await fn()
            except openai.APIStatusError as exc:
                retry = exc.status_code in (408, 409, 429) or exc.status_code >= 500
                last: Exception = exc
            except openai.APIConnectionError as exc:
                retry, last = True, exc
            if not retry or attempt == self.policy.max_attempts - 1:
                break
            await asyncio.sleep(self.policy.delay(attempt, self.rng))
        raise ServiceError(
            scrub(f"batch {what} failed: {type(last).__name__}: {last}", self.secrets)
        )

    async def _find_batch(self, file_id: str) -> Any | None:
        """An existing batch created from this input file (newest first, recent ones only)."""
        page = await self._call("list", lambda: self.client.batches.list(limit=100))
        for batch in page.data:
            if batch.input_file_id == file_id:
                return batch
        return None

    async def _create(self, file_id: str) -> Any:
        """Create a batch; after a failed create, look for it before trying again."""
        import openai

        for attempt in range(self.policy.max_attempts):
            try:
                return await self.client.batches.create(
                    input_file_id=file_id,
                    endpoint=CHAT_URL,
                    completion_window="24h",
                    metadata={"kgbench_model": self.spec.text[:500]},
                )
            except (openai.APIConnectionError, openai.InternalServerError, openai.RateLimitError):
                found = await self._find_batch(file_id)
                if found is not None:
                    return found
                await asyncio.sleep(self.policy.delay(attempt, self.rng))
            except openai.APIError as exc:
                raise ServiceError(
                    scrub(f"batch create from {file_id} failed: {exc}", self.secrets)
                    + " (the upload is kept in batches/state.json and retried next run; "
                    "delete its entry there to upload afresh)"
                ) from None
        raise ServiceError("batch create failed after retries; re-run to try again")

    def _register(self, batch: Any, file_id: str, custom_ids: list[str]) -> None:
        self.state.batches[batch.id] = {
            **self.owner,
            "input_file_id": file_id,
            "custom_ids": custom_ids,
            "status": batch.status,
            "output_file_id": None,
            "error_file_id": None,
            "collected": False,
            "created_at": int(time.time()),
        }
        self.state.uploads.setdefault(file_id, {**self.owner, "custom_ids": custom_ids})
        self.state.uploads[file_id]["batch_id"] = batch.id
        self.state.save()

    # -- submit ------------------------------------------------------------------------------

    async def _reattach_uploads(self) -> None:
        for file_id, upload in list(self.state.uploads.items()):
            if not _owned(upload, self.owner) or upload.get("batch_id"):
                continue
            batch = await self._find_batch(file_id) or await self._create(file_id)
            self._register(batch, file_id, upload["custom_ids"])

    async def _submit(self, items: list[RequestItem]) -> None:
        if not items:
            return
        schema = self.schema if self.structured else None
        chunks = split_chunks(batch_lines(items, self.spec, schema), self.options.limits)
        for n, chunk in enumerate(chunks, 1):
            data = b"".join(line for _, line in chunk)
            digest = hashlib.sha256(data).hexdigest()[:16]
            name = f"kgbench-{self.spec.slug}-{digest}.jsonl"
            atomic_write_bytes(self.dir / "inputs" / name, data)
            if self.progress.enabled:
                self.progress.set_description(f"uploading batch {n}/{len(chunks)}")
            uploaded = await self._call(
                "upload",
                lambda name=name, data=data: self.client.files.create(
                    file=(name, data, "application/jsonl"), purpose="batch"
                ),
            )
            ids = [cid for cid, _ in chunk]
            self.state.uploads[uploaded.id] = {
                **self.owner,
                "custom_ids": ids,
                "batch_id": None,
                "local_file": f"inputs/{name}",
            }
            self.state.save()
            batch = await self._create(uploaded.id)
            self._register(batch, uploaded.id, ids)
            self.submitted += len(ids)

    # -- poll and collect --------------------------------------------------------------------

    async def _poll(self) -> None:
        interval = self.options.poll_interval_s
        while True:
            open_ids = self.state.open_batches(self.owner)
            if not open_ids:
                return
            for bid in open_ids:
                batch = await self._call(
                    "retrieve", lambda bid=bid: self.client.batches.retrieve(bid)
                )
                entry = self.state.batches[bid]
                if entry["status"] != batch.status:
                    entry["status"] = batch.status
                    self.state.save()
                if batch.status in TERMINAL:
                    await self._collect(bid, batch)
            if self.progress.enabled:
                waiting = len(self.state.open_batches(self.owner))
                self.progress.set_description(f"batch: {waiting} waiting")
            if self.state.open_batches(self.owner):
                await asyncio.sleep(interval)
                interval = min(self.options.poll_cap_s, interval * 1.5)

    async def _download(self, file_id: str, bid: str, kind: str) -> list[dict[str, Any]]:
        content = await self._call("download", lambda: self.client.files.content(file_id))
        data = content.content
        atomic_write_bytes(self.dir / "results" / f"{bid}-{kind}.jsonl", data)
        rows = []
        for _, line in untrusted_lines(data.decode("utf-8", errors="replace")):
            if not line.strip():
                continue
            try:
                row = parse_json(line, max_depth=None, allow_nan=True)
            except ParseError:
                continue  # a damaged line: its request has no result and is sent again
            if isinstance(row, dict):
                rows.append(row)
        return rows

    async def _collect(self, bid: str, batch: Any) -> None:
        entry = self.state.batches[bid]
        rows: list[dict[str, Any]] = []
        if batch.output_file_id:
            rows += await self._download(batch.output_file_id, bid, "output")
        if batch.error_file_id:
            rows += await self._download(batch.error_file_id, bid, "errors")
        records, not_run, unknown = [], 0, 0
        for row in rows:
            cid = row.get("custom_id")
            item = self.lookup.get(cid)
            if item is None:
                unknown += 1
                continue
            if cid in self.done:
                continue
            record = self._record(item, row, bid)
            if record is None:
                not_run += 1
                continue
            records.append(record)
            self.done.add(cid)
        self.log.append(records)
        if self.cache is not None:
            self.cache.append([r for r in records if r["status"] == "ok"])
        for record in records:
            self.tally.count(record)
            self.progress.advance(record)
        entry.update(
            status=batch.status,
            output_file_id=batch.output_file_id,
            error_file_id=batch.error_file_id,
            collected=True,
        )
        self.state.save()
        if batch.status != "completed":
            missing = len(set(entry["custom_ids"]) - self.done)
            errors = getattr(getattr(batch, "errors", None), "data", None) or []
            detail = "; ".join(
                scrub(str(getattr(e, "message", e)), self.secrets) for e in errors[:3]
            )
            self.tally.notes.append(
                f"batch {bid} ended {batch.status}: {len(records)} results collected, "
                f"{missing} requests without a result will be sent by the next run"
                + (f" ({detail})" if detail else "")
            )
        if unknown:
            self.tally.notes.append(f"batch {bid}: {unknown} results for requests not in this plan")

    def _record(self, item: RequestItem, row: dict[str, Any], bid: str) -> dict[str, Any] | None:
        response = row.get("response") if isinstance(row.get("response"), dict) else {}
        error = row.get("error") if isinstance(row.get("error"), dict) else {}
        status = response.get("status_code")
        if status == 200 and isinstance(response.get("body"), dict):
            try:
                completion = Completion.from_dict(
                    response["body"], self.structured, response.get("request_id")
                )
            except MalformedCompletion as exc:
                return failed_record(
                    item, self.spec, str(exc), attempts=1, mode="batch", batch_id=bid
                )
            return ok_record(
                item,
                self.spec,
                completion,
                self.judge,
                self.prices,
                attempts=1,
                latency_s=None,
                mode="batch",
                batch_id=bid,
            )
        if error.get("code") in NOT_RUN:
            return None
        body_error = (
            (response.get("body") or {}).get("error")
            if isinstance(response.get("body"), dict)
            else None
        )
        message = (
            (body_error or {}).get("message") or error.get("message") or "batch request failed"
        )
        return failed_record(
            item,
            self.spec,
            scrub(str(message), self.secrets)[:1000],
            attempts=1,
            mode="batch",
            status_code=status,
            batch_id=bid,
        )

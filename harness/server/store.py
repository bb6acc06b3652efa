"""In-memory Files and Batches for the reference server.

Batches run in a background thread each, walking validating -> in_progress -> finalizing ->
completed like the real API, so a client has to poll and may crash and re-attach in between.
`expire_first` makes the first N batches expire half-way with partial results and an error
file, which is what a real expired batch looks like.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgbench.untrusted import lines as untrusted_lines
from kgbench.untrusted import parse_json_or_none

TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})

Answer = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns a chat-completions request body into a chat-completion object."""


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
        }


@dataclass
class BatchJob:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, Any] | None
    created_at: int
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: {"total": 0, "completed": 0, "failed": 0}
    )
    errors: list[dict[str, Any]] = field(default_factory=list)
    cancel_requested: bool = False
    stamps: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "completion_window": self.completion_window,
            "input_file_id": self.input_file_id,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "metadata": self.metadata,
            "request_counts": dict(self.counts),
            "errors": {"object": "list", "data": list(self.errors)} if self.errors else None,
            **self.stamps,
        }


class Store:
    """Thread-safe files and batches; `answer` computes each batch line's completion."""

    def __init__(
        self, answer: Answer, step_s: float, expire_first: int, stop: threading.Event
    ) -> None:
        self._answer = answer
        self._step_s = step_s
        self._expire_left = expire_first
        self._stop = stop
        self._lock = threading.Lock()
        self._seq = 0
        self.files: dict[str, StoredFile] = {}
        self.batches: dict[str, BatchJob] = {}

    def _next(self, prefix: str) -> str:
        with self._lock:
            self._seq += 1
            return f"{prefix}-{self._seq:06d}"

    def add_file(self, filename: str, purpose: str, data: bytes) -> StoredFile:
        f = StoredFile(self._next("file"), filename, purpose, data, int(time.time()))
        with self._lock:
            self.files[f.id] = f
        return f

    def create_batch(self, body: dict[str, Any]) -> BatchJob:
        """Register a batch and start processing it in the background."""
        job = BatchJob(
            id=self._next("batch"),
            input_file_id=str(body.get("input_file_id")),
            endpoint=str(body.get("endpoint", "/v1/chat/completions")),
            completion_window=str(body.get("completion_window", "24h")),
            metadata=body.get("metadata"),
            created_at=int(time.time()),
        )
        with self._lock:
            self.batches[job.id] = job
            expire = self._expire_left > 0
            self._expire_left -= 1 if expire else 0
        threading.Thread(target=self._process, args=(job, expire), daemon=True).start()
        return job

    def cancel(self, batch_id: str) -> BatchJob | None:
        job = self.batches.get(batch_id)
        if job is not None and job.status not in TERMINAL:
            job.cancel_requested = True
            job.status = "cancelling"
        return job

    def _set(self, job: BatchJob, status: str) -> None:
        job.status = status
        job.stamps[f"{status}_at"] = int(time.time())

    def _process(self, job: BatchJob, expire: bool) -> None:
        if self._stop.wait(self._step_s):
            return
        source = self.files.get(job.input_file_id)
        lines = []
        if source is not None:
            text = source.data.decode("utf-8", errors="replace")
            lines = [parse_json_or_none(ln) for _, ln in untrusted_lines(text) if ln.strip()]
        bad = [
            ln
            for ln in lines
            if not isinstance(ln, dict) or not ln.get("custom_id") or ln.get("method") != "POST"
        ]
        if source is None or not lines or bad:
            job.errors.append({"code": "invalid_file", "message": "input file missing or invalid"})
            self._set(job, "failed")
            return
        job.counts["total"] = len(lines)
        self._set(job, "in_progress")
        if self._stop.wait(self._step_s):
            return
        stop_at = len(lines) // 2 if expire else len(lines)
        out, err = [], []
        for i, line in enumerate(lines):
            if i >= stop_at or job.cancel_requested:
                code = "batch_cancelled" if job.cancel_requested else "batch_expired"
                err.append(_error_line(i, job, line, code))
                continue
            completion = self._answer(dict(line.get("body") or {}))
            out.append(
                {
                    "id": f"{job.id}-req-{i}",
                    "custom_id": line["custom_id"],
                    "response": {
                        "status_code": 200,
                        "request_id": f"req-{job.id}-{i}",
                        "body": completion,
                    },
                    "error": None,
                }
            )
        job.counts["completed"] = len(out)
        job.counts["failed"] = len(err)
        self._set(job, "finalizing")
        if out:
            job.output_file_id = self.add_file(
                f"{job.id}_output.jsonl", "batch_output", _jsonl(out)
            ).id
        if err:
            job.error_file_id = self.add_file(
                f"{job.id}_error.jsonl", "batch_output", _jsonl(err)
            ).id
        if job.cancel_requested:
            self._set(job, "cancelled")
        else:
            self._set(job, "expired" if expire else "completed")


def _error_line(i: int, job: BatchJob, line: dict[str, Any], code: str) -> dict[str, Any]:
    return {
        "id": f"{job.id}-req-{i}",
        "custom_id": line["custom_id"],
        "response": None,
        "error": {"code": code, "message": f"request not executed ({code})"},
    }


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()

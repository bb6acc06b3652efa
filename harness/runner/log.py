"""Append-only JSONL record files: the run's response log and the shared response cache.

Durability is what makes a run resumable: a record is written with one `write` on an
O_APPEND descriptor, then fsync'd, before the run counts it as done; records that arrive
while an fsync is in progress share the next one (group commit), so no record is reported
done before it is on disk. A crash (even SIGKILL) can leave at most a partial last line,
which the next load cuts off; the request behind it is simply sent again.

The cache is shared between runs (and processes), so its writes hold an exclusive `flock`
and reads skip lines they cannot parse instead of failing.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError
from kgbench.io import atomic_write_bytes, utf8_bytes
from kgbench.untrusted import ParseError, parse_json

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]


def dumps_record(record: dict[str, Any]) -> bytes:
    """One log line. Model text may hold lone surrogates; `utf8_bytes` escapes them, so the
    answer is logged (and a resumed run does not re-send it) instead of crashing the writer."""
    return utf8_bytes(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


class JsonlLog:
    """One JSONL file of records keyed by `key`; `shared=True` for the cross-run cache."""

    def __init__(self, path: Path, shared: bool = False) -> None:
        self.path = Path(path)
        self.shared = shared
        self._fd: int | None = None

    # -- reading -----------------------------------------------------------------------------

    def load(self, wanted: set[str] | None = None) -> tuple[dict[str, dict[str, Any]], int]:
        """The last record per key (only keys in `wanted` if given) and the number of lines
        superseded by a later record for the same key."""
        if not self.path.exists():
            return {}, 0
        if not self.shared:
            self._cut_partial_tail()
        latest: dict[str, dict[str, Any]] = {}
        lines = 0
        with self.path.open("rb") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = parse_json(  # a model may answer 1e999: logged as Infinity
                        line.decode("utf-8", errors="replace"), max_depth=None, allow_nan=True
                    )
                    key = record["key"]
                except (ParseError, KeyError, TypeError):
                    if self.shared:
                        continue
                    raise UserError(
                        "corrupt record in the response log; delete this line to re-send it",
                        Location(str(self.path), n),
                    ) from None
                lines += 1
                if wanted is None or key in wanted:
                    latest[key] = record
        superseded = lines - len(latest) if wanted is None else 0
        return latest, superseded

    def _cut_partial_tail(self) -> None:
        """Drop a final line without its newline: the remains of a write cut short by a crash."""
        size = self.path.stat().st_size
        if size == 0:
            return
        with self.path.open("rb+") as fh:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return
            chunk = 1 << 16
            pos = size
            while pos > 0:
                start = max(0, pos - chunk)
                fh.seek(start)
                block = fh.read(pos - start)
                idx = block.rfind(b"\n")
                if idx >= 0:
                    fh.truncate(start + idx + 1)
                    return
                pos = start
            fh.truncate(0)

    # -- writing -----------------------------------------------------------------------------

    def append(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records durably (one write, then fsync)."""
        data = b"".join(dumps_record(r) for r in records)
        if not data:
            return
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        if self.shared and fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            if self.shared and _ends_without_newline(self._fd):
                data = b"\n" + data
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        finally:
            if self.shared and fcntl is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def compact(self) -> int:
        """Rewrite atomically keeping the last record per key (first-seen order); returns the
        number of lines dropped."""
        self.close()
        records, superseded = self.load()
        if superseded:
            atomic_write_bytes(self.path, b"".join(dumps_record(r) for r in records.values()))
        return superseded


def _ends_without_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


class RecordWriter:
    """The single writer of a run: records from all workers go through one queue, so lines
    never interleave; writes run in a thread so fsync never blocks the event loop."""

    def __init__(
        self,
        log: JsonlLog,
        cache: JsonlLog | None = None,
        on_durable: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.log = log
        self.cache = cache
        self.on_durable = on_durable
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    def put(self, record: dict[str, Any]) -> None:
        """Queue a record; if the writer died (disk full...), raise its error here at once."""
        if self._task is not None and self._task.done() and self._task.exception():
            raise self._task.exception()  # type: ignore[misc]
        self._queue.put_nowait(record)

    async def close(self) -> None:
        self._queue.put_nowait(None)
        if self._task is not None:
            await self._task
        self.log.close()
        if self.cache is not None:
            self.cache.close()

    async def _run(self) -> None:
        done = False
        while not done:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            done = batch[-1] is None or None in batch
            records = [r for r in batch if r is not None]
            if not records:
                continue
            await asyncio.to_thread(self._write, records)
            if self.on_durable is not None:
                for record in records:
                    self.on_durable(record)

    def _write(self, records: list[dict[str, Any]]) -> None:
        self.log.append(records)
        if self.cache is not None:
            fresh = [r for r in records if r.get("status") == "ok" and not r.get("cached")]
            if fresh:
                self.cache.append(fresh)


class RunLock:
    """One runner per (run folder, model) at a time: two would send the same requests twice.

    An flock on a lock file: the kernel drops it when the holder dies, even by SIGKILL, so a
    crashed run never leaves a stale lock behind.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(self._fd)
                self._fd = None
                raise UserError(
                    f"another `kgbench run` is writing {self.path.parent} for this model; "
                    "wait for it to finish (or stop it) and run again"
                ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

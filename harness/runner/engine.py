"""Online execution: many requests in flight, adaptive concurrency, counted retries.

A fixed pool of workers takes requests from a queue; each attempt holds a slot of the
adaptive limiter only while the HTTP call is in flight (not while backing off), so a worker
sleeping out a Retry-After never blocks the others. Every outcome becomes exactly one record
handed to the single writer. A `fatal` failure (bad key, unknown model, unreachable endpoint
before any success) stops the run with a ServiceError: hundreds of identical failed records
would help nobody; so do three request-specific refusals (another 4xx) before any success,
which almost always mean a setting the endpoint rejects (an unsupported parameter).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kgbench.errors import ServiceError

from .client import Completion, RequestFailure
from .controller import AdaptiveLimiter, AIMDController, backoff_delay
from .plan import RequestItem


class Transport(Protocol):
    structured: bool
    fell_back: bool

    async def complete(self, item: RequestItem) -> Completion: ...

    def scrub(self, text: str) -> str: ...


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    """Sends per request for 5xx, timeouts and dropped connections."""
    rate_limit_attempts: int = 24
    """Sends per request when the endpoint keeps answering 429 (pacing, not failure)."""
    base_s: float = 1.0
    cap_s: float = 60.0

    def delay(self, retry: int, rng: random.Random) -> float:
        """Seconds to wait before retry number `retry` (0-based): the one backoff of the
        runner (full jitter, `controller.backoff_delay`), for requests and batch calls alike."""
        return backoff_delay(retry, self.base_s, self.cap_s, rng)


OnOk = Callable[[RequestItem, Completion, int, float], dict[str, Any]]
OnFailed = Callable[[RequestItem, RequestFailure, int], dict[str, Any]]


class OnlineRunner:
    """Runs `items` through `transport`; `emit` receives every record (the writer's put)."""

    def __init__(
        self,
        transport: Transport,
        concurrency: int,
        policy: RetryPolicy,
        make_ok: OnOk,
        make_failed: OnFailed,
        emit: Callable[[dict[str, Any]], None],
        seed: int | None = None,
    ) -> None:
        self.transport = transport
        self.controller = AIMDController(concurrency)
        self.limiter = AdaptiveLimiter(self.controller)
        self.policy = policy
        self.make_ok = make_ok
        self.make_failed = make_failed
        self.emit = emit
        self.rng = random.Random(seed)
        self.successes = 0
        self.early_permanent = 0
        self.total = 0
        self.fatal: ServiceError | None = None

    async def run(self, items: list[RequestItem]) -> None:
        self.total = len(items)
        queue: asyncio.Queue[RequestItem] = asyncio.Queue()
        for item in items:
            queue.put_nowait(item)
        workers = min(len(items), max(2 * self.controller.max_limit, 8))
        tasks = [asyncio.create_task(self._worker(queue)) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
        except _Abort:
            pass
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if self.fatal is not None:
            raise self.fatal

    async def _worker(self, queue: asyncio.Queue[RequestItem]) -> None:
        while not queue.empty():
            item = queue.get_nowait()
            record = await self._one(item)
            self.emit(record)

    async def _one(self, item: RequestItem) -> dict[str, Any]:
        attempts = 0
        errors = 0
        limited = 0
        while True:
            epoch = await self.limiter.acquire()
            attempts += 1
            started = time.perf_counter()
            try:
                completion = await self.transport.complete(item)
            except RequestFailure as failure:
                kind = failure.kind
                await self.limiter.release(
                    "rate_limited" if kind == "rate_limited" else "error", epoch
                )
                if kind == "fatal":
                    self._abort(failure)
                if kind == "permanent":
                    if self.successes == 0:
                        self.early_permanent += 1
                        if self.early_permanent >= min(3, self.total):
                            self._abort(failure)
                    return self.make_failed(item, failure, attempts)
                if kind == "rate_limited":
                    limited += 1
                    exhausted = limited >= self.policy.rate_limit_attempts
                    delay = failure.retry_after
                else:
                    errors += 1
                    exhausted = errors >= self.policy.max_attempts
                    delay = None
                if exhausted:
                    if kind == "connection" and self.successes == 0:
                        self._abort(failure)
                    return self.make_failed(item, failure, attempts)
                if delay is None:
                    delay = self.policy.delay(errors + limited - 1, self.rng)
                await asyncio.sleep(delay)
                continue
            await self.limiter.release("ok", epoch)
            self.successes += 1
            return self.make_ok(item, completion, attempts, time.perf_counter() - started)

    def _abort(self, failure: RequestFailure) -> None:
        if self.fatal is None:
            hint = {
                401: "check OPENAI_API_KEY",
                403: "the key may lack access to this model",
                404: "check the model name and --base-url",
            }.get(failure.status or 0, "")
            text = f"the endpoint refused the run: {failure.message}"
            if failure.kind == "connection":
                hint = "is the endpoint running? check --base-url"
                text = f"cannot reach the endpoint: {failure.message}"
            self.fatal = ServiceError(text + (f" ({hint})" if hint else ""))
        raise _Abort


class _Abort(Exception):
    """Unwinds every worker after a fatal failure."""

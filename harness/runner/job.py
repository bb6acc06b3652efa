"""What the send pipeline (harness.runner.pipeline) is given.

- `SendOptions`: how to send (model, endpoint, sampling settings, concurrency, retries,
  cache, batch); the shared base of `RunConfig` (`kgbench run`) and `StageConfig` (stages),
  so an option added here reaches both, and the pipeline reads no other config.
- `Job`: what to send (the planned requests) and where its records and state go; the one
  place where `kgbench run` and a stage differ.
- `Books`: the bookkeeping of one send (log, cache, counts, progress, prices), handed to the
  online and the batch path alike instead of a dozen loose arguments.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from rich.console import Console

from .engine import RetryPolicy, Transport
from .log import JsonlLog
from .plan import RequestItem, Settings
from .pricing import Prices
from .progress import RunProgress, Tally
from .records import Judges
from .spec import ModelSpec


@dataclass(frozen=True)
class BatchLimits:
    """Per-file limits of the Batch API (parameters so tests can use tiny ones)."""

    max_requests: int = 50_000
    max_bytes: int = 200 * 1024 * 1024


@dataclass(frozen=True)
class BatchOptions:
    limits: BatchLimits = BatchLimits()
    poll_interval_s: float = 10.0
    poll_cap_s: float = 300.0
    wait: bool = True
    stop_after_submit: bool = False
    """Test hook: return right after the state file records the batches (like a crash)."""


@dataclass(frozen=True, kw_only=True)
class SendOptions:
    """The runner's options, as `kgbench run` has them (keyword-only, so subclasses add their
    own fields in front)."""

    model: str
    base_url: str | None = None
    settings: Settings = field(default_factory=Settings)
    concurrency: int = 16
    retry_failed: bool = False
    batch: bool = False
    price_in: float | None = None
    price_out: float | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    timeout_s: float = 300.0
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    batch_options: BatchOptions = field(default_factory=BatchOptions)


@dataclass(frozen=True)
class Started:
    """When a command started: its run.json's `started_at`, and the clock its `wall_s`
    counts from (the whole command, reading and planning included)."""

    clock: float
    at: str

    @classmethod
    def now(cls) -> Started:
        return cls(time.perf_counter(), datetime.now(UTC).isoformat(timespec="seconds"))


@dataclass
class Job:
    """What to send and where its records go."""

    spec: ModelSpec
    plan: list[RequestItem]
    """The requests of this invocation, one per key."""
    log_path: Path
    meta_path: Path
    """The invocation's settings and counts (`<log>.run.json`)."""
    batch_dir: Path
    """The Batch API state (state.json, inputs/, results/)."""
    step: str
    """The job's name in the command's failure ledger (`run <log>`, `stage <name>`)."""
    started: Started
    label: str = ""
    """Put before the model in the progress bar (a stage's name)."""
    schema: dict[str, Any] = field(default_factory=dict)
    """The response schema of every request; {}: each request carries its own."""
    known: dict[str, RequestItem] | None = None
    """Every request a batch result may answer (a run's whole plan, before --limit); None:
    the plan."""
    reference: Callable[[], Transport] | None = None
    """Makes the in-process transport of a `ref:` model."""
    check_log: Callable[[dict[str, dict[str, Any]], Tally], None] | None = None
    """Looks at the records already in the log before anything is sent (may refuse)."""
    describe: Callable[[dict[str, dict[str, Any]]], dict[str, Any]] | None = None
    """The job's own keys of run.json, from the final records."""
    skip_idle: bool = False
    """With nothing left to send, only read the log: no price note, no visit to earlier
    batches (stages: a multi-step procedure runs every stage again when it resumes)."""
    retry_hint: bool = False
    """Note how to re-send failed records (`kgbench run --retry-failed`)."""

    @property
    def lookup(self) -> dict[str, RequestItem]:
        if self.known is None:
            self.known = {item.key: item for item in self.plan}
        return self.known

    @cached_property
    def judge(self) -> Judges:
        """The compiled contracts of the job's answers (refuses a schema the judge cannot
        interpret, before anything is sent)."""
        return Judges(self.schema, self.plan)


@dataclass
class Books:
    """The bookkeeping of one send: every record goes to `log` (and ok ones to `cache`) and
    is counted in `tally` and `progress`; `done` holds the keys that have a final answer."""

    log: JsonlLog
    cache: JsonlLog | None
    tally: Tally
    done: set[str]
    prices: Prices
    progress: RunProgress
    console: Console

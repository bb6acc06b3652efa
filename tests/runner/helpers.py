"""Shared helpers for the runner's integration tests."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.runner.api import RunConfig, RunResult, run_model
from harness.runner.engine import RetryPolicy
from harness.runner.job import BatchOptions

FAST = RetryPolicy(max_attempts=6, base_s=0.01, cap_s=0.05)


def quiet() -> Console:
    return Console(file=io.StringIO(), force_terminal=False)


def run(run_dir: Path, model: str, cache_dir: Path, **kw: Any) -> RunResult:
    """run_model with test-friendly defaults (fast backoff, short timeout, own cache)."""
    kw.setdefault("policy", FAST)
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("concurrency", 32)
    kw.setdefault("batch_options", BatchOptions(poll_interval_s=0.02, poll_cap_s=0.1))
    return run_model(RunConfig(run_dir=run_dir, model=model, cache_dir=cache_dir, **kw), quiet())

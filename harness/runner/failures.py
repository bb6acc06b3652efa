"""Failures fail: a command that sent requests exits non-zero when any of them ended failed
or missing, with one summary line, unless the user said `--allow-failures`.

Every place that sends requests (`run_model` for `kgbench run`, `run_stage` for the stages
of `verify`, `probe` and `study`) reports its final counts with `note_requests`; the command
collects them in a `FailureLedger` for its whole length (`checked_failures`) and decides at
the end. A request that has no record because its batches were submitted without waiting
(`--no-wait`) is *pending*, not missing: the user asked for exactly that.

Why an exit code and not only a note in the summary: a script or CI job that runs
`kgbench run` against an endpoint that failed all 320 requests must not go on as if the
model had answered (inspect-ai fails an eval on sample errors by default, for the same
reason). The failed records stay in the log; `--retry-failed` re-sends them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from kgbench.errors import RequestsFailed


@dataclass
class FailureLedger:
    """Final failed and missing request counts, per step, for one command."""

    failed: int = 0
    missing: int = 0
    pending: int = 0
    steps: list[str] = field(default_factory=list)

    def add(self, step: str, failed: int, missing: int, pending: int = 0) -> None:
        self.failed += failed
        self.missing += missing
        self.pending += pending
        if failed or missing:
            self.steps.append(f"{step} ({failed} failed, {missing} missing)")

    @property
    def any(self) -> bool:
        return bool(self.failed or self.missing)

    def summary(self) -> str:
        """The one line printed when requests failed (names at most three steps)."""
        shown = ", ".join(self.steps[:3]) + (
            f" and {len(self.steps) - 3} more" if len(self.steps) > 3 else ""
        )
        return (
            f"{self.failed} request(s) failed and {self.missing} missing: {shown}; "
            "re-send failed ones with --retry-failed, or pass --allow-failures to accept them"
        )


_current: ContextVar[FailureLedger | None] = ContextVar("kgbench_failure_ledger", default=None)


def note_requests(step: str, failed: int, missing: int, pending: int = 0) -> None:
    """Record a step's final counts in the ledger of the command running it (if any)."""
    ledger = _current.get()
    if ledger is not None:
        ledger.add(step, failed, missing, pending)


@contextmanager
def failure_ledger() -> Iterator[FailureLedger]:
    """Collect `note_requests` calls made inside the block (nested blocks stack)."""
    ledger = FailureLedger()
    token = _current.set(ledger)
    try:
        yield ledger
    finally:
        _current.reset(token)
        outer = _current.get()
        if outer is not None:
            outer.failed += ledger.failed
            outer.missing += ledger.missing
            outer.pending += ledger.pending
            outer.steps.extend(ledger.steps)


@contextmanager
def checked_failures(allow_failures: bool) -> Iterator[FailureLedger]:
    """Run a command's work; raise `RequestsFailed` after it if any request failed or is
    missing and failures were not allowed. The command's own output is written first, so
    a failed run still leaves its summary, log and scores behind."""
    with failure_ledger() as ledger:
        yield ledger
    if ledger.any and not allow_failures:
        raise RequestsFailed(ledger.summary())


ALLOW_FAILURES_HELP = (
    "Exit 0 even when requests ended failed or missing (default: exit 1 with a summary line; "
    "the failed records stay in the log either way)."
)

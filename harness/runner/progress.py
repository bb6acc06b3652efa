"""Progress bar (stderr, only on a terminal) and the end-of-run summary (always)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


@dataclass
class Tally:
    """What this invocation did (records already in the log before it are `previous_*`)."""

    planned: int = 0
    previous_ok: int = 0
    previous_failed: int = 0
    sent_ok: int = 0
    sent_failed: int = 0
    cached: int = 0
    requests: int = 0
    retries: int = 0
    parse_failures: int = 0
    schema_failures: int = 0
    truncated: int = 0
    refusals: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    missing: int = 0
    final_ok: int = 0
    final_failed: int = 0
    notes: list[str] = field(default_factory=list)

    def count(self, record: dict[str, Any]) -> None:
        """Count one record written by this invocation."""
        if record.get("cached"):
            self.cached += 1
        elif record["status"] == "ok":
            self.sent_ok += 1
        else:
            self.sent_failed += 1
        if not record.get("cached"):
            self.requests += int(record.get("attempts") or 0)
            self.retries += max(0, int(record.get("attempts") or 0) - 1)
            usage = record.get("usage") or {}
            self.tokens_in += int(usage.get("prompt_tokens") or 0)
            self.tokens_out += int(usage.get("completion_tokens") or 0)
            self.cost_usd += float(record.get("cost_usd") or 0.0)
        if record["status"] == "ok":
            self.parse_failures += not record["parse_ok"]
            self.schema_failures += record["parse_ok"] and not record["schema_ok"]
            self.truncated += record.get("finish_reason") == "length"
            self.refusals += bool(record.get("refusal"))


class RunProgress:
    """A rich progress bar on stderr; a no-op when stderr is not a terminal."""

    def __init__(self, total: int, label: str, console: Console, tally: Tally) -> None:
        self.tally = tally
        self.enabled = console.is_terminal and total > 0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[tokens]} tok  ${task.fields[cost]}"),
            console=console,
            disable=not self.enabled,
            transient=False,
        )
        self._task = self._progress.add_task(
            escape(label), total=total, failed=0, rate="", tokens=0, cost="0.0000"
        )

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)

    def advance(self, record: dict[str, Any]) -> None:
        if not self.enabled:
            return
        t = self.tally
        task = self._progress.tasks[0]
        elapsed = task.elapsed or 0.0
        done = task.completed + 1
        rate = f"{done / elapsed:.1f} req/s" if elapsed > 0 else ""
        self._progress.update(
            self._task,
            advance=1,
            failed=t.sent_failed,
            rate=rate,
            tokens=t.tokens_in + t.tokens_out,
            cost=f"{t.cost_usd:.4f}",
        )

    def set_description(self, text: str) -> None:
        self._progress.update(self._task, description=escape(text))


def summary_lines(t: Tally, wall_s: float, log_path: str, prices: str) -> list[str]:
    lines = [
        f"responses: {log_path}",
        f"requests planned {t.planned}: ok {t.final_ok}, failed {t.final_failed}, missing {t.missing}",
        f"this run: {t.sent_ok} answered, {t.sent_failed} failed, {t.cached} from cache, "
        f"{t.previous_ok + t.previous_failed} already in the log; "
        f"{t.requests} HTTP requests ({t.retries} retries)",
        f"answers: {t.parse_failures} did not parse, {t.schema_failures} failed the schema, "
        f"{t.truncated} truncated, {t.refusals} refusals",
        f"tokens: {t.tokens_in} in, {t.tokens_out} out; estimated cost ${t.cost_usd:.4f} ({prices})",
        f"wall time {wall_s:.2f} s",
    ]
    return lines + t.notes

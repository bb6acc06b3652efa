"""A prompts file: one rendered prompt a line (prompts/prompts.jsonl, which `kgbench prompts`
writes and `kgbench run` answers, and prompts/verify.jsonl, the C5 answer prompts).

Its one owner: the record a prompt is written as and the check of a line read back. Where
the files sit, and what to run when one is missing, is the run folder's (harness.runfolder).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError
from kgbench.io import atomic_write_text, jsonl_text
from kgbench.untrusted import ParseError, parse_json


@dataclass(frozen=True)
class Prompt:
    """One rendered prompt (a line of prompts/prompts.jsonl)."""

    prompt_id: str
    scenario_id: str
    condition: str
    messages: list[dict[str, Any]]
    sha256: str | None = None
    presentation: str | None = None
    """A declared presentation of the options (order sensitivity, harness.evaluation.order); None for
    the original order, which is what the panel scores."""

    @property
    def text(self) -> str:
        """The user content (the frame is a single user message)."""
        return "\n".join(
            str(m.get("content", "")) for m in self.messages if m.get("role") == "user"
        )

    def record(self) -> dict[str, Any]:
        record = {
            "prompt_id": self.prompt_id,
            "scenario_id": self.scenario_id,
            "condition": self.condition,
            "messages": self.messages,
            "sha256": self.sha256,
        }
        if self.presentation is not None:  # absent, not null: original prompts stay as they were
            record["presentation"] = self.presentation
        return record


def write_prompts(path: Path, prompts: Iterable[Prompt]) -> Path:
    """Write a prompts file at once (atomic: a reader never sees half of one)."""
    atomic_write_text(path, jsonl_text(p.record() for p in prompts))
    return path


def read_prompts(path: Path, limit: int | None = None) -> list[Prompt]:
    """The prompts of an existing file in file order (the first `limit` of them)."""
    prompts: list[Prompt] = []
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, 1):
            if not line.strip():
                continue
            if limit is not None and len(prompts) >= limit:
                break
            prompts.append(parse_prompt(line, Location(str(path), n)))
    return prompts


def parse_prompt(line: str, where: Location) -> Prompt:
    """One line of a prompts file, checked (a hand edit is one message naming the line)."""
    try:
        row = parse_json(line)
    except ParseError as exc:
        raise UserError(exc.message, where) from None
    messages = row.get("messages") if isinstance(row, dict) else None
    if (
        not isinstance(messages, list)
        or not messages
        or not all(isinstance(m, dict) and "role" in m and "content" in m for m in messages)
    ):
        raise UserError("'messages' must be a non-empty list of {role, content}", where)
    if not isinstance(row.get("prompt_id"), str) or not row["prompt_id"]:
        raise UserError("'prompt_id' is missing", where)
    sha = row.get("sha256")
    presentation = row.get("presentation")
    if presentation is not None and (not isinstance(presentation, str) or not presentation):
        raise UserError("'presentation' must be a presentation id", where)
    return Prompt(
        prompt_id=row["prompt_id"],
        scenario_id=str(row.get("scenario_id", "")),
        condition=str(row.get("condition", "")),
        messages=messages,
        sha256=sha if isinstance(sha, str) else None,
        presentation=presentation,
    )

"""A responses log as the scorer reads it (`ResponsesLog.read`), and the one rule for which
answer of a record is scored (`answer_of`): the runner's parsed object, else the raw text.

Records are kgbench.contract.ResponseRecord lines (or unversioned ones of earlier runners),
kept as plain-dict `RecordView`s: no model on the scorer's hot path, and the answer held once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgbench.contract import PARSE_STATUSES, RecordView, record_version_problem
from kgbench.errors import Location, UserError
from kgbench.untrusted import ParseError, parse_json

from .judge import Judgement

# Without a declaration (run.json or the log's own settings), a replicate index beyond this is
# a corrupt record, not a reason to expect a million answers per prompt.
MAX_UNDECLARED_REPLICATES = 100


class MixedLogError(UserError):
    """One (prompt, replicate) answered under two request identities in one log."""


@dataclass
class ResponsesLog:
    """A responses log read leniently: a truncated or garbled line is counted, not fatal.

    Two kinds of repeated (prompt, replicate) record are told apart by the request key the
    runner writes on every record (a hash of model, messages, endpoint and parameters):
      - the same key again is a retry (a failed request re-sent): the last ok record wins,
        and the superseded ones are counted;
      - another key means another endpoint or other parameters answered the same prompt
        (e.g. a second `kgbench run` with another --base-url): mixing them would score a
        blend, so reading the log stops with a MixedLogError naming the first such pair.
    Records without a key (written by hand or by other tools) count as retries.
    """

    path: Path
    records: dict[tuple[str, int], RecordView]
    model: str
    unreadable: int
    superseded: int = 0
    out_of_range: int = 0

    @classmethod
    def read(
        cls, path: Path, max_replicates: int | None = None, judged_with: str | None = None
    ) -> ResponsesLog:
        """Read the log; a record whose replicate is not below `max_replicates` (the declared
        number of replicates) is counted as out of range and not scored. `judged_with`: the
        digest of the contract the reader scores with; a record judged under it whose
        judgement holds its fields is kept without its raw text (it is not judged again)."""
        limit = MAX_UNDECLARED_REPLICATES if max_replicates is None else max_replicates
        chosen: dict[tuple[str, int], RecordView] = {}
        identity: dict[tuple[str, int], str] = {}
        unreadable = superseded = out_of_range = 0
        models: list[str] = []
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    rec = parse_json(line, max_depth=None, allow_nan=True)
                except ParseError:
                    unreadable += 1
                    continue
                replicate = rec.get("replicate", 0) if isinstance(rec, dict) else None
                if (
                    not isinstance(rec, dict)
                    or not isinstance(rec.get("prompt_id"), str)
                    or not isinstance(replicate, int)
                    or isinstance(replicate, bool)
                    or replicate < 0
                ):
                    unreadable += 1
                    continue
                problem = record_version_problem(rec)
                if problem is not None:  # another kgbench's record: named, never half-read
                    raise UserError(problem, Location(str(path), number))
                if replicate >= limit:
                    out_of_range += 1
                    continue
                if isinstance(rec.get("model"), str):
                    models.append(rec["model"])
                key = (rec["prompt_id"], replicate)
                request = rec.get("key") if isinstance(rec.get("key"), str) else None
                if request is not None:
                    first = identity.setdefault(key, request)
                    if first != request:
                        raise MixedLogError(_mixed_message(path, key, chosen[key], rec))
                if key in chosen:
                    superseded += 1
                # Appended retries: the last ok record wins, else the last record.
                if rec.get("status") == "ok" or chosen.get(key, {}).get("status") != "ok":
                    chosen[key] = _scoring_view(rec, judged_with)
        model = models[-1] if models else path.stem
        return cls(path, chosen, model, unreadable, superseded, out_of_range)


# The record's fields a RecordView keeps besides the answer (`parsed` or `raw`), and the
# judge's recorded verdict (record 1.2, kgbench.contract.judgement), taken as made.
SCORING_FIELDS = (
    *(k for k in RecordView.__annotations__ if k not in ("parsed", "raw")),
    "judgement",
)


def answer_of(rec: dict[str, Any] | RecordView) -> tuple[Any, bool]:
    """The one "parsed or raw?" rule: the object the runner parsed from the whole answer,
    else the raw text (judged again, so a fenced or prose-wrapped answer is still read);
    with whether it was the parsed object."""
    parsed = rec.get("parsed")
    if rec.get("parse_ok") is True and isinstance(parsed, dict):
        return parsed, True
    return rec.get("raw"), False


def recorded_verdict(record: Any, answer: Any, whole: bool) -> Judgement | None:
    """The verdict a record carries (kgbench.contract.judgement.RecordedJudgement), when it
    has one of the right shape, else None; its fields are the record's `parsed` answer unless
    given. Whether it was made under the reader's contract is the caller's to check."""
    judged = record.get("judgement")
    status = record.get("parse_status")
    if not isinstance(judged, dict) or status not in PARSE_STATUSES:
        return None
    fields = judged.get("fields")
    if fields is None and whole and isinstance(answer, dict):
        fields = answer
    problems = judged.get("problems")
    read, schema_ok = judged.get("json_read"), judged.get("schema_ok")
    if (
        not isinstance(fields, dict)
        or not isinstance(problems, list)
        or not all(isinstance(p, str) for p in problems)
        or not isinstance(read, bool)
        or not isinstance(schema_ok, bool)
    ):
        return None
    return Judgement(fields, read, schema_ok, tuple(problems), status, None, whole)


def _scoring_view(rec: dict[str, Any], judged_with: str | None = None) -> RecordView:
    """What scoring reads of a record (a ResponseRecord, or an unversioned one of an earlier
    runner, read as a plain dict: no model on the scorer's hot path): the parsed answer or
    the raw text, not both.

    A log of large answers holds each twice (raw and parsed); keeping one halves the memory
    `kgbench score` needs, whatever the answers hold. The recorded judgement is kept only
    where it holds fields of its own (an extracted answer, mistyped fields): one whose fields
    are `parsed` itself is an "ok" the scorer reads from `parsed` as well (or judges again),
    and a small dict per record would cost a log of well-formed answers 7% more memory. One
    that holds its fields, made under the reader's contract (`judged_with`), stands in for
    the raw text, which is then not kept: the answer is not judged again.
    """
    view: dict[str, Any] = {k: rec.get(k) for k in SCORING_FIELDS}
    judged = view["judgement"]
    if not isinstance(judged, dict) or judged.get("fields") is None:
        view["judgement"] = None
    elif (
        judged_with is not None
        and rec.get("judged_with") == judged_with
        and not (rec.get("parse_ok") is True and isinstance(rec.get("parsed"), dict))
        and recorded_verdict(rec, None, False) is not None
    ):
        return view  # type: ignore[return-value]  # judged: its fields stand for its text
    answer, whole = answer_of(rec)
    view["parsed" if whole else "raw"] = answer
    return view  # type: ignore[return-value]  # the keys of RecordView


def _mixed_message(path: Path, key: tuple[str, int], a: dict[str, Any], b: dict[str, Any]) -> str:
    def settings(rec: dict[str, Any]) -> str:
        params = rec.get("params") if isinstance(rec.get("params"), dict) else {}
        shown = {k: v for k, v in sorted(params.items()) if v is not None}
        return f"{rec.get('model')} {json.dumps(shown, sort_keys=True)[:200]}"

    return (
        f"{path}: prompt {key[0]} replicate {key[1]} was answered under two request "
        f"identities ({settings(a)} and {settings(b)}): answers from different endpoints or "
        "settings are mixed in one log, and scoring would blend them. Keep one run's records "
        "in this log (move the others to a log of their own, e.g. responses/<name>.jsonl) and "
        "score again"
    )

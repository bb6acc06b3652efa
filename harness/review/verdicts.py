"""Clinical review verdicts: `domains/<d>/reviews.csv`, keyed by each item's content hash.

A verdict belongs to one version of one item: the sha256 of the scenario record as published
(vignette, candidates, gold and justification, canonical JSON). Edit the item and its hash
changes, so it needs review again; a verdict for a hash that no current item has is stale.

    scenario_id,content_sha256,verdict,reviewer,date,note
    SCN_0001,3f5c...,accept,kgbench maintainers,2026-12-01,
    SCN_0046,9ab2...,dispute,kgbench maintainers,2026-12-01,labetalol is not first-line

`verdict` is `accept` or `dispute` (a dispute needs a note); `date` is YYYY-MM-DD. A row for an
unknown scenario, a stale hash, a duplicate, or a malformed value is an error naming the file,
line and field; nothing is written.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError
from kgbench.io import record_line, sha256_text
from kgbench.untrusted import csv_reader

COLUMNS = ("scenario_id", "content_sha256", "verdict", "reviewer", "date", "note")
VERDICTS = ("accept", "dispute")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
MAX_PROBLEMS = 50


def content_sha256(record: dict[str, Any]) -> str:
    """The hash a verdict is keyed by: the record's canonical JSON line."""
    return sha256_text(record_line(record))


@dataclass(frozen=True)
class Verdict:
    scenario_id: str
    content_sha256: str
    verdict: str
    reviewer: str
    date: str
    note: str
    line: int


class ReviewErrors(UserError):
    """Every problem of a reviews file, one per line."""

    def __init__(self, problems: list[str]) -> None:
        shown = problems[:MAX_PROBLEMS]
        if len(problems) > MAX_PROBLEMS:
            shown.append(f"... and {len(problems) - MAX_PROBLEMS} more")
        super().__init__("\n".join(shown))

    def __str__(self) -> str:
        return self.message


def reviews_path(domain_dir: Path) -> Path:
    return domain_dir / "reviews.csv"


def read_verdicts(
    path: Path, records: Iterable[dict[str, Any]], allow_stale: bool = False
) -> dict[str, Verdict]:
    """Verdicts by scenario id, checked against the current items. With `allow_stale`, a row
    whose hash no longer matches its item is dropped instead of being an error (the item was
    edited and needs review again)."""
    current = {r["scenario_id"]: content_sha256(r) for r in records}
    if not path.exists():
        return {}
    if not path.is_file():
        raise UserError(f"{path}: expected a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not valid UTF-8 ({exc.reason})") from None
    reader = csv_reader(text, str(path))  # no field-size limit; NUL refused
    problems: list[str] = []
    header = next(reader, None)
    if header is None:
        return {}
    header = [h.strip().lstrip("\ufeff") for h in header]
    if tuple(header) != COLUMNS:
        raise UserError(
            f"expected the header {','.join(COLUMNS)}; got {','.join(header)}",
            Location(str(path), 1),
        )
    out: dict[str, Verdict] = {}
    for row in reader:
        line = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue

        def bad(field: str, message: str, line: int = line) -> None:
            problems.append(str(UserError(message, Location(str(path), line, field))))

        if len(row) != len(COLUMNS):
            bad("(row)", f"expected {len(COLUMNS)} columns, found {len(row)}")
            continue
        v = dict(zip(COLUMNS, (c.strip() for c in row), strict=True))
        sid = v["scenario_id"]
        if sid not in current:
            bad("scenario_id", f"unknown scenario '{sid}' (not in the current scenario set)")
            continue
        if not SHA256.match(v["content_sha256"]):
            bad("content_sha256", "expected a sha256 (64 lowercase hex digits)")
            continue
        if v["content_sha256"] != current[sid]:
            if allow_stale:
                continue
            bad(
                "content_sha256",
                f"{sid} changed since this review (its content hash is now {current[sid][:12]}...); "
                "review it again: `kgbench review` lists the current hashes "
                "(`--drop-stale` removes outdated rows)",
            )
            continue
        if v["verdict"] not in VERDICTS:
            bad("verdict", f"expected one of {', '.join(VERDICTS)}; got {v['verdict']!r}")
            continue
        if not v["reviewer"]:
            bad("reviewer", "a reviewer is required")
            continue
        if not _is_review_date(v["date"]):
            bad("date", f"expected a date YYYY-MM-DD, not in the future; got {v['date']!r}")
            continue
        if v["verdict"] == "dispute" and not v["note"]:
            bad("note", "a dispute needs a note saying what is wrong")
            continue
        if sid in out:
            bad("scenario_id", f"{sid} has two verdicts (first on line {out[sid].line})")
            continue
        out[sid] = Verdict(line=line, **v)
    if problems:
        raise ReviewErrors(problems)
    return out


def _is_review_date(text: str) -> bool:
    """YYYY-MM-DD exactly (`date.fromisoformat` also takes 20261201 and 2026-W49-1), a real
    day, and not after tomorrow (a verdict from the future is not a review that happened)."""
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return False
    try:
        day = date.fromisoformat(text)
    except ValueError:
        return False
    return day <= date.today() + timedelta(days=1)


def verdict_rows(verdicts: Iterable[Verdict]) -> str:
    """reviews.csv text for the given verdicts (header first, scenario order)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for v in sorted(verdicts, key=lambda v: v.scenario_id):
        writer.writerow([getattr(v, c) for c in COLUMNS])
    return buf.getvalue()


@dataclass(frozen=True)
class Coverage:
    """How much of a scenario set has been reviewed, for release manifests."""

    accepted: tuple[str, ...]
    disputed: tuple[str, ...]
    unreviewed: tuple[str, ...]

    def as_dict(self, source: str) -> dict[str, Any]:
        return {
            "reviews": source,
            "accepted": len(self.accepted),
            "disputed": len(self.disputed),
            "unreviewed": len(self.unreviewed),
            "unreviewed_ids": list(self.unreviewed),
        }


def coverage(records: list[dict[str, Any]], verdicts: dict[str, Verdict]) -> Coverage:
    ids = [r["scenario_id"] for r in records]
    return Coverage(
        accepted=tuple(i for i in ids if i in verdicts and verdicts[i].verdict == "accept"),
        disputed=tuple(i for i in ids if i in verdicts and verdicts[i].verdict == "dispute"),
        unreviewed=tuple(i for i in ids if i not in verdicts),
    )

"""Clinical review verdicts: `domains/<d>/reviews.csv`, keyed by each item's content hash.

A verdict belongs to one version of one item: the sha256 of the scenario record as published
(vignette, candidates, gold and justification, canonical JSON). Edit the item and its hash
changes, so it needs review again; a verdict for a hash that no current item has is stale.

    scenario_id,content_sha256,verdict,reviewer,role,date,note
    SCN_0001,3f5c...,accept,kgbench maintainers,author,2026-12-01,
    SCN_0046,9ab2...,dispute,clinical reviewer B,independent,2026-12-05,labetalol is not first-line

`verdict` is `accept` or `dispute` (a dispute needs a note); `role` says who reviewed:
`author` (an author of the item, however careful) or `independent` (a clinician who did not
write it); `date` is YYYY-MM-DD. An item may have several reviewers (one row each). A row
against the hash of an item in a published release (`history`) is kept as the record of that
review and feeds reviewer agreement; it does not count for the current items. A file with the
older header (no `role`) is read as authors' rows. A row for an unknown scenario, a stale hash,
a duplicate, an unknown role or a malformed value is an error naming the file, line and field;
nothing is written.
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
from kgbench.untrusted import csv_reader, iter_jsonl_text, read_text

COLUMNS = ("scenario_id", "content_sha256", "verdict", "reviewer", "role", "date", "note")
LEGACY_COLUMNS = ("scenario_id", "content_sha256", "verdict", "reviewer", "date", "note")
VERDICTS = ("accept", "dispute")
ROLES = ("author", "independent")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
MAX_PROBLEMS = 50


def default_reviews(domain: str) -> Path:
    """Where a domain's verdicts live unless `--reviews` says otherwise (review, publish and
    dataset all default to it)."""
    from kgbench.locations import DOMAINS_DIR

    return DOMAINS_DIR / domain / "reviews.csv"


def content_sha256(record: dict[str, Any]) -> str:
    """The hash a verdict is keyed by: the record's canonical JSON line."""
    return sha256_text(record_line(record))


@dataclass(frozen=True)
class Verdict:
    scenario_id: str
    content_sha256: str
    verdict: str
    reviewer: str
    role: str
    date: str
    note: str
    line: int
    current: bool = True  # against the item's current hash (else: a published release's)


class ReviewErrors(UserError):
    """Every problem of a reviews file, one per line."""

    def __init__(self, problems: list[str]) -> None:
        shown = problems[:MAX_PROBLEMS]
        if len(problems) > MAX_PROBLEMS:
            shown.append(f"... and {len(problems) - MAX_PROBLEMS} more")
        super().__init__("\n".join(shown))

    def __str__(self) -> str:
        return self.message


def released_items(gold_root: Path) -> frozenset[tuple[str, str]]:
    """(scenario id, content hash) of every item of every release published under gold_root:
    the item versions a review row may still speak about after the items have changed."""

    from harness.gold_layout import SCENARIOS, releases

    out: set[tuple[str, str]] = set()
    for folder in releases(gold_root).values():
        path = folder / SCENARIOS
        if not path.is_file():
            continue
        for _, rec in iter_jsonl_text(read_text(path, "release scenarios"), str(path)):
            out.add((str(rec.get("scenario_id")), content_sha256(rec)))
    return frozenset(out)


def reviews_path(domain_dir: Path) -> Path:
    return domain_dir / "reviews.csv"


def read_verdicts(
    path: Path,
    records: Iterable[dict[str, Any]],
    allow_stale: bool = False,
    history: Iterable[tuple[str, str]] = (),
) -> dict[str, Verdict]:
    """One verdict per current item (a dispute by anyone wins, so it blocks a release), from
    the rows against the items' current hashes (see `read_reviews`)."""
    out: dict[str, Verdict] = {}
    for v in read_reviews(path, records, allow_stale, history):
        if not v.current:
            continue
        held = out.get(v.scenario_id)
        if held is None or (v.verdict == "dispute" and held.verdict != "dispute"):
            out[v.scenario_id] = v
    return out


def read_reviews(
    path: Path,
    records: Iterable[dict[str, Any]],
    allow_stale: bool = False,
    history: Iterable[tuple[str, str]] = (),
) -> list[Verdict]:
    """Every row of a reviews file, checked. A row must be against an item's current hash, or
    against a (scenario id, hash) pair in `history` (items of published releases); with
    `allow_stale`, other rows are dropped instead of being errors."""
    current = {r["scenario_id"]: content_sha256(r) for r in records}
    past = set(history)
    opened = _open_reviews(path)
    if opened is None:
        return []
    columns, reader = opened
    problems: list[str] = []
    out: list[Verdict] = []
    seen: dict[tuple[str, str, str], int] = {}
    for row in reader:
        line = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue

        def bad(field: str, message: str, line: int = line) -> None:
            problems.append(str(UserError(message, Location(str(path), line, field))))

        if len(row) != len(columns):
            bad("(row)", f"expected {len(columns)} columns, found {len(row)}")
            continue
        v = dict(zip(columns, (c.strip() for c in row), strict=True))
        v.setdefault("role", "author")
        wrong = _row_problem(v, current, past)
        if wrong is not None:
            if not (wrong.stale and allow_stale):
                bad(wrong.field, wrong.message)
            continue
        sid = v["scenario_id"]
        key = (sid, v["content_sha256"], v["reviewer"])
        if key in seen:
            bad(
                "scenario_id",
                f"{sid} has two verdicts by {v['reviewer']} for one version "
                f"(first on line {seen[key]})",
            )
            continue
        seen[key] = line
        out.append(Verdict(line=line, current=v["content_sha256"] == current.get(sid), **v))
    if problems:
        raise ReviewErrors(problems)
    return out


def _open_reviews(path: Path) -> tuple[tuple[str, ...], Any] | None:
    """(its columns, a reader of the rows after the header) of a reviews file; None when it
    is absent or empty. Not a file, not UTF-8 or another header is one message."""
    if not path.exists():
        return None
    if not path.is_file():
        raise UserError(f"{path}: expected a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not valid UTF-8 ({exc.reason})") from None
    reader = csv_reader(text, str(path))  # no field-size limit; NUL refused
    header = next(reader, None)
    if header is None:
        return None
    header = [h.strip().lstrip("\ufeff") for h in header]
    if tuple(header) not in (COLUMNS, LEGACY_COLUMNS):
        raise UserError(
            f"expected the header {','.join(COLUMNS)}; got {','.join(header)}",
            Location(str(path), 1),
        )
    return tuple(header), reader


@dataclass(frozen=True)
class _Wrong:
    """The first thing wrong with a row: the column to fix and why; `stale` when it is only
    against an older version of its item (dropped, not an error, with --drop-stale)."""

    field: str
    message: str
    stale: bool = False


def _row_problem(
    v: dict[str, str], current: dict[str, str], past: set[tuple[str, str]]
) -> _Wrong | None:
    """One row's checks, in the order a reviewer fixes them: the item, its version, then the
    verdict, reviewer, role, date and the note a dispute needs."""
    sid = v["scenario_id"]
    if sid not in current and sid not in {s for s, _ in past}:
        return _Wrong("scenario_id", f"unknown scenario '{sid}' (not in the current scenario set)")
    if not SHA256.match(v["content_sha256"]):
        return _Wrong("content_sha256", "expected a sha256 (64 lowercase hex digits)")
    if v["content_sha256"] != current.get(sid) and (sid, v["content_sha256"]) not in past:
        now = current.get(sid, "")
        return _Wrong(
            "content_sha256",
            f"{sid} changed since this review (its content hash is now {now[:12]}...); "
            "review it again: `kgbench review` lists the current hashes "
            "(`--drop-stale` removes outdated rows)",
            stale=True,
        )
    if v["verdict"] not in VERDICTS:
        return _Wrong("verdict", f"expected one of {', '.join(VERDICTS)}; got {v['verdict']!r}")
    if not v["reviewer"]:
        return _Wrong("reviewer", "a reviewer is required")
    if v["role"] not in ROLES:
        return _Wrong("role", f"expected one of {', '.join(ROLES)}; got {v['role']!r}")
    if not _is_review_date(v["date"]):
        return _Wrong("date", f"expected a date YYYY-MM-DD, not in the future; got {v['date']!r}")
    if v["verdict"] == "dispute" and not v["note"]:
        return _Wrong("note", "a dispute needs a note saying what is wrong")
    return None


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
    """reviews.csv text for the given verdicts (header first; by scenario, then role, date and
    reviewer)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for v in sorted(verdicts, key=lambda v: (v.scenario_id, v.role, v.date, v.reviewer)):
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


def role_coverage(records: list[dict[str, Any]], rows: list[Verdict]) -> dict[str, Any]:
    """Per role, how many current items have an accept, a dispute or no verdict from a
    reviewer of that role; and whether the set is independently reviewed (every item has an
    independent accept for its current hash and no dispute)."""
    ids = [r["scenario_id"] for r in records]
    out: dict[str, Any] = {}
    for role in ROLES:
        mine = [v for v in rows if v.current and v.role == role]
        disputed = {v.scenario_id for v in mine if v.verdict == "dispute"}
        accepted = {v.scenario_id for v in mine if v.verdict == "accept"} - disputed
        out[role] = {
            "accepted": sum(1 for i in ids if i in accepted),
            "disputed": sum(1 for i in ids if i in disputed),
            "unreviewed": sum(1 for i in ids if i not in accepted | disputed),
        }
    ind = out["independent"]
    return {
        "by_role": out,
        "independently_reviewed": bool(ids) and ind["accepted"] == len(ids),
    }


@dataclass(frozen=True)
class Agreement:
    """Agreement between author and independent verdicts on the same item version."""

    n: int
    agree: int
    kappa: float | None  # None when undefined (no pairs, or chance agreement is total)
    pairs: tuple[tuple[str, str, str], ...]  # (scenario id, author verdict, independent)

    @property
    def raw(self) -> float | None:
        return self.agree / self.n if self.n else None


def agreement(rows: list[Verdict]) -> Agreement:
    """Cohen's kappa between the author role and the independent role, over every item
    version (scenario id, hash) that has a verdict of each (the first of each role when
    several reviewers share a role)."""
    first: dict[tuple[str, str, str], str] = {}
    for v in sorted(rows, key=lambda v: (v.scenario_id, v.content_sha256, v.role, v.line)):
        first.setdefault((v.scenario_id, v.content_sha256, v.role), v.verdict)
    pairs = []
    for (sid, sha, role), verdict in sorted(first.items()):
        if role == "author" and (sid, sha, "independent") in first:
            pairs.append((sid, verdict, first[(sid, sha, "independent")]))
    n = len(pairs)
    agree = sum(1 for _, a, b in pairs if a == b)
    if not n:
        return Agreement(0, 0, None, ())
    p_o = agree / n
    p_e = sum(
        (sum(1 for _, a, _ in pairs if a == c) / n) * (sum(1 for _, _, b in pairs if b == c) / n)
        for c in VERDICTS
    )
    kappa = None if p_e == 1 else (p_o - p_e) / (1 - p_e)
    return Agreement(n, agree, kappa, tuple(pairs))

"""Import a blind clinical review (markdown verdict tables) as `independent` rows of reviews.csv.

The 2026-12 reviews judged the 2.0.0 releases item by item in tables of the form

    | id | category | gold | verdict | severity | reason |

under headings that name the domain ("## Verdicts, afib 2.0.0, ..."; a review of one domain
names it in its title). Each row becomes one verdict against the hash of that item in the
release the review read: ACCEPT -> accept, DISPUTE -> dispute; the note is the review's own
reason (with the severity for a dispute and any qualifier such as "data error"), unchanged.
Rows already present (same item version and reviewer) are left as they are, so the import is
idempotent. Usage (from the repository root, PYTHONPATH set):

    python -m tools.import_reviews REVIEW.md --reviewer NAME --date YYYY-MM-DD --release 2.0.0

It writes domains/<d>/reviews.csv for every domain the review covers (atomically).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from harness.review.verdicts import Verdict, content_sha256, read_reviews, verdict_rows
from kgbench.errors import UserError
from kgbench.io import atomic_write_text
from kgbench.locations import DOMAINS_DIR, GENERATED_DIR

ROW = re.compile(r"^\|\s*(SCN_\d{4})\s*\|(.*)\|\s*$")
DOMAIN_HEADING = re.compile(r"^#+ .*\b(cardio|afib)\b", re.IGNORECASE)


def parse(text: str) -> dict[str, list[tuple[str, str, str]]]:
    """domain -> [(scenario id, verdict, note)] in the order the review lists them."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    domain = None
    for line in text.splitlines():
        heading = DOMAIN_HEADING.match(line)
        if heading and ("verdict" in line.lower() or line.startswith("# ")):
            domain = heading.group(1).lower()
        row = ROW.match(line)
        if not row or domain is None:
            continue
        cells = [c.strip() for c in row.group(2).split("|")]
        verdict_cell, severity, reason = cells[-3], cells[-2], cells[-1]
        plain = verdict_cell.replace("*", "").strip()
        word = plain.split()[0].lower()
        if word not in ("accept", "dispute"):
            raise UserError(f"{row.group(1)}: unknown verdict {verdict_cell!r}")
        qualifier = plain[len(plain.split()[0]) :].strip(" ()")
        sev = severity.replace("*", "").strip(" –-")
        note = reason.replace("**", "")
        prefix = ", ".join(x for x in (sev, qualifier) if x)
        out.setdefault(domain, []).append(
            (row.group(1), word, f"{prefix}: {note}" if prefix else note)
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("review", type=Path)
    ap.add_argument("--reviewer", required=True)
    ap.add_argument("--date", required=True)
    ap.add_argument("--release", required=True)
    args = ap.parse_args()
    for domain, rows in parse(args.review.read_text(encoding="utf-8")).items():
        release = GENERATED_DIR / domain / "gold" / args.release / "scenarios.jsonl"
        items = {
            r["scenario_id"]: r
            for r in map(json.loads, release.read_text(encoding="utf-8").splitlines())
        }
        history = {(sid, content_sha256(r)) for sid, r in items.items()}
        path = DOMAINS_DIR / domain / "reviews.csv"
        current = [json.loads(x) for x in _current(domain).read_text().splitlines() if x]
        existing = read_reviews(path, current, allow_stale=False, history=history)
        have = {(v.scenario_id, v.content_sha256, v.reviewer) for v in existing}
        added = 0
        for sid, verdict, note in rows:
            sha = content_sha256(items[sid])
            if (sid, sha, args.reviewer) in have:
                continue
            existing.append(
                Verdict(sid, sha, verdict, args.reviewer, "independent", args.date, note, 0, False)
            )
            added += 1
        atomic_write_text(path, verdict_rows(existing))
        print(f"{domain}: {added} independent verdicts added to {path}")


def _current(domain: str) -> Path:
    return GENERATED_DIR / domain / "scenarios" / "scenarios.jsonl"


if __name__ == "__main__":
    main()

"""Record the authors' rule check of the current scenario set as `author` rows of reviews.csv.

Before a release the authors re-run the evidence rules over every item (`kgbench audit`:
0 unknown statuses) and answer the disputed findings in REVIEW_RESPONSES.md; that is a rule
check, not a clinical reading, and the row says so (role `author`, never `independent`). Each
current item (generated/<d>/scenarios/scenarios.jsonl) gets one `accept` row against its hash
unless the same reviewer already has a row for that version; rows of other items and versions
are kept. A domain whose audit still finds an unknown status gets no rows. Usage (from the
repository root, PYTHONPATH set):

    python -m tools.author_check --domain D --release 3.1.0 --date YYYY-MM-DD

It writes domains/<d>/reviews.csv (atomically).
"""

from __future__ import annotations

import argparse
import json

from harness.review.verdicts import (
    Verdict,
    content_sha256,
    read_reviews,
    released_items,
    verdict_rows,
)
from kgbench.errors import UserError
from kgbench.io import atomic_write_text
from kgbench.locations import DOMAINS_DIR, GENERATED_DIR

REVIEWER = "kgbench maintainers"
NOTE = (
    "authors' rule check for {release}: every candidate's evidence status re-judged by the "
    "{release} rules (kgbench audit: 0 unknown statuses), disputed findings answered in "
    "REVIEW_RESPONSES.md; not an independent clinical review"
)


def unknown_statuses(domain: str) -> int:
    """Offered candidates whose evidence status the graph does not settle (must be 0)."""
    from harness.compiled import CompiledDomain
    from harness.scenarios.audit import audit

    path = GENERATED_DIR / domain / "scenarios" / "scenarios.jsonl"
    records = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    return sum(len(item.unknown) for item in audit(CompiledDomain.open(domain), records))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--domain", required=True)
    ap.add_argument("--release", required=True)
    ap.add_argument("--date", required=True)
    args = ap.parse_args()
    path = GENERATED_DIR / args.domain / "scenarios" / "scenarios.jsonl"
    current = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    unknown = unknown_statuses(args.domain)
    if unknown:
        raise SystemExit(f"{args.domain}: {unknown} unknown evidence statuses; no rows written")
    reviews = DOMAINS_DIR / args.domain / "reviews.csv"
    history = released_items(GENERATED_DIR / args.domain / "gold")
    try:
        rows = read_reviews(reviews, current, allow_stale=False, history=history)
    except UserError as exc:
        raise SystemExit(str(exc)) from None
    have = {(v.scenario_id, v.content_sha256, v.reviewer) for v in rows}
    note = NOTE.format(release=args.release)
    added = 0
    for record in current:
        sid, sha = record["scenario_id"], content_sha256(record)
        if (sid, sha, REVIEWER) in have:
            continue
        rows.append(Verdict(sid, sha, "accept", REVIEWER, "author", args.date, note, 0))
        added += 1
    atomic_write_text(reviews, verdict_rows(rows))
    print(f"{args.domain}: {added} author rows added to {reviews}")


if __name__ == "__main__":
    main()

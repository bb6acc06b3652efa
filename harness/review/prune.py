"""`kgbench review --drop-stale`: removing outdated verdicts without losing current ones.

A verdict is stale when the item it signed has changed. "Changed" is judged against the
scenario set the command was given; given another set that reuses the ids (an older release,
a set generated with another seed), every verdict of the domain's own set looks stale, and
removing them silently deleted 79 of 80 signed verdicts. So the pruning:

- lists every row it will remove (id, hash, verdict, reviewer) before removing any;
- refuses, unless `--yes`, to remove a verdict whose item still exists, unchanged, in the
  domain's own generated set (it is not stale for the domain, only for the other set);
- keeps the previous file beside it (`reviews.csv.bak`) and rewrites the file last, after
  the review sheet it serves has been written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgbench.errors import UserError
from kgbench.io import atomic_write_bytes
from kgbench.untrusted import csv_reader, for_terminal, read_bytes

from .verdicts import content_sha256


@dataclass(frozen=True)
class Dropped:
    """One row of the verdicts file that pruning would remove."""

    line: int
    scenario_id: str
    content_sha256: str
    verdict: str
    reviewer: str
    current_in_own_set: bool

    def __str__(self) -> str:
        own = " (current in the domain's own set)" if self.current_in_own_set else ""
        return for_terminal(
            f"line {self.line}: {self.scenario_id} {self.content_sha256[:12]}... "
            f"{self.verdict} by {self.reviewer}{own}"
        )


def rows_to_drop(
    path: Path, kept: Iterable[Any], own_records: Iterable[dict[str, Any]] | None
) -> list[Dropped]:
    """The data rows of `path` that are not among `kept` (the verdicts read for the given
    set), each marked when the domain's own set still has that item with that hash."""
    own = {(r["scenario_id"], content_sha256(r)) for r in own_records or ()}
    kept_lines = {v.line for v in kept}
    text = read_bytes(path, "verdicts file").decode("utf-8", errors="replace")
    reader = csv_reader(text, str(path))
    next(reader, None)  # the header, checked by read_verdicts
    out = []
    for row in reader:
        line = reader.line_num
        if line in kept_lines or not row or all(not c.strip() for c in row):
            continue
        cells = [c.strip() for c in row] + [""] * 6
        sid, sha, verdict, reviewer = cells[0], cells[1], cells[2], cells[3]
        out.append(Dropped(line, sid, sha, verdict, reviewer, (sid, sha) in own))
    return out


def check_drop(dropped: list[Dropped], yes: bool, path: Path) -> None:
    """Refuse (a UserError listing them) to remove verdicts still current in the domain's
    own set, unless the user said `--yes`."""
    current = [d for d in dropped if d.current_in_own_set]
    if current and not yes:
        shown = "\n".join(str(d) for d in current[:20])
        more = f"\n... and {len(current) - 20} more" if len(current) > 20 else ""
        raise UserError(
            f"{path}: --drop-stale would remove {len(current)} verdict(s) of items that are "
            "unchanged in the domain's own scenario set (they are stale only for the set given "
            "with --scenarios); nothing was changed. Add --yes to remove them anyway:\n"
            f"{shown}{more}"
        )


def rewrite_with_backup(path: Path, text: str) -> Path:
    """Keep the previous file as `<name>.bak` beside it, then write `text` atomically."""
    backup = path.with_name(path.name + ".bak")
    atomic_write_bytes(backup, read_bytes(path, "verdicts file"))
    atomic_write_bytes(path, text.encode("utf-8"))
    return backup


def own_records_or_none(own_set: Path, given: Path) -> list[dict[str, Any]] | None:
    """The domain's own generated set, when it exists and is not the set given."""
    from harness.scenario_files import read_scenarios

    if not own_set.is_file() or own_set.resolve() == given.resolve():
        return None
    return read_scenarios(own_set)

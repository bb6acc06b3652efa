"""What `kgbench load --bulk --force` may erase, and how it swaps databases without losing one.

A bulk import replaces the embedded server's whole database. Three rules keep that from
being silent data loss (issue 28, item 3):

- **Say what goes.** Before anything stops, the database's contents are counted (nodes per
  label, the domains stamped as loaded) and shown in every refusal.
- **Ask where it matters.** Replacing a database that holds only this domain's own graph (a
  reload of what `--bulk` put there) needs `--force`. Erasing anything else, another domain's
  graph or nodes kgbench did not load, also needs `--yes`: those cannot be rebuilt from this
  compile.
- **Delete nothing before the new one works.** neo4j-admin imports into a staging home
  beside the server's; only once it succeeded are the old store folders moved aside (into
  `<home>/backups/bulk-<UTC time>/`, a backup that is never removed by kgbench) and the
  new ones moved in. A failed import leaves the old database in place, untouched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import neo4j

from kgbench.errors import UserError

from .checks import count_store
from .stamp import STAMP_LABEL

STORE_PARTS = ("databases", "transactions")  # <home>/data/<part>/<database>
STAGING = "bulk-staging"
BACKUPS = "backups"


@dataclass(frozen=True)
class Inventory:
    """What a database holds: every node, per label, and the domains stamped as loaded."""

    nodes: int
    labels: tuple[tuple[str, int], ...] = ()  # (label, nodes carrying it), by label
    stamped: tuple[str, ...] = ()  # domains with a KgbenchLoad stamp
    labelled_nodes: int = 0  # nodes with at least one label

    def nodes_of(self, label: str) -> int:
        return dict(self.labels).get(label, 0)

    def foreign(self, domain: str, label: str) -> int:
        """Nodes that are neither `domain`'s graph (its label) nor its stamp."""
        own = self.nodes_of(label) + (1 if domain in self.stamped else 0)
        return max(self.nodes - own, 0)

    def describe(self) -> str:
        """One line: the counts a user needs to judge what an erase would remove."""
        if not self.nodes:
            return "empty"
        shown = ", ".join(f"{label} {count}" for label, count in self.labels[:12])
        more = f", {len(self.labels) - 12} more labels" if len(self.labels) > 12 else ""
        held = f"domains {', '.join(self.stamped)}" if self.stamped else "no kgbench domain"
        unlabelled = self.nodes - self.labelled_nodes
        bare = f", {unlabelled} without a label" if unlabelled > 0 else ""
        return f"{self.nodes} nodes ({held}; labels: {shown or 'none'}{more}{bare})"


def inventory(driver: neo4j.Driver, database: str) -> Inventory:
    """Count what `database` holds (read-only).

    The node counts, in all and per label, come from the count store (`checks.count_store`,
    one procedure call, no scan: they are what `MATCH (n:L) RETURN count(n)` answers from it);
    the stamps from their own label. Only the nodes without any label are not counted there:
    they are none when the largest label holds every node but the stamps outside it (what a
    database kgbench filled holds, a bulk-imported one always), and only otherwise are all
    nodes scanned for them. Before, two scans of every node (one unwinding their labels)
    ran on every bulk load, whatever the database held."""
    read = neo4j.RoutingControl.READ
    store = count_store(driver, database)
    total = store.node_count()
    labels = sorted((label, n) for label, n in store.nodes.items() if label is not None and n)
    stamps, _, _ = driver.execute_query(
        f"MATCH (m:{STAMP_LABEL}) RETURN m.domain AS d, labels(m) AS labels ORDER BY d",
        database_=database,
        routing_=read,
    )
    largest = max(labels, key=lambda item: item[1], default=(None, 0))
    stamps_outside = sum(1 for r in stamps if largest[0] not in r["labels"])
    if total - largest[1] == stamps_outside:  # every node is in the largest label or a stamp
        labelled = total
    else:
        scanned, _, _ = driver.execute_query(
            "MATCH (n) WHERE size(labels(n)) > 0 RETURN count(n) AS l",
            database_=database,
            routing_=read,
        )
        labelled = int(scanned[0]["l"])
    return Inventory(
        nodes=total,
        labels=tuple(labels),
        stamped=tuple(str(r["d"]) for r in stamps),
        labelled_nodes=labelled,
    )


def refusal(
    held: Inventory, domain: str, label: str, where: str, *, force: bool, yes: bool
) -> str | None:
    """Why the bulk load of `domain` (nodes labelled `label`) must not replace `held`, or
    None when it may. `where` names the database for the message."""
    if not held.nodes:
        return None
    what = held.describe()
    if not force:
        return (
            f"the database {where} is not empty ({what}); --bulk replaces the whole database "
            "with this domain alone: load without --bulk to add or sync one domain "
            "transactionally, or pass --force to replace it (a backup is kept)"
        )
    foreign = held.foreign(domain, label)
    if foreign and not yes:
        others = [d for d in held.stamped if d != domain]
        whose = f"the graphs of {', '.join(others)}" if others else "nodes kgbench did not load"
        return (
            f"--force would erase {foreign} nodes of the database {where} that are not "
            f"'{domain}''s own graph ({whose}; the database holds {what}); nothing was "
            "stopped or changed. Load without --bulk to keep them, or add --yes to erase them "
            "(the old database is kept as a backup under the server's home)"
        )
    return None


def _store(home: Path, part: str, database: str) -> Path:
    return home / "data" / part / database


def staging_home(home: Path) -> Path:
    """An empty Neo4j home beside the server's, for neo4j-admin to import into."""
    staged = home / STAGING
    if staged.exists():  # a previous import that stopped half-way: nothing of value
        shutil.rmtree(staged)
    staged.mkdir(parents=True)
    return staged


def swap_in(home: Path, staged: Path, database: str, *, keep: bool) -> Path | None:
    """Move the imported store from `staged` into `home` (the server must be stopped).

    With `keep`, the old store folders move to `<home>/backups/bulk-<UTC time>/` first and
    that folder is returned; without it (an empty database) they are removed only after the
    new ones are in place. A failure half-way puts the old folders back.
    """
    backup = home / BACKUPS / time.strftime("bulk-%Y%m%dT%H%M%SZ", time.gmtime())
    suffix = 1
    while backup.exists():
        backup = backup.with_name(f"{backup.name.split('.')[0]}.{suffix}")
        suffix += 1
    aside = backup if keep else home / STAGING / "replaced"
    moved: list[tuple[Path, Path]] = []
    placed: list[Path] = []
    try:
        for part in STORE_PARTS:
            old = _store(home, part, database)
            if old.exists():
                target = aside / part / database
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(old, target)
                moved.append((target, old))
        for part in STORE_PARTS:
            new = _store(staged, part, database)
            if new.exists():
                target = _store(home, part, database)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(new, target)
                placed.append(target)
    except OSError as exc:
        for path in placed:
            with contextlib.suppress(OSError):
                shutil.rmtree(path)
        for saved, original in moved:
            with contextlib.suppress(OSError):
                os.replace(saved, original)
        raise UserError(
            f"could not move the imported database into {home / 'data'} ({exc.strerror or exc}); "
            "the old database is back in place"
        ) from None
    if keep and moved:
        _write_restore_note(backup, home, database)
    log = staged / "logs" / "import.log"
    if log.is_file():  # the import's own account, kept where the server's logs are
        with contextlib.suppress(OSError):
            (home / "logs").mkdir(exist_ok=True)
            os.replace(log, home / "logs" / "import.log")
    shutil.rmtree(staged, ignore_errors=True)  # what is left: the tool's report, an empty store
    return backup if keep and moved else None


def _write_restore_note(backup: Path, home: Path, database: str) -> None:
    """README.txt in the backup: what it is and how to put it back."""
    lines = [
        f"The database '{database}' of the embedded Neo4j at {home}, as it was before",
        "`kgbench load --bulk --force` replaced it. kgbench never removes this folder.",
        "",
        "To put it back (the server must be stopped):",
        "  kgbench neo4j stop",
    ]
    for part in STORE_PARTS:
        lines.append(f"  rm -rf {_store(home, part, database)}")
        lines.append(f"  mv {backup / part / database} {_store(home, part, database)}")
    lines += ["  kgbench neo4j start", "Delete this folder once you no longer need it."]
    with contextlib.suppress(OSError):
        (backup / "README.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")

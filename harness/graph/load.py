"""`kgbench load`: constraints, batched idempotent MERGE statements, pruning, validation.

Every statement and its rows come from generated/<domain>/neo4j/ (plan.json, the contract's
LoadPlan); values reach Cypher only as
parameters. Batches run in managed write transactions of up to `batch_size` rows (retried by
the driver on transient errors), so an interrupted load leaves whole batches behind, and
because every statement MERGEs on (:<label> {id}) and overwrites properties, running the load
again converges on the same graph as a clean load. After the MERGEs, whatever the domain's
label holds that the compile does not (an assertion deleted from the data, an edge whose
subject changed, a class label an entity no longer has) is removed in the same managed
transaction as the last writes (a domain of a few thousand rows is one transaction: the whole
sync commits or none of it), so a reload after deleting rows converges too. The load is stamped (see `stamp`): "loading" first, "loaded"
with the compiled manifest's digest once everything passed.

With `changes=True` (what `kgbench load` does) the domain's graph is read before and after,
and the report says which nodes and relationships were added, changed (labels or properties)
and removed, so a curator who edited the spec sees what the sync did. Only the domain's own
label is read or written: other domains are never touched.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import neo4j

from kgbench.errors import UserError

from ..compiled import CompiledDomain
from .checks import run_fast
from .stamp import STAMP_CONSTRAINT, manifest_digest, mark, read_stamp

DEFAULT_BATCH = 2000
# Bytes of a rows file read at a time: rows are parsed as they arrive (`iter_rows`), so a load
# holds about one transaction's rows, not the whole domain (4.3 GB at 1M assertions).
READ_CHUNK = 1 << 20


class LoadValidationError(UserError):
    """The loaded graph failed a compiled validation query."""


@dataclass
class LoadReport:
    domain: str
    rows: int = 0
    statements: int = 0
    seconds: float = 0.0
    checks: list[tuple[str, int, int]] = field(default_factory=list)  # name, value, expect
    changes: Changes | None = None  # with load(changes=True): what the sync did
    current: bool = False  # with load(skip_current=True): the graph held this compile already

    @property
    def failures(self) -> list[tuple[str, int, int]]:
        return [c for c in self.checks if c[1] != c[2]]


@dataclass(frozen=True)
class Changes:
    """Keys of the nodes and relationships a load added, changed or removed."""

    nodes_added: tuple[str, ...] = ()
    nodes_changed: tuple[str, ...] = ()
    nodes_removed: tuple[str, ...] = ()
    relationships_added: tuple[str, ...] = ()
    relationships_changed: tuple[str, ...] = ()
    relationships_removed: tuple[str, ...] = ()

    @classmethod
    def between(cls, before: dict[str, str], after: dict[str, str]) -> Changes:
        def diff(kind: str) -> dict[str, tuple[str, ...]]:
            b = {k[len(kind) + 1 :]: v for k, v in before.items() if k.startswith(kind + " ")}
            a = {k[len(kind) + 1 :]: v for k, v in after.items() if k.startswith(kind + " ")}
            return {
                "added": tuple(sorted(a.keys() - b.keys())),
                "changed": tuple(sorted(k for k in a.keys() & b.keys() if a[k] != b[k])),
                "removed": tuple(sorted(b.keys() - a.keys())),
            }

        n, r = diff("node"), diff("rel")
        return cls(n["added"], n["changed"], n["removed"], r["added"], r["changed"], r["removed"])

    @property
    def unchanged(self) -> bool:
        return not any(
            (
                self.nodes_added,
                self.nodes_changed,
                self.nodes_removed,
                self.relationships_added,
                self.relationships_changed,
                self.relationships_removed,
            )
        )

    def summary(self) -> str:
        return (
            f"nodes: {len(self.nodes_added)} added, {len(self.nodes_changed)} changed, "
            f"{len(self.nodes_removed)} removed; relationships: {len(self.relationships_added)} "
            f"added, {len(self.relationships_changed)} changed, "
            f"{len(self.relationships_removed)} removed"
        )


def snapshot(driver: neo4j.Driver, label: str, database: str | None = None) -> dict[str, str]:
    """Every node and relationship of one domain as key -> fingerprint (labels, properties).

    Node keys are ids; a relationship's key is subject id, type, object id and, for the edge
    of an assertion, its assertion id (there is one edge of a type per pair otherwise).
    """
    nodes, _, _ = driver.execute_query(
        f"MATCH (n:{label}) RETURN n.id AS k, labels(n) AS labels, properties(n) AS p",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    rels, _, _ = driver.execute_query(
        f"MATCH (s:{label})-[r]->(o:{label}) "
        "RETURN s.id AS s, type(r) AS t, o.id AS o, properties(r) AS p",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    out: dict[str, str] = {}
    for rec in nodes:
        fp = json.dumps([sorted(rec["labels"]), rec["p"]], sort_keys=True, default=str)
        out[f"node {rec['k']}"] = fp
    for rec in rels:
        aid = rec["p"].get("assertion_id")
        key = f"{rec['s']}|{rec['t']}|{rec['o']}" + (f"|{aid}" if aid else "")
        out[f"rel {key}"] = json.dumps(rec["p"], sort_keys=True, default=str)
    return out


def apply_constraints(driver: neo4j.Driver, domain: CompiledDomain, database: str | None) -> None:
    """Schema statements run in auto-commit transactions (they cannot share one with writes).

    In the compiled order, the uniqueness constraint (which returns once its index is
    populated) before the plain indexes (which populate in the background). Tried for the
    bulk load (issue 33, item 4): the plain indexes first, so the three populations overlap,
    was faster on a warm page cache (2.6-3.9 s against 3.5-6.0 s at 1M records, paired) but
    about twice as slow right after the server's start (3 of 3 bulk loads, load 10-18): three
    scans at once over a store larger than the 128 MB page cache; in separate sessions at once
    they deadlock on the label's schema lock."""
    with driver.session(database=database) as session:
        for stmt in [*domain.plan.constraints, STAMP_CONSTRAINT]:
            session.run(stmt).consume()
        session.run("CALL db.awaitIndexes(300)").consume()


def load(
    driver: neo4j.Driver,
    domain: CompiledDomain,
    database: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[str, int, int | None], None] | None = None,
    validate: bool = True,
    changes: bool = False,
    skip_current: bool = False,
) -> LoadReport:
    """Sync the domain's graph to its compile (see the module's docstring).

    `skip_current`: write nothing when the graph already holds this compile: stamped
    "loaded" with this compile's manifest digest (`stamp`; the digest covers the data, the
    spec and the compiler's sources) and passing every compiled check (counts of every kind,
    class and predicate, pairing, evidence). A graph that fails a check is synced as usual.
    What no check counts (a property edited by hand in Neo4j) is not seen: without the flag,
    as `kgbench load` runs, every load writes everything."""
    report = LoadReport(domain.name)
    start = time.perf_counter()
    apply_constraints(driver, domain, database)
    if skip_current and _holds_current(driver, domain, database, report):
        report.seconds = time.perf_counter() - start
        return report
    before = snapshot(driver, domain.label, database) if changes else {}
    digest = manifest_digest(domain)
    with driver.session(database=database) as session:
        session.execute_write(mark, domain, digest, "loading")
        # a label that holds nothing has nothing to reconcile or prune: a first load skips both
        populated = session.execute_read(_holds_nodes, domain.label)
    written = Written()
    with driver.session(database=database) as session:
        group: list[tuple[str, list[_Part], _Part | None, list, int, int | None]] = []
        size = 0

        def flush(removal: Written | None = None) -> None:
            session.execute_write(_run_group, domain.label, group, removal)
            for name, _, _, batch, done, total in group:
                if progress:
                    progress(name, done + len(batch), total)
            group.clear()

        for stmt in domain.plan.statements:
            report.statements += 1
            params = dict(stmt.params)
            reconcile = _Part(stmt.reconcile, params) if populated and stmt.reconcile else None
            parts = [_Part(cypher, params) for cypher in (stmt.cypher, *stmt.then)]
            for done, batch, last in _batches(domain.neo4j_path(stmt.rows), batch_size):
                if populated:
                    written.add(batch)
                report.rows += len(batch)
                # consecutive batches share a transaction up to `batch_size` rows: small
                # statements do not pay one commit each, and statement order is kept, so
                # entities exist before the assertions that MATCH them
                if group and size + len(batch) > batch_size:
                    flush()
                    size = 0
                total = done + len(batch) if last else None
                group.append((stmt.name, parts, reconcile, batch, done, total))
                size += len(batch)
        # the removal rides in the last write transaction (the group still pending when the
        # rows end): it commits with the final writes or not at all, so no committed state has
        # the new rows without the prune
        flush(written if populated else None)
    report.seconds = time.perf_counter() - start
    if changes:
        report.changes = Changes.between(before, snapshot(driver, domain.label, database))
    if validate:
        report.checks = run_fast(driver, domain, database)
        if report.failures:
            lines = [
                f"{name}: {value} (expected {expect})" for name, value, expect in report.failures
            ]
            raise LoadValidationError(
                f"the loaded graph of '{domain.name}' failed {len(lines)} validation check(s): "
                + "; ".join(lines)
            )
    with driver.session(database=database) as session:
        session.execute_write(mark, domain, digest, "loaded")
    return report


def _holds_current(
    driver: neo4j.Driver, domain: CompiledDomain, database: str | None, report: LoadReport
) -> bool:
    """Whether the graph is stamped "loaded" from this compile and passes every compiled
    check (recorded in `report`, marked `current`)."""
    stamp = read_stamp(driver, domain, database)
    if stamp != {"digest": manifest_digest(domain), "state": "loaded"}:
        return False
    checks = run_fast(driver, domain, database)
    if any(value != expect for _, value, expect in checks):
        return False  # changed behind kgbench's back: sync it
    report.checks, report.current = checks, True
    return True


@dataclass
class Written:
    """Keys of everything the load statements write, gathered from their row files."""

    ids: list[str] = field(default_factory=list)
    classes: set[str] = field(default_factory=set)
    direct: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    supports: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)

    def add(self, rows: list[dict]) -> None:
        for row in rows:
            if "subject_id" in row:  # an assertion: its node, its two role edges, its edge
                aid, s, o = row["id"], row["subject_id"], row["object_id"]
                self.ids.append(aid)
                self.direct.append(f"{s}|{row['props']['predicate']}|{o}|{aid}")
                self.roles += [f"{aid}|HAS_SUBJECT|{s}", f"{aid}|HAS_OBJECT|{o}"]
            elif "id" in row:  # an entity or an evidence source
                self.ids.append(row["id"])
                category = row.get("props", {}).get("category")
                if isinstance(category, str):
                    self.classes.add(category)
            elif "member_id" in row:  # a MEMBER_OF link
                self.members.append(f"{row['member_id']}|{row['class_id']}")
            else:  # a SUPPORTS link
                self.supports.append(f"{row['evidence_id']}|{row['assertion_id']}")


def prune(tx: neo4j.ManagedTransaction, label: str, written: Written) -> None:
    """Remove what the domain's label holds beyond what this load wrote (inside the load's
    last write transaction, after its writes).

    Keys are passed as list parameters; the label and class names are validated spec
    identifiers (as in every compiled statement).
    """
    tx.run(f"MATCH (n:{label}) WHERE NOT n.id IN $ids DETACH DELETE n", ids=written.ids).consume()
    tx.run(
        f"MATCH (s:{label})-[r]->(o:{label}) WHERE r.assertion_id IS NOT NULL "
        "AND NOT (s.id + '|' + type(r) + '|' + o.id + '|' + r.assertion_id) IN $keys DELETE r",
        keys=written.direct,
    ).consume()
    tx.run(
        f"MATCH (a:{label}:Assertion)-[r:HAS_SUBJECT|HAS_OBJECT]->(x:{label}) "
        "WHERE NOT (a.id + '|' + type(r) + '|' + x.id) IN $keys DELETE r",
        keys=written.roles,
    ).consume()
    tx.run(
        f"MATCH (e:{label})-[r:SUPPORTS]->(a:{label}) "
        "WHERE NOT (e.id + '|' + a.id) IN $keys DELETE r",
        keys=written.supports,
    ).consume()
    tx.run(
        f"MATCH (m:{label})-[r:MEMBER_OF]->(k:{label}) WHERE NOT (m.id + '|' + k.id) IN $keys DELETE r",
        keys=written.members,
    ).consume()
    # One statement for every class label (a dynamic label, Neo4j 5.26), not one per class:
    # on a freshly started server each distinct statement is planned on first use: the example domain's
    # prune took 1.1 s of a 9.5 s reload with one per class (eleven), 0.6 s with this one.
    names = sorted(n for n in written.classes if n.isidentifier())  # validated CamelCase
    if names:
        tx.run(
            f"MATCH (n:{label}) UNWIND [x IN $names WHERE x IN labels(n) AND x <> n.category] "
            "AS name REMOVE n:$(name)",
            names=names,
        ).consume()


def iter_rows(path: Path, chunk: int = READ_CHUNK) -> Iterator[dict[str, Any]]:
    """The objects of a compiled rows file (a JSON array of objects), parsed as the file is
    read `chunk` characters at a time, so a file is never held whole, as text or as rows.

    The compiler writes these files, so anything else (not an array, an item that is not an
    object, a cut-off file) is a stale or damaged compile: a UserError naming the file."""
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8") as f:
        buf, pos, eof = f.read(chunk), 0, False

        def more(size: int) -> None:
            nonlocal buf, pos, eof
            data = f.read(size)
            eof = not data
            buf, pos = buf[pos:] + data, 0

        def skip(chars: str) -> None:
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in chars:
                    pos += 1
                if pos < len(buf) or eof:
                    return
                more(chunk)

        def damaged(what: str) -> UserError:
            return UserError(
                f"{path}: {what}; the compiled rows are damaged, run `make compile` again"
            )

        skip(" \t\r\n")
        if buf[pos : pos + 1] != "[":
            raise damaged("expected a JSON array of rows")
        pos += 1
        size = chunk
        while True:
            skip(" \t\r\n,")
            if pos >= len(buf):
                raise damaged("the array is not closed")
            if buf[pos] == "]":
                return
            try:
                row, end = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError:
                if eof:
                    raise damaged("a row is not valid JSON") from None
                size *= 2  # a row longer than what is buffered: read more, then retry
                more(size)
                continue
            if not isinstance(row, dict):
                raise damaged("a row is not a JSON object")
            size = chunk
            pos = end
            yield row


def _batches(path: Path, batch_size: int) -> Iterator[tuple[int, list[dict[str, Any]], bool]]:
    """(rows before it, batch, is the last) for consecutive batches of a rows file."""
    batch: list[dict[str, Any]] = []
    done = 0
    for row in iter_rows(path):
        if len(batch) == batch_size:
            yield done, batch, False
            done += len(batch)
            batch = []
        batch.append(row)
    if batch:
        yield done, batch, True


@dataclass(frozen=True)
class _Part:
    """A statement, the keys of `row` it reads and its statement parameters (`params`: the
    class label or relationship type its text reads as `$(...)`, validated spec identifiers
    by the plan's contract). Each statement is sent only the keys it reads (an assertion's
    node statement does not need its edge's properties, nor its edge statement the node's),
    which halves what the assertions' batches put on the wire."""

    cypher: str
    keys: frozenset[str]
    params: dict[str, str]

    def __init__(self, cypher: str, params: dict[str, str] | None = None) -> None:
        object.__setattr__(self, "cypher", cypher)
        object.__setattr__(self, "keys", frozenset(_ROW_KEY.findall(cypher)))
        used = {k: v for k, v in (params or {}).items() if f"${k}" in cypher}
        object.__setattr__(self, "params", used)

    def run(self, tx: neo4j.ManagedTransaction, batch: list[dict[str, Any]]) -> neo4j.Result:
        return tx.run(self.cypher, self.params, rows=self.rows(batch))

    def rows(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not batch or self.keys.issuperset(batch[0]):
            return batch
        keys = self.keys
        return [{k: v for k, v in row.items() if k in keys} for row in batch]


_ROW_KEY = re.compile(r"\brow\.(\w+)")


def _holds_nodes(tx: neo4j.ManagedTransaction, label: str) -> bool:
    return tx.run(f"MATCH (n:{label}) RETURN n LIMIT 1").single() is not None


def _run_group(
    tx: neo4j.ManagedTransaction, label: str, group: list, removal: Written | None = None
) -> None:
    """One managed write transaction: the group's batches (each after its reconcile, on a
    reload), then (in the last one) `prune`."""
    for _, parts, reconcile, batch, _, _ in group:
        if reconcile:
            changed = [r["id"] for r in reconcile.run(tx, batch)]
            if changed:  # rare: an entity whose class changed, an id that changed kind
                tx.run(
                    f"MATCH (n:{label}) WHERE n.id IN $ids DETACH DELETE n", ids=changed
                ).consume()
        for part in parts:
            part.run(tx, batch).consume()
    if removal is not None:
        prune(tx, label, removal)


def run_checks(
    driver: neo4j.Driver, domain: CompiledDomain, database: str | None = None
) -> list[tuple[str, int, int]]:
    """Each compiled check as its own query: the reference `checks.run_fast` is held to
    (tests/graph/test_load_fast.py); loads call `run_fast`."""
    out = []
    for check in domain.plan.checks:
        records, _, _ = driver.execute_query(
            check.cypher, database_=database, routing_=neo4j.RoutingControl.READ
        )
        out.append((check.name, int(records[0]["value"]), int(check.expect)))
    return out


def graph_counts(driver: neo4j.Driver, label: str, database: str | None = None) -> dict[str, int]:
    """Node, relationship and property counts of one domain (for idempotence checks)."""
    query = (
        f"MATCH (n:{label}) WITH count(n) AS nodes, sum(size(keys(n))) AS node_props "
        f"OPTIONAL MATCH (:{label})-[r]->(:{label}) "
        "RETURN nodes, node_props, count(r) AS relationships, sum(size(keys(r))) AS rel_props"
    )
    records, _, _ = driver.execute_query(
        query, database_=database, routing_=neo4j.RoutingControl.READ
    )
    r = records[0]
    return {k: int(r[k] or 0) for k in ("nodes", "node_props", "relationships", "rel_props")}

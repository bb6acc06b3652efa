"""`kgbench load`: constraints, batched idempotent MERGE statements, then validation.

Every statement and its rows come from generated/<domain>/neo4j/; values reach Cypher only as
the `$rows` parameter. Batches run in managed write transactions of up to `batch_size` rows
(retried by the driver on transient errors), so an interrupted load leaves whole batches
behind, and because
every statement MERGEs on (:<label> {id}) and overwrites properties, running the load again
converges on the same graph as a clean load.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import neo4j

from kgbench.errors import UserError

from ..compiled import CompiledDomain, plain_statements, split_marked

DEFAULT_BATCH = 2000


class LoadValidationError(UserError):
    """The loaded graph failed a compiled validation query."""


@dataclass
class LoadReport:
    domain: str
    rows: int = 0
    statements: int = 0
    seconds: float = 0.0
    checks: list[tuple[str, int, int]] = field(default_factory=list)  # name, value, expect

    @property
    def failures(self) -> list[tuple[str, int, int]]:
        return [c for c in self.checks if c[1] != c[2]]


def apply_constraints(driver: neo4j.Driver, domain: CompiledDomain, database: str | None) -> None:
    """Schema statements run in auto-commit transactions (they cannot share one with writes)."""
    with driver.session(database=database) as session:
        for stmt in plain_statements(domain.read("neo4j/constraints.cypher")):
            session.run(stmt).consume()
        session.run("CALL db.awaitIndexes(300)").consume()


def load(
    driver: neo4j.Driver,
    domain: CompiledDomain,
    database: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[str, int, int], None] | None = None,
    validate: bool = True,
) -> LoadReport:
    report = LoadReport(domain.name)
    start = time.perf_counter()
    apply_constraints(driver, domain, database)
    units: list[tuple[str, str, list, int, int]] = []  # statement, cypher, rows, done, total
    for stmt in split_marked(domain.read("neo4j/load.cypher")):
        rows = json.loads(domain.read(f"neo4j/{stmt.rows}"))
        for i in range(0, len(rows), batch_size):
            units.append((stmt.name, stmt.cypher, rows[i : i + batch_size], i, len(rows)))
        report.rows += len(rows)
        report.statements += 1
    with driver.session(database=database) as session:
        for group in _transactions(units, batch_size):
            session.execute_write(_run_group, group)
            for name, _, batch, done, total in group:
                if progress:
                    progress(name, done + len(batch), total)
    report.seconds = time.perf_counter() - start
    if validate:
        report.checks = run_checks(driver, domain, database)
        if report.failures:
            lines = [
                f"{name}: {value} (expected {expect})" for name, value, expect in report.failures
            ]
            raise LoadValidationError(
                f"the loaded graph of '{domain.name}' failed {len(lines)} validation check(s): "
                + "; ".join(lines)
            )
    return report


def _transactions(units: list, batch_size: int) -> list[list]:
    """Consecutive (statement, batch) units grouped up to `batch_size` rows per transaction.

    Small statements share a transaction instead of paying one commit each (cardio has 25
    statements of ~27 rows); statement order is kept, so entities exist before the
    assertions that MATCH them, and a group is all-or-nothing.
    """
    groups: list[list] = []
    size = batch_size
    for unit in units:
        if size + len(unit[2]) > batch_size:
            groups.append([])
            size = 0
        groups[-1].append(unit)
        size += len(unit[2])
    return groups


def _run_group(tx: neo4j.ManagedTransaction, group: list) -> None:
    for _, cypher, batch, _, _ in group:
        tx.run(cypher, rows=batch).consume()


def run_checks(
    driver: neo4j.Driver, domain: CompiledDomain, database: str | None = None
) -> list[tuple[str, int, int]]:
    out = []
    for check in split_marked(domain.read("neo4j/validate.cypher")):
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

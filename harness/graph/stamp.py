"""Which compile of a domain the Neo4j graph holds, so extraction never reads a stale graph.

`kgbench load` stamps one `(:KgbenchLoad {domain})` node with the sha256 of the compiled
domain's manifest.json: state "loading" before the first write, "loaded" once every statement
ran, stale rows were pruned and the validation queries passed. `require_current` is what
`extract` and `pilot` call first; it refuses, with one message, a graph that was never
loaded, one whose last load stopped half-way or failed validation, one loaded from another
compile, and one whose entities were deleted behind kgbench's back.

Before this, extracting from an unloaded domain exited 0 and wrote contexts without a single
assertion: a whole benchmark would have run ungrounded without anyone noticing.
"""

from __future__ import annotations

import neo4j

from kgbench.errors import UserError
from kgbench.io import sha256_file

from ..compiled import CompiledDomain

STAMP_LABEL = "KgbenchLoad"  # a fixed label; the domain name and digest are parameters
STAMP_CONSTRAINT = (
    f"CREATE CONSTRAINT kgbench_load_domain IF NOT EXISTS "
    f"FOR (m:{STAMP_LABEL}) REQUIRE m.domain IS UNIQUE"
)


def manifest_digest(domain: CompiledDomain) -> str:
    """sha256 of generated/<domain>/manifest.json: one value for everything compiled."""
    return sha256_file(domain.manifest_path)


def mark(tx: neo4j.ManagedTransaction, domain: CompiledDomain, digest: str, state: str) -> None:
    tx.run(
        f"MERGE (m:{STAMP_LABEL} {{domain: $domain}}) SET m.digest = $digest, m.state = $state",
        domain=domain.name,
        digest=digest,
        state=state,
    ).consume()


def read_stamp(
    driver: neo4j.Driver, domain: CompiledDomain, database: str | None = None
) -> dict[str, str] | None:
    records, _, _ = driver.execute_query(
        f"MATCH (m:{STAMP_LABEL} {{domain: $domain}}) RETURN m.digest AS digest, m.state AS state",
        domain=domain.name,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return dict(records[0]) if records else None


def require_current(
    driver: neo4j.Driver, domain: CompiledDomain, database: str | None = None
) -> None:
    """Raise a UserError unless the graph holds exactly this compile of the domain."""
    load = f"run `kgbench load --domain {domain.name}`"
    stamp = read_stamp(driver, domain, database)
    if stamp is None:
        raise UserError(
            f"domain '{domain.name}' is not loaded in Neo4j; {load} before extracting "
            "(extraction from an empty graph would give contexts without assertions)"
        )
    if stamp.get("state") != "loaded":
        raise UserError(
            f"the graph of '{domain.name}' in Neo4j is half-loaded: the last `kgbench load` "
            f"stopped before the end or failed its validation; {load} again"
        )
    digest = manifest_digest(domain)
    if stamp.get("digest") != digest:
        raise UserError(
            f"the graph of '{domain.name}' in Neo4j was loaded from another compile (manifest "
            f"sha256 {str(stamp.get('digest'))[:12]}..., {domain.root} is {digest[:12]}...); "
            f"{load} so extraction reads the compiled graph"
        )
    records, _, _ = driver.execute_query(
        f"MATCH (n:{domain.label}:Entity) RETURN count(n) AS n",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    found, expected = int(records[0]["n"]), len(domain.graph["entities"])
    if found != expected:
        raise UserError(
            f"the graph of '{domain.name}' in Neo4j holds {found} of its {expected} entities "
            f"(changed outside kgbench since it was loaded); {load} again"
        )

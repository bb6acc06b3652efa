"""The compiled validation queries of a load, answered in one round trip, counts from the
count store where that gives the same number (issue 33, item 4).

`load.run_checks` runs each compiled check (generated/<domain>/neo4j plan `checks`) as its
own query: on a cold JVM each is planned on first use, and at 1M records the count checks
scan every node of a label pair and every relationship of a type. `run_fast` gives the same
(name, value, expected) rows with two queries:

1. Whole-store counts, all from the count store, read in one procedure call
   (`CALL db.stats.retrieve('GRAPH COUNTS')`, `count_store`): every node, the domain label's
   nodes, the load stamps (`KgbenchLoad`). When every node but the stamps carries the domain label, which
   a bulk import (a new database of this domain's files only) always gives and a shared
   database does not, a count check of `(n:KG_d:L)` equals the count store's `(n:L)`, and one
   of `(:KG_d)-[r:T]->(:KG_d)` its `()-[r:T]->()`. A relationship check with a label on
   both ends (`(:KG_d:EvidenceSource)-[r:SUPPORTS]->(:KG_d:Assertion)`) is the count store's
   total of `T` when both one-sided counts (`(:EvidenceSource)-[r:T]->()` and
   `()-[r:T]->(:Assertion)`), also in the count store, equal that total: then every such
   relationship has both labels. Otherwise the compiled query itself gives the value.
   The procedure returns the same numbers as `MATCH (n:L) RETURN count(n)` or
   `MATCH (:A)-[r:T]->() RETURN count(r)` planned as count-store reads (it reads the same
   store; an absent entry is a zero count) but needs no plan: the folded query of ~40 such
   subqueries it replaced took 1.4 s to plan on the pilot's freshly started JVM, the
   procedure about 0.1 s (tests/graph/test_load_fast.py compares them count by count).
2. Every other check (the pairing checks, and any count the rules above do not cover) runs
   as written, all as CALL subqueries of one read query: one plan, one round trip; but for
   the checks the caller already knows (`known`: a bulk load reads the pairing checks from
   its import files while the server imports them, `pairing.py`).

No check is dropped. neo4j-admin import guarantees that every relationship's ends exist and
that no node id repeats (it fails otherwise: the harness passes no `--skip-bad-*` option),
but none of the pairing checks tests that: `direct_edges_paired` and `assertions_paired` test
that each direct edge and its assertion node agree on id, predicate and ends, and that each
assertion has one subject and one object, `assertions_evidenced` that each assertion has
evidence or a reason. Those are properties of the rows the compiler wrote, which the importer
copies without reading, so a bulk load needs them exactly as a transactional one does: it
answers them from those rows (`pairing.py`), or here, and a failing one here always
(tests/graph/test_load_fast.py plants such defects in the import files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import neo4j

from ..compiled import CompiledDomain
from .stamp import STAMP_LABEL

_LABELS = r"((?::\w+)*)"
_NODE_COUNT = re.compile(rf"MATCH \(n{_LABELS}\) RETURN count\(n\) AS value")
_REL_COUNT = re.compile(
    rf"MATCH \({_LABELS}\)-\[r:(\w+)\]->\({_LABELS}\) RETURN count\(r\) AS value"
)


@dataclass(frozen=True)
class _Counted:
    """A count check the count store can answer: its node label, or its relationship type
    with at most one label left on each end once the domain label is dropped."""

    name: str
    expect: int
    label: str | None = None
    rel_type: str | None = None
    start: str | None = None
    end: str | None = None


def _labels(text: str, domain_label: str) -> list[str] | None:
    """The labels of a pattern's node but the domain label; None if it lacks that label."""
    labels = [x for x in text.split(":") if x]
    if domain_label not in labels:
        return None
    return [x for x in labels if x != domain_label]


def _counted(name: str, cypher: str, expect: int, domain_label: str) -> _Counted | None:
    text = " ".join(cypher.split())
    node = _NODE_COUNT.fullmatch(text)
    if node:
        rest = _labels(node.group(1), domain_label)
        if rest is not None and len(rest) <= 1:
            return _Counted(name, expect, label=rest[0] if rest else domain_label)
        return None
    rel = _REL_COUNT.fullmatch(text)
    if rel:
        start, end = _labels(rel.group(1), domain_label), _labels(rel.group(3), domain_label)
        if start is None or end is None or len(start) > 1 or len(end) > 1:
            return None
        return _Counted(
            name,
            expect,
            rel_type=rel.group(2),
            start=start[0] if start else None,
            end=end[0] if end else None,
        )
    return None


def folded(queries: list[str]) -> str:
    """One read query running each of `queries` (each returning one row with `value`) as a
    CALL subquery, returning their values as one list, in order."""
    parts = []
    for i, query in enumerate(queries):
        carried = "".join(f"v{j}, " for j in range(i))
        parts.append(f"CALL {{\n{query}\n}}\nWITH {carried}value AS v{i}")
    listed = ", ".join(f"v{j}" for j in range(len(queries)))
    return "\n".join(parts) + f"\nRETURN [{listed}] AS values"


GRAPH_COUNTS = (
    "CALL db.stats.retrieve('GRAPH COUNTS') YIELD data "
    "RETURN data.nodes AS nodes, data.relationships AS relationships"
)


@dataclass(frozen=True)
class CountStore:
    """The count store's numbers as `GRAPH COUNTS` lists them: nodes per label (None: every
    node), relationships per (start label, type, end label) with at most one of the labels
    (None: any). The procedure lists the non-zero counts only, so an absent key is 0."""

    nodes: dict[str | None, int]
    relationships: dict[tuple[str | None, str | None, str | None], int]

    def node_count(self, label: str | None = None) -> int:
        """What `MATCH (n:label) RETURN count(n)` (`MATCH (n)` for None) returns."""
        return self.nodes.get(label, 0)

    def relationship_count(
        self, rel_type: str | None, start: str | None = None, end: str | None = None
    ) -> int:
        """What `MATCH (:start)-[r:rel_type]->(:end) RETURN count(r)` returns, with at most
        one of `start` and `end` (the count store keeps no count with both)."""
        if start and end:
            raise ValueError("the count store has no count with both end labels")
        return self.relationships.get((start, rel_type, end), 0)


def count_store(driver: neo4j.Driver, database: str | None = None) -> CountStore:
    """Every count of the count store, in one call that needs no query plan."""
    records, _, _ = driver.execute_query(
        GRAPH_COUNTS, database_=database, routing_=neo4j.RoutingControl.READ
    )
    nodes = {n.get("label"): int(n["count"]) for n in records[0]["nodes"]}
    relationships = {
        (r.get("startLabel"), r.get("relationshipType"), r.get("endLabel")): int(r["count"])
        for r in records[0]["relationships"]
    }
    return CountStore(nodes, relationships)


def _read(driver: neo4j.Driver, query: str, database: str | None) -> list[int]:
    records, _, _ = driver.execute_query(
        query, database_=database, routing_=neo4j.RoutingControl.READ
    )
    return [int(v) for v in records[0]["values"]]


def count_store_plan(domain: CompiledDomain) -> list[tuple[str, str, list[tuple]]]:
    """The checks of `domain` the count store can answer: per check its name, its compiled
    query and the counts it is answered from (`("node", label)` or `("relationship", start,
    type, end)`; a relationship check with a label on each end has its total and both
    one-sided counts). For tests/graph/test_load_fast.py, which compares each with the
    compiled query."""
    out = []
    for ch in domain.plan.checks:
        c = _counted(ch.name, ch.cypher, int(ch.expect), domain.plan.label)
        if c is None:
            continue
        if c.label is not None:
            out.append((c.name, ch.cypher, [("node", c.label)]))
            continue
        keys: list[tuple] = [("relationship", None, c.rel_type, None)]
        keys += [("relationship", c.start, c.rel_type, None)] if c.start else []
        keys += [("relationship", None, c.rel_type, c.end)] if c.end else []
        out.append((c.name, ch.cypher, keys))
    return out


def run_fast(
    driver: neo4j.Driver,
    domain: CompiledDomain,
    database: str | None = None,
    known: dict[str, int] | None = None,
) -> list[tuple[str, int, int]]:
    """`load.run_checks`' rows, in its order, from at most two queries (see module doc).

    `known`: values already established for some checks (a bulk load's pairing checks read
    from the import files, `pairing.pairing_values`), which no query runs again."""
    label = domain.plan.label  # plan.json: kg.json (what domain.label reads) is the whole graph
    values: dict[str, int] = dict(known or {})
    checks = list(domain.plan.checks)
    counted = {
        c.name: c
        for c in (_counted(ch.name, ch.cypher, int(ch.expect), label) for ch in checks)
        if c is not None and c.name not in values
    }
    if counted:
        store = count_store(driver, database)
        every = store.node_count()
        only_this_domain = every == store.node_count(label) + store.node_count(STAMP_LABEL)
        for c in counted.values():
            if c.label is not None:
                if only_this_domain:
                    values[c.name] = store.node_count(c.label)
                continue
            total = store.relationship_count(c.rel_type)
            sides = [store.relationship_count(c.rel_type, start=c.start)] if c.start else []
            sides += [store.relationship_count(c.rel_type, end=c.end)] if c.end else []
            if only_this_domain and all(s == total for s in sides):
                values[c.name] = total
    rest = [ch for ch in checks if ch.name not in values]
    if rest:
        got = _read(driver, folded([ch.cypher for ch in rest]), database)
        values.update(zip((ch.name for ch in rest), got, strict=True))
    return [(ch.name, values[ch.name], int(ch.expect)) for ch in checks]

"""The compiled validation queries of a load, answered in one round trip, counts from the
count store where that gives the same number (issue 33, item 4).

`load.run_checks` runs each compiled check (generated/<domain>/neo4j plan `checks`) as its
own query: on a cold JVM each is planned on first use, and at 1M records the count checks
scan every node of a label pair and every relationship of a type. `run_fast` gives the same
(name, value, expected) rows with two queries:

1. Whole-store counts, all from the count store: every node, the domain label's nodes, the
   load stamps (`KgbenchLoad`). When every node but the stamps carries the domain label, which
   a bulk import (a new database of this domain's files only) always gives and a shared
   database does not, a count check of `(n:KG_d:L)` equals the count store's `(n:L)`, and one
   of `(:KG_d)-[r:T]->(:KG_d)` its `()-[r:T]->()`. A relationship check with a label on
   both ends (`(:KG_d:EvidenceSource)-[r:SUPPORTS]->(:KG_d:Assertion)`) is the count store's
   total of `T` when both one-sided counts (`(:EvidenceSource)-[r:T]->()` and
   `()-[r:T]->(:Assertion)`), also in the count store, equal that total: then every such
   relationship has both labels. Otherwise the compiled query itself gives the value.
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


def _count_queries(counted: list[_Counted], domain_label: str) -> list[str]:
    """Count-store queries: the store's totals first, then per check its total (and, for a
    relationship check with end labels, its one-sided counts)."""
    out = [
        "MATCH (n) RETURN count(n) AS value",
        f"MATCH (n:{domain_label}) RETURN count(n) AS value",
        f"MATCH (n:{STAMP_LABEL}) RETURN count(n) AS value",
    ]
    for c in counted:
        if c.label is not None:
            out.append(f"MATCH (n:{c.label}) RETURN count(n) AS value")
            continue
        out.append(f"MATCH ()-[r:{c.rel_type}]->() RETURN count(r) AS value")
        if c.start:
            out.append(f"MATCH (:{c.start})-[r:{c.rel_type}]->() RETURN count(r) AS value")
        if c.end:
            out.append(f"MATCH ()-[r:{c.rel_type}]->(:{c.end}) RETURN count(r) AS value")
    return out


def _read(driver: neo4j.Driver, query: str, database: str | None) -> list[int]:
    records, _, _ = driver.execute_query(
        query, database_=database, routing_=neo4j.RoutingControl.READ
    )
    return [int(v) for v in records[0]["values"]]


def count_store_plan(domain: CompiledDomain) -> tuple[str, list[str]]:
    """The count-store query of `domain`'s checks and the names of the checks it answers."""
    counted = [
        c
        for c in (
            _counted(ch.name, ch.cypher, int(ch.expect), domain.plan.label)
            for ch in domain.plan.checks
        )
        if c is not None
    ]
    return folded(_count_queries(counted, domain.plan.label)), [c.name for c in counted]


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
        got = iter(_read(driver, folded(_count_queries(list(counted.values()), label)), database))
        every, domain_nodes, stamps = next(got), next(got), next(got)
        only_this_domain = every == domain_nodes + stamps
        for c in counted.values():
            total = next(got)
            sides = [next(got) for side in (c.start, c.end) if side]
            if only_this_domain and all(s == total for s in sides):
                values[c.name] = total
    rest = [ch for ch in checks if ch.name not in values]
    if rest:
        got = _read(driver, folded([ch.cypher for ch in rest]), database)
        values.update(zip((ch.name for ch in rest), got, strict=True))
    return [(ch.name, values[ch.name], int(ch.expect)) for ch in checks]

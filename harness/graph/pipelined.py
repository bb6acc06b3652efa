"""Many extractions at once, as the pilot runs them: every (scenario, condition) of a run on
two sessions, each with one read transaction, contexts returned in the order asked.

Why: on a freshly started server the pilot's 240 extractions of the example domain took 10-16 s. One
`execute_query` per extraction opens a session and a transaction each (about 7 ms of round
trips on a cold JVM, a `RETURN 1` included); one transaction for the run removes those, and
a second session lets the server work on one query while the client shapes the result of
the other. Measured from a stopped Neo4j (cold JVM, shared 2-core host): one transaction
per query 9.7 s, one transaction for all 8.1 s, two sessions 7.3 s; warm 2.3, 2.0 and 1.6 s.
The contexts are the same, byte for byte: each is the result of the same compiled query with
the same parameters, and the graph is not written while they run.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import neo4j

from ..compiled import CompiledDomain
from .extract import extract, parameters, plan_key, read_records, read_transaction

SESSIONS = 2  # the machine's cores; more only queue on the server


def extract_many(
    driver: neo4j.Driver,
    domain: CompiledDomain,
    work: Sequence[tuple[dict[str, Any], str]],
    database: str | None = None,
    sessions: int = SESSIONS,
) -> list[dict[str, Any] | None]:
    """The context of each (scenario, condition id) in `work`, in that order (None for an
    ungrounded condition), spread round-robin over `sessions` read transactions."""
    sessions = max(1, min(sessions, len(work)))

    def share(k: int) -> list[dict[str, Any] | None]:
        with read_transaction(driver, database) as tx:
            return [extract(tx, domain, s, c, database) for s, c in work[k::sessions]]

    out: list[dict[str, Any] | None] = [None] * len(work)
    if not work:
        return out
    with ThreadPoolExecutor(sessions, thread_name_prefix="extract") as pool:
        for k, contexts in enumerate(pool.map(share, range(sessions))):
            out[k::sessions] = contexts
    return out


def plan_ahead(
    driver: neo4j.Driver,
    domain: CompiledDomain,
    scenarios: Sequence[dict[str, Any]],
    condition_ids: Sequence[str],
    database: str | None = None,
) -> int:
    """Have the server plan each condition's compiled query once per plan-cache key the
    scenarios have (`extract.plan_key`), with EXPLAIN: planned and cached, not run, nothing
    read. Returns the number of plans asked for.

    Why: on a freshly started server the pilot's extraction was mostly first planning (the
    example domain: EXPLAIN of a query 3.2 s, then its run 0.22 s; another query's first run
    3.1 s, at load 14). The pilot calls this in a thread while the load runs, on the core the
    load leaves, so the extraction finds its plans made. A plan made while the load writes
    is the plan of the same query text: the results do not depend on it, only the time."""
    queries = {c: domain.read(q) for c in condition_ids if (q := domain.condition(c).query)}
    firsts: dict[tuple, dict[str, Any]] = {}
    for scenario in scenarios:
        params = parameters(scenario, domain)
        firsts.setdefault(plan_key(params), params)
    for params in firsts.values():
        for query in queries.values():
            read_records(driver, f"EXPLAIN {query}", params, database)
    return len(firsts) * len(queries)

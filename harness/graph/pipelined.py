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
from .extract import extract, read_transaction

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

"""A compiled domain's import files loaded by `neo4j-admin` into a private store and served by
a server of its own: the bulk path's graph, for tests that compare it with another."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import neo4j

from harness.compiled import CompiledDomain


@contextmanager
def imported_graph(
    compiled: CompiledDomain, plan: dict[str, Any], tmp_path: Path
) -> Iterator[neo4j.Driver]:
    """A driver to the graph `neo4j-admin database import` makes of `compiled`'s import files
    under `plan` (the import plan), with the compiled constraints applied; the server stops
    when the block ends."""
    from harness.graph.load import apply_constraints
    from harness.neo4j import bulk_import, connection_settings, open_driver, start, stop

    store = tmp_path / "store"
    bulk_import(
        compiled.import_dir,
        plan["nodes"],
        plan["relationships"],
        store_dir=store,
        array_delimiter=plan["array_delimiter"],
        id_type=plan["id_type"],
    )
    state = tmp_path / "state"
    info = start(state, home=store, watch_pid=os.getpid())
    try:
        with open_driver(connection_settings(info.state_dir)) as driver:
            apply_constraints(driver, compiled, None)
            yield driver
    finally:
        stop(state)

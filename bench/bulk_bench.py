"""`kgbench load --bulk` end to end against its floor (issue 33, items 1 and 4): from the call
to a validated, stamped, served graph (the server stopped, the compiled import files through
`neo4j-admin database import full`, the server started again, the constraints and indexes
built and the compiled validation queries run), against the floor measured in the same run,
interleaved: stop + the same `neo4j-admin database import full` of the same files + start,
nothing else (`floor`). Target: within 1.25x. The post-import work (constraints, indexes,
validation) is also held to a quarter of the import itself. Records per second stay beside
them for information.

The synthetic domain is sized to about 1,000,000 records (190,000 assertions: 5.25 records an
assertion), 100,000 with --quick. Beside it, the baseline: the transactional `kgbench load`
of the same domain into the same empty database, on a JVM warmed by a load before. The bulk
load restarts the JVM each time, which is part of its cost and said on its line.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.graph.bulk import bulk_load, import_plan
from harness.graph.load import load
from harness.neo4j import connection_settings, open_driver, start, stop
from harness.neo4j.importer import bulk_import

from .neo4j_bench import wipe
from .synth import make_domain
from .timing import figure, load_average, versus_floor

TARGET_RATIO = 1.25  # end to end over stop + import + start (issue 33, item 4)
TARGET_POST_IMPORT = 0.25  # constraints, indexes and validation over the import itself
RECORDS_PER_ASSERTION = 5.25  # 1 node, 3 role/direct edges, 1 SUPPORTS, 0.25 entities


def records(domain: CompiledDomain) -> int:
    counts = json.loads(domain.read("neo4j/import/import.json"))["expected_counts"]
    nodes = counts["entities"] + counts["assertions"] + counts["evidence_sources"]
    return nodes + 3 * counts["assertions"] + counts["supports"] + counts["members"]


def _wipe_all(state: Path) -> None:
    with open_driver(connection_settings(state)) as driver:
        wipe(driver)


def floor(domain: CompiledDomain, state: Path) -> float:
    """Stop + `neo4j-admin database import full` of the domain's compiled import files +
    start: the least a bulk load can do. Returns seconds."""
    plan = import_plan(domain)
    info = start(state, watch_pid=os.getpid())
    t = time.perf_counter()
    stop(state)
    bulk_import(
        domain.root / "neo4j" / "import",
        plan["nodes"],
        plan["relationships"],
        "neo4j",
        store_dir=info.home,
        array_delimiter=plan["array_delimiter"],
        id_type=plan["id_type"],
        extra_args=["--multiline-fields=true"] if plan.get("multiline_fields") else [],
    )
    start(state, home=info.home, watch_pid=os.getpid())
    return time.perf_counter() - t


def main(quick: bool = False) -> list[str]:
    n = 20_000 if quick else 190_000
    runs = 1 if quick else 3
    lines = [f"## Bulk load ({load_average()})"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        domain_dir, _ = make_domain(tmp_path / "synth", n)
        compile_domain(domain_dir, out_root=tmp_path / "generated", force=True)
        synth = CompiledDomain.open("synth", generated=tmp_path / "generated")
        total = records(synth)
        state = tmp_path / "neo4j"
        start(state, watch_pid=os.getpid())
        try:
            # baseline: the transactional load into the empty database, after a warm-up load
            with open_driver(connection_settings(state)) as driver:
                load(driver, synth, batch_size=5000)
                transactional = []
                for _ in range(1 if quick else 2):
                    _wipe_all(state)
                    t = time.perf_counter()
                    load(driver, synth, batch_size=5000)
                    transactional.append(time.perf_counter() - t)
            bulk, phases, floors = [], [], []
            for _ in range(runs):  # interleaved: ours, then the floor
                # force: the database holds the previous run's graph, which the import
                # replaces whole either way (the emptiness check is all that differs)
                t = time.perf_counter()
                report = bulk_load(synth, state_dir=state, force=True)
                bulk.append(time.perf_counter() - t)
                assert not report.failures and report.records == total, report
                phases.append(report.phases)
                floors.append(floor(synth, state))
        finally:
            stop(state)
    split = ", ".join(
        f"{name} {statistics.median(p[name] for p in phases):.1f} s" for name in phases[0]
    )
    when = "cold: each restarts the JVM; empty database; interleaved"
    post = [p["constraints"] + p.get("pairing", 0.0) + p.get("validate", 0.0) for p in phases]
    return [
        *lines,
        f"bulk load of a synthetic domain ({total:,} records: {n:,} assertions):",
        *versus_floor(
            "  ours: kgbench load --bulk, end to end",
            bulk,
            "stop + neo4j-admin import + start",
            floors,
            target=TARGET_RATIO,
            state=when,
            digits=2,
        ),
        f"    median phases: {split}",
        *versus_floor(
            "  post-import work (constraints, validation)",
            post,
            "the import itself",
            [p["import"] for p in phases],
            target=TARGET_POST_IMPORT,
            state="phases of the runs above",
            digits=2,
        )[:1],
        figure(
            "  ours: kgbench load --bulk, end to end",
            [total / x for x in bulk],
            unit="records/s",
            target=None,
            higher_is_better=True,
            state=when,
            no_target="(information)",
        ),
        figure(
            "  transactional kgbench load",
            [total / x for x in transactional],
            unit="records/s",
            target=None,
            higher_is_better=True,
            state="warm JVM (a load before), empty database",
            no_target="(information)",
        ),
        f"  speed-up (median transactional / median bulk time): "
        f"{statistics.median(transactional) / statistics.median(bulk):.1f}x",
    ]

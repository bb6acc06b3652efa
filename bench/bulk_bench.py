"""`kgbench load --bulk` end to end (issue 17, item 3): records (nodes + relationships) per
second from the call to a validated, stamped, served graph: the server stopped, the compiled
import files through `neo4j-admin database import full`, the server started again, the
constraints and indexes built and the compiled validation queries run.

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
from harness.graph.bulk import bulk_load
from harness.graph.load import load
from harness.neo4j import connection_settings, open_driver, start, stop

from .neo4j_bench import wipe
from .synth import make_domain
from .timing import figure, load_average

TARGET_RECORDS_PER_S = 150_000.0  # end to end at 1M records, 2 cores (issue 17, item 3)
RECORDS_PER_ASSERTION = 5.25  # 1 node, 3 role/direct edges, 1 SUPPORTS, 0.25 entities


def records(domain: CompiledDomain) -> int:
    counts = json.loads(domain.read("neo4j/import/import.json"))["expected_counts"]
    nodes = counts["entities"] + counts["assertions"] + counts["evidence_sources"]
    return nodes + 3 * counts["assertions"] + counts["supports"] + counts["members"]


def _wipe_all(state: Path) -> None:
    with open_driver(connection_settings(state)) as driver:
        wipe(driver)


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
            bulk, phases = [], []
            for _ in range(runs):
                _wipe_all(state)
                t = time.perf_counter()
                report = bulk_load(synth, state_dir=state)
                bulk.append(time.perf_counter() - t)
                assert not report.failures and report.records == total, report
                phases.append(report.phases)
        finally:
            stop(state)
    split = ", ".join(
        f"{name} {statistics.median(p[name] for p in phases):.1f} s" for name in phases[0]
    )
    return [
        *lines,
        f"bulk load of a synthetic domain ({total:,} records: {n:,} assertions):",
        figure(
            "  ours: kgbench load --bulk, end to end",
            [total / x for x in bulk],
            unit="records/s",
            target=TARGET_RECORDS_PER_S,
            higher_is_better=True,
            state="cold: the load restarts the JVM; empty database",
        ),
        f"    median phases: {split}",
        figure(
            "  baseline: transactional kgbench load",
            [total / x for x in transactional],
            unit="records/s",
            target=None,
            higher_is_better=True,
            state="warm JVM (a load before), empty database",
        ),
        f"  speed-up (median transactional / median bulk time): "
        f"{statistics.median(transactional) / statistics.median(bulk):.1f}x",
    ]

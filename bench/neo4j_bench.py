"""Neo4j benchmarks (issue: a real Neo4j).

- embedded server start time (a fresh JVM on an existing store);
- load throughput (assertions per second) for cardio and a synthetic 100,000-assertion
  domain; the load into an empty label beside the previous load statements (whose plans had
  Eager operators), and beside a naive baseline that sends one row per transaction. Both
  paths run on the same server state, said on each line: a JVM warmed by one load of each
  path first, and for the synthetic domain a label already populated by a full load, so the
  baseline's sample (1% of every statement's rows, extrapolated: a full naive load would take
  many minutes) finds the nodes its MATCHes seek, exactly as the batched re-load beside it
  does (into an empty label nearly every sampled relationship row would match nothing and
  write nothing, which flattered the speed-up ~1.7x). The synthetic load into an empty label
  is held to its floor (issue 33): a hand-written UNWIND/CREATE of the same rows with the
  official driver (`floor_load`), interleaved, within TARGET_LOAD_RATIO;
- cardio's first extraction pass after a fresh start (a new JVM on the loaded store), with
  the start-up warm-up the extracting commands run (`harness.graph.extract.warm_up`) and,
  after a restart of its own, without it; the first is held to TARGET_FIRST_P95_MS;
- extraction latency p50/p95 per (scenario, condition) on cardio and on the synthetic domain;
  on the synthetic domain the compiled queries (every validated chain, bounded and ranked) run
  beside a baseline in the same run: the same queries with the causal chains of the previous
  rule (the first of the paper's fixed path shapes that matches, one chain shape per
  candidate). Both are measured cold (query caches cleared, first pass) and warm (after a
  warm-up pass); the warm p95 of the compiled queries is held to TARGET_P95_MS, and to
  TARGET_EXTRACT_RATIO times its floor, a `RETURN 1` round trip (one auto-commit run: the
  least a read costs) measured pass by pass between them (cardio's warm passes likewise),
  with the server's own query time beside it (the part of the ratio no client change removes).
"""

from __future__ import annotations

import json
import os
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.graph.extract import (
    WARM_UP_SCENARIOS,
    WARM_UP_SESSIONS,
    extract,
    parameters,
    warm_up,
)
from harness.graph.load import apply_constraints, load
from harness.neo4j import connection_settings, open_driver, start, stop
from harness.scenario_files import generated_set, read_scenarios
from kgbench.locations import CHECKOUT as REPO_ROOT

from .synth import make_domain
from .timing import figure, load_average, versus_floor

TARGET_P95_MS = 50.0  # extraction p95 per (scenario, condition), 100,000-assertion domain, warm
# cardio extraction p95 on the first pass after a fresh start (issue 17, item 6)
TARGET_FIRST_P95_MS = 20.0
# issue 33: the transactional load against the hand-written UNWIND/CREATE floor (issue 17's
# absolute 12,000/s was beyond the floor itself and is retired; issue 33 sets no ratio for
# this path, the 1.25x it sets for the bulk path is used), and the warm extraction p95
# against a `RETURN 1` round trip (item 7: within 2x)
TARGET_LOAD_RATIO = 1.25
TARGET_EXTRACT_RATIO = 2.0
TARGET_WARM_UP_S = 10.0  # issue 33, item 7: the start-up warm-up on the 100k-assertion domain

# The previous chain rule, kept here as the baseline: fixed-length patterns, one per shape of
# the paper's list, and per candidate only the chains of the first shape that matches.
BASELINE_SHAPES = (
    "mechanistic mechanistic causal causal",
    "mechanistic mechanistic causal causal causal",
    "mechanistic mechanistic causal causal causal causal",
    "mechanistic mechanistic causal",
    "causal causal",
    "causal causal causal",
    "causal",
)


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def naive_load(driver, domain: CompiledDomain, fraction: float = 1.0) -> tuple[int, float]:
    """One row per transaction, the same compiled statements (follow-ups, and on a populated
    label the reconcile read, as `load` runs them): the baseline. Returns (rows, seconds)."""
    apply_constraints(driver, domain, None)
    populated = bool(
        driver.execute_query(f"MATCH (n:{domain.label}) RETURN 1 AS x LIMIT 1").records
    )
    rows_done, start_t = 0, time.perf_counter()
    for stmt in domain.plan.statements:
        rows = json.loads(domain.read(f"neo4j/{stmt.rows}"))
        rows = rows[: max(1, int(len(rows) * fraction))] if rows else rows
        reads = [stmt.reconcile] if populated and stmt.reconcile else []
        statements = [*reads, stmt.cypher, *stmt.then]
        for row in rows:

            def one(tx, row=row, statements=statements, params=stmt.params):
                for cypher in statements:
                    tx.run(cypher, params, rows=[row]).consume()

            with driver.session() as session:
                session.execute_write(one)
        rows_done += len(rows)
    return rows_done, time.perf_counter() - start_t


def spelled(cypher: str, params: dict[str, str]) -> str:
    """A compiled statement with the class label or relationship type it reads from a
    statement parameter (`$($name)`) spelled out, as a hand-written statement would have it."""
    return re.sub(r"\$\(\$(\w+)\)", lambda m: params[m.group(1)], cypher)


def floor_statement(name: str, label: str, cypher: str, params: dict[str, str]) -> str:
    """The hand-written UNWIND/CREATE a loader that trusts its input would send for one
    compiled statement's rows: CREATE instead of MERGE, whole property maps, no reconcile,
    no follow-up statements (the assertion's three relationships are created with it), and
    its class label or relationship type spelled out, not read from a parameter."""
    cypher = spelled(cypher, params)
    if name.startswith("assertion_"):
        return (
            "UNWIND $rows AS row\n"
            f"MATCH (s:{label} {{id: row.subject_id}})\n"
            f"MATCH (o:{label} {{id: row.object_id}})\n"
            f"CREATE (a:{label}:Assertion)\nSET a = row.props, a.id = row.id\n"
            f"CREATE (a)-[:HAS_SUBJECT]->(s), (a)-[:HAS_OBJECT]->(o), "
            f"(s)-[r:{name[len('assertion_') :]}]->(o)\nSET r = row.edge_props"
        )
    if name == "supports":
        return (
            "UNWIND $rows AS row\n"
            f"MATCH (e:{label} {{id: row.evidence_id}})\n"
            f"MATCH (a:{label} {{id: row.assertion_id}})\n"
            "CREATE (e)-[s:SUPPORTS]->(a)\nSET s = row.props"
        )
    if name == "members":
        return (
            "UNWIND $rows AS row\n"
            f"MATCH (m:{label} {{id: row.member_id}})\n"
            f"MATCH (k:{label} {{id: row.class_id}})\n"
            "CREATE (m)-[:MEMBER_OF]->(k)"
        )
    labels = re.search(r"MERGE \(n:([\w:]+) \{id: row\.id\}\)", cypher)
    assert labels, cypher
    return f"UNWIND $rows AS row\nCREATE (n:{labels.group(1)})\nSET n = row.props, n.id = row.id"


def floor_load(driver, domain: CompiledDomain, batch_size: int = 5000) -> float:
    """The floor of a transactional load: the compiled rows sent in batches of `batch_size`
    with `floor_statement`, one managed transaction a batch, through the official driver,
    into the same server with the same constraints. Returns seconds."""
    apply_constraints(driver, domain, None)
    start_t = time.perf_counter()
    for stmt in domain.plan.statements:
        cypher = floor_statement(stmt.name, domain.label, stmt.cypher, stmt.params)
        rows = json.loads(domain.read(f"neo4j/{stmt.rows}"))
        for i in range(0, len(rows), batch_size):
            driver.execute_query(cypher, rows=rows[i : i + batch_size])
    return time.perf_counter() - start_t


# The extraction floor's name on the bench lines: the least work a read can be.
FLOOR = "RETURN 1 p95 (one auto-commit run: one round trip)"


def round_trips(driver, n: int) -> list[float]:
    """`RETURN 1` round trips (ms): the floor of one extraction call, the least a read costs,
    one auto-commit query on a pooled connection (RUN and PULL together: one round trip), as
    `extract` reads. `execute_query`'s managed transaction (BEGIN with RUN/PULL, then COMMIT:
    two round trips) would be a higher floor and flatter the ratio."""
    out = []
    for _ in range(n):
        t = time.perf_counter()
        with driver.session() as session:
            list(session.run("RETURN 1 AS x"))
        out.append((time.perf_counter() - t) * 1000)
    return out


# What `warm_up` does, for the bench lines.
WARM_UP_DOES = (
    f"one plan per query and plan key, then {WARM_UP_SCENARIOS} scenarios, "
    f"{WARM_UP_SESSIONS} sessions"
)


def server_times(driver, domain: CompiledDomain, scenarios: list[dict]) -> list[float]:
    """The server's own time (ms) of each extraction query, as it reports it
    (result_available_after + result_consumed_after): what no client change removes, so
    its ratio to the floor bounds the extraction's from below."""
    out = []
    for scenario in scenarios:
        params = parameters(scenario, domain)
        for cond in ("C2", "C3", "C4"):
            with driver.session() as session:
                result = session.run(domain.read(domain.condition(cond).query), params)
                list(result)
                summary = result.consume()
            out.append(float(summary.result_available_after + summary.result_consumed_after))
    return out


def server_line(label: str, servers: list[float], floors: list[float]) -> str:
    """The server's own p95 per pass against the same passes' floor, for information."""
    ratios = [a / b for a, b in zip(servers, floors, strict=True)]
    return (
        f"  {label}: the server's own query time p95 per pass {statistics.median(servers):.1f} ms "
        f"= {statistics.median(ratios):.2f}x the floor (min {min(ratios):.2f}, max "
        f"{max(ratios):.2f}; {load_average()}): the ratio above cannot go below this without "
        "faster queries (information)"
    )


# The load statements before issue 17 (item 3), kept as a baseline: `SET n = row.props`
# rewrites the id the MERGE seeks on and labels are set after the MERGE, which plans Eager
# operators (four in the assertion statement).
def _eager_statement(name: str, label: str, cypher: str) -> str:
    if name.startswith("assertion_"):
        pred = name[len("assertion_") :]
        return (
            "UNWIND $rows AS row\n"
            f"MATCH (s:{label} {{id: row.subject_id}})\n"
            f"MATCH (o:{label} {{id: row.object_id}})\n"
            f"MERGE (a:{label} {{id: row.id}})\n"
            "SET a = row.props\nSET a:Assertion\n"
            "MERGE (a)-[:HAS_SUBJECT]->(s)\n"
            "MERGE (a)-[:HAS_OBJECT]->(o)\n"
            f"MERGE (s)-[r:{pred} {{assertion_id: row.id}}]->(o)\n"
            "SET r = row.edge_props"
        )
    if name.startswith(("entity_", "evidence_")):
        extra = re.search(rf"MERGE \(n:{label}:([\w:]+) ", cypher)
        assert extra, cypher
        return (
            f"UNWIND $rows AS row\nMERGE (n:{label} {{id: row.id}})\n"
            f"SET n = row.props\nSET n:{extra.group(1)}"
        )
    if name == "supports":
        return (
            "UNWIND $rows AS row\n"
            f"MATCH (e:{label} {{id: row.evidence_id}})\n"
            f"MATCH (a:{label} {{id: row.assertion_id}})\n"
            "MERGE (e)-[s:SUPPORTS]->(a)\nSET s = row.props"
        )
    return cypher


def eager_domain(domain: CompiledDomain, root: Path) -> CompiledDomain:
    """A view of a compiled domain whose plan has the previous (Eager) load statements; the
    rows and everything else are the compiled ones (linked, not copied)."""
    (root / "neo4j").mkdir(parents=True)
    for item in domain.root.iterdir():
        if item.name != "neo4j":
            (root / item.name).symlink_to(item)
    for item in (domain.root / "neo4j").iterdir():
        if item.name != "plan.json":
            (root / "neo4j" / item.name).symlink_to(item)
    plan = json.loads(domain.read("neo4j/plan.json"))
    for stmt in plan["statements"]:
        cypher = spelled(stmt["cypher"], stmt.get("params", {}))
        stmt["cypher"] = _eager_statement(stmt["name"], plan["label"], cypher)
        stmt.pop("then", None)
        stmt.pop("reconcile", None)
        stmt.pop("params", None)
    (root / "neo4j" / "plan.json").write_text(json.dumps(plan))
    return CompiledDomain(domain.name, root)


def total_rows(domain: CompiledDomain) -> int:
    return sum(len(json.loads(domain.read(f"neo4j/{s.rows}"))) for s in domain.plan.statements)


def wipe(driver, label: str | None = None) -> None:
    """Delete the nodes of `label` (every node without one) in bounded transactions: their
    relationships first, then the nodes. A batch of 10,000 `DETACH DELETE`s holds every edge
    of each node, which on hub entities exceeded the transaction memory pool (bulk_bench's
    1M-record graph). CALL ... IN TRANSACTIONS needs an auto-commit transaction, hence
    session.run."""
    node = f"(n:{label})" if label else "(n)"
    with driver.session() as session:
        for cypher in (
            f"MATCH {node}-[r]->() CALL (r) {{ DELETE r }} IN TRANSACTIONS OF 10000 ROWS",
            f"MATCH {node} CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 10000 ROWS",
        ):
            session.run(cypher).consume()


def latencies(driver, domain: CompiledDomain, scenarios: list[dict], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        for scenario in scenarios:
            for cond in ("C2", "C3", "C4"):
                t = time.perf_counter()
                extract(driver, domain, scenario, cond)
                out.append((time.perf_counter() - t) * 1000)
    return out


def synthetic_scenarios(entities: list[dict], count: int, seed: int = 11) -> list[dict]:
    """A fixed sample of scenarios over a synthetic domain (bench/synth.py): three drugs as
    candidates and a clinical outcome as the target, drawn from `entities` (kg.json's rows,
    or rows with at least id and category) by a seeded generator, so every run asks the same."""
    rng = random.Random(seed)
    drugs = [e["id"] for e in entities if e["category"] == "Drug"]
    outcomes = [e["id"] for e in entities if e["category"] == "ClinicalOutcome"]
    population = min(e["id"] for e in entities if e["category"] == "Population")
    return [
        {
            "scenario_id": f"SYN_{i}",
            "population_id": population,
            "target_outcome_id": rng.choice(outcomes),
            "patient": {},
            "candidates": [{"intervention_id": d, "label": d} for d in rng.sample(drugs, 3)],
        }
        for i in range(count)
    ]


def baseline_domain(domain: CompiledDomain, root: Path) -> CompiledDomain:
    """A view of a compiled domain whose C3/C4 chain branches follow the previous rule (the
    first matching fixed shape per candidate); everything else is the compiled query. Only
    cypher/ is copied, the rest is linked (at PrimeKG scale the outputs are gigabytes)."""
    import re
    import shutil

    root.mkdir(parents=True)
    for item in domain.root.resolve().iterdir():
        if item.name != "cypher":
            (root / item.name).symlink_to(item)
    shutil.copytree(domain.root / "cypher", root / "cypher")
    roles = {p["name"]: p["role"] for p in domain.graph["predicates"]}
    for cond in ("C3", "C4"):
        section = domain.condition(cond).section("causal_chain")
        path = root / "cypher" / f"{cond}.cypher"
        text = path.read_text()
        header = text.index(f"  // section {section.name}: ")
        start = text.index("\n", header) + 1  # the section's chain groups, to the next section
        end = text.index("  UNION\n  // section ", start)
        text = text[:start] + _first_shape_branch(domain.label, section, roles) + text[end:]
        path.write_text(re.sub(r"\n{3,}", "\n\n", text))
    return CompiledDomain(domain.name, root)


def _first_shape_branch(label: str, section, roles: dict[str, str]) -> str:
    types = {r: "|".join(p for p in section.predicates if roles[p] == r) for r in section.roles}
    branches = []
    for rank, shape in enumerate(BASELINE_SHAPES):
        steps = shape.split()
        if not all(types.get(r) for r in steps):
            continue
        hops = f"(:{label})".join(f"-[:{types[r]}]->" for r in steps)
        where = (
            "    WHERE all(r IN relationships(p) WHERE r.validated)\n"
            if section.validated_only
            else ""
        )
        branches.append(
            f"    MATCH p = (c){hops}(t)\n{where}"
            f"    RETURN {rank} AS shape_rank, [r IN relationships(p) | r.assertion_id] AS chain,\n"
            "      relationships(p) AS rels\n"
        )
    return (
        f"  MATCH (t:{label} {{id: $target_id}}) USING INDEX SEEK t:{label}(id)\n"
        "  CALL (c, t) {\n" + "    UNION\n".join(branches) + "  }\n"
        "  WITH shape_rank, chain, rels ORDER BY shape_rank\n"
        "  WITH collect({rank: shape_rank, chain: chain, rels: rels}) AS found\n"
        "  UNWIND [f IN found WHERE f.rank = found[0].rank] AS best\n"
        f"  RETURN '{section.name}' AS section, best.chain AS chain, best.rels AS rels\n"
    )


def clear_query_caches(driver) -> None:
    driver.execute_query("CALL db.clearQueryCaches()")


def extraction_lines(driver, domain, baseline, scenarios, repeats: int) -> list[str]:
    """Cold and warm p50/p95 of the compiled queries and of the baseline, in one run (the
    baseline first when cold, second when warm, so neither always finds the other's pages);
    then the warm p95 against its floor, a `RETURN 1` round trip, pass by pass."""
    cold_base = (clear_query_caches(driver), latencies(driver, baseline, scenarios, 1))[1]
    cold = (clear_query_caches(driver), latencies(driver, domain, scenarios, 1))[1]
    latencies(driver, domain, scenarios[:10], 1)
    latencies(driver, baseline, scenarios[:10], 1)
    round_trips(driver, 50)
    warm, warm_base, passes, floors, servers = [], [], [], [], []
    for _ in range(repeats):  # interleaved pass by pass: ours, the baseline, the floor
        one = latencies(driver, domain, scenarios, 1)
        warm += one
        warm_base += latencies(driver, baseline, scenarios, 1)
        passes.append(_pct(one, 0.95))
        floors.append(_pct(round_trips(driver, len(one)), 0.95))
        servers.append(_pct(server_times(driver, domain, scenarios), 0.95))
    lines = []
    for state, ours, base in (
        ("cold both (query caches cleared before each)", cold, cold_base),
        ("warm both (a warm-up pass of each)", warm, warm_base),
    ):
        p95 = _pct(ours, 0.95)
        verdict = (
            f"target p95 <= {TARGET_P95_MS:.0f} ms: {'PASS' if p95 <= TARGET_P95_MS else 'FAIL'}"
            if ours is warm
            else f"no target (the warm p95 is held to {TARGET_P95_MS:.0f} ms)"
        )
        lines.append(
            f"synthetic extraction, all chains, n={len(ours)} calls, {state}: p50 "
            f"{_pct(ours, 0.5):.1f} ms, p95 {p95:.1f} ms (min {min(ours):.1f}, max "
            f"{max(ours):.1f}); baseline first-shape chains: p50 {_pct(base, 0.5):.1f} ms, p95 "
            f"{_pct(base, 0.95):.1f} ms; p95 ratio {p95 / _pct(base, 0.95):.2f}x; {verdict}"
        )
    lines += versus_floor(
        "synthetic extraction, warm p95 per pass",
        passes,
        FLOOR,
        floors,
        target=TARGET_EXTRACT_RATIO,
        state=f"warm, {len(scenarios) * 3} calls a pass, interleaved",
        digits=1,
        unit="ms",
    )
    lines.append(server_line("synthetic extraction", servers, floors))
    return lines


def main(quick: bool = False) -> list[str]:
    lines = [f"## Neo4j ({load_average()})"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        state = tmp_path / "neo4j"
        starts = []
        for _ in range(1 if quick else 3):
            t = time.perf_counter()
            info = start(state, watch_pid=os.getpid())
            starts.append(time.perf_counter() - t)
            stop(state)
        lines.append(
            figure(
                "embedded start",
                starts,
                unit="s",
                target=None,
                higher_is_better=False,
                state="cold: a fresh JVM on an existing store",
                digits=2,
                no_target="no target (issue 17 sets none)",
            )
        )
        info = start(state, watch_pid=os.getpid())
        try:
            with open_driver(connection_settings(info.state_dir)) as driver:
                lines += _cardio(driver, quick)
        finally:
            stop(state)
        lines += _fresh_start(state, quick)
        info = start(state, watch_pid=os.getpid())
        try:
            with open_driver(connection_settings(info.state_dir)) as driver:
                lines += _synthetic(driver, tmp_path, quick, state)
        finally:
            stop(state)
    return lines


def _cardio_scenarios(cardio: CompiledDomain) -> list[dict]:
    path = generated_set(cardio)
    return read_scenarios(
        path if path.exists() else REPO_ROOT / "tests/fixtures/scenarios/cardio_scn_0001.jsonl"
    )


def _fresh_start(state: Path, quick: bool) -> list[str]:
    """Cardio's first extraction pass after a fresh server start (a new JVM on the loaded
    store), timed from the first real query after the server is ready and the start-up
    warm-up `kgbench extract`, `pilot` and `study` run (`warm_up`) is done; beside it, in
    the same run and the same cold state (a restart of its own each), the first pass without
    the warm-up, and the pass after the warmed-up one (the warm floor the warm-up aims at).
    Each figure is the median over fresh starts of one pass's p95; the warm-up's own time
    is printed too."""
    cardio = CompiledDomain.open("cardio")
    scenarios = _cardio_scenarios(cardio)
    p95: dict[str, list[float]] = {"cold": [], "warmed": [], "next": []}
    took: list[float] = []
    calls = 0
    for _ in range(1 if quick else 3):
        for mode in ("cold", "warmed"):
            info = start(state, watch_pid=os.getpid())
            try:
                with open_driver(connection_settings(info.state_dir)) as driver:
                    if mode == "warmed":
                        t = time.perf_counter()
                        warm_up(driver, cardio, scenarios)
                        took.append(time.perf_counter() - t)
                    first = latencies(driver, cardio, scenarios, 1)
                    p95[mode].append(_pct(first, 0.95))
                    calls = len(first)
                    if mode == "warmed":
                        p95["next"].append(_pct(latencies(driver, cardio, scenarios, 1), 0.95))
            finally:
                stop(state)
    state_line = f"a restart each, {calls} (scenario, condition) calls per pass"
    return [
        figure(
            "cardio first pass after a fresh start, warm-up done: p95",
            p95["warmed"],
            unit="ms",
            target=TARGET_FIRST_P95_MS,
            higher_is_better=False,
            state=f"cold start then warm-up, {state_line}",
            digits=1,
        ),
        figure(
            "baseline: first pass after a fresh start, no warm-up: p95",
            p95["cold"],
            unit="ms",
            target=None,
            higher_is_better=False,
            state=f"cold start, {state_line}",
            digits=1,
        ),
        figure(
            "baseline: the pass after the warmed first pass: p95",
            p95["next"],
            unit="ms",
            target=None,
            higher_is_better=False,
            state="warm (the floor the warm-up aims at), same servers",
            digits=1,
        ),
        figure(
            f"start-up warm-up ({WARM_UP_DOES})",
            took,
            unit="s",
            target=None,
            higher_is_better=False,
            state="cold start, before the first pass above",
            digits=2,
            no_target="no target (paid once per extracting command, not per query)",
        ),
    ]


def _cardio(driver, quick: bool) -> list[str]:
    cardio = CompiledDomain.open("cardio")
    n_asr = len(cardio.graph["assertions"])
    # warm-up of both paths: plans compiled, page cache filled and the JVM's JIT warmed by
    # each, so neither is measured on a JVM just started (issue 17: 5.2x cold, 11-13x warm)
    load(driver, cardio, validate=False)
    wipe(driver, cardio.label)
    naive_load(driver, cardio)
    batched, naive = [], []
    for _ in range(1 if quick else 3):
        wipe(driver, cardio.label)
        t = time.perf_counter()
        load(driver, cardio, validate=False)
        batched.append(time.perf_counter() - t)
        wipe(driver, cardio.label)
        naive.append(naive_load(driver, cardio)[1])
    load(driver, cardio)
    scenarios = _cardio_scenarios(cardio)
    latencies(driver, cardio, scenarios, 1)  # warm-up: plans cached, as in a real run
    round_trips(driver, 50)
    lat, passes, floors, servers = [], [], [], []
    for _ in range(2 if quick else 5):  # interleaved pass by pass with the floor
        one = latencies(driver, cardio, scenarios, 1)
        lat += one
        passes.append(_pct(one, 0.95))
        floors.append(_pct(round_trips(driver, len(one)), 0.95))
        servers.append(_pct(server_times(driver, cardio, scenarios), 0.95))
    b, nv = statistics.median(batched), statistics.median(naive)
    state = "warm JVM both, empty label both, interleaved"
    return [
        f"cardio load ({total_rows(cardio)} rows, {n_asr} assertions):",
        figure(
            "  ours: batched",
            [n_asr / x for x in batched],
            unit="assertions/s",
            target=None,
            higher_is_better=True,
            state=state,
            no_target="no target (issue 17 sets it at 100,000 assertions, below)",
        ),
        figure(
            "  baseline: one row per transaction",
            [n_asr / x for x in naive],
            unit="assertions/s",
            target=None,
            higher_is_better=True,
            state=state,
        ),
        f"  speed-up (median naive / median batched time): {nv / b:.1f}x",
        f"cardio extraction latency, warm (one warm-up pass), n={len(lat)} (scenario, condition) "
        f"calls: p50 {_pct(lat, 0.5):.1f} ms, p95 {_pct(lat, 0.95):.1f} ms (min "
        f"{min(lat):.1f}, max {max(lat):.1f}); target p95 <= {TARGET_P95_MS:.0f} ms: "
        f"{'PASS' if _pct(lat, 0.95) <= TARGET_P95_MS else 'FAIL'}",
        *versus_floor(
            "cardio extraction, warm p95 per pass",
            passes,
            FLOOR,
            floors,
            target=TARGET_EXTRACT_RATIO,
            state=f"warm, {len(scenarios) * 3} calls a pass, interleaved",
            digits=1,
            unit="ms",
        ),
        server_line("cardio extraction", servers, floors),
    ]


def _synthetic_warm_up(state: Path, synth: CompiledDomain, scenarios: list[dict]) -> list[str]:
    """The start-up warm-up on the synthetic domain after a fresh start (a new JVM on the
    loaded store), against issue 33's 10 s, with the first pass's p95 after it. Restarts the
    server: the caller's driver is stale afterwards."""
    stop(state)
    info = start(state, watch_pid=os.getpid())
    with open_driver(connection_settings(info.state_dir)) as driver:
        t = time.perf_counter()
        warm_up(driver, synth, scenarios)
        took = time.perf_counter() - t
        first = latencies(driver, synth, scenarios, 1)
        wipe(driver, synth.label)
    return [
        figure(
            f"  start-up warm-up, {len(synth.graph['assertions']):,} assertions ({WARM_UP_DOES})",
            [took],
            unit="s",
            target=TARGET_WARM_UP_S,
            higher_is_better=False,
            state="cold start (a fresh JVM on the loaded store), n=1",
            digits=2,
        ),
        figure(
            "  first pass after it: p95",
            [_pct(first, 0.95)],
            unit="ms",
            target=None,
            higher_is_better=False,
            state=f"right after the warm-up, {len(first)} (scenario, condition) calls",
            digits=1,
            no_target="(information)",
        ),
    ]


def _synthetic(driver, tmp_path: Path, quick: bool, state: Path) -> list[str]:
    n = 20_000 if quick else 100_000
    domain_dir, _ = make_domain(tmp_path / "synth", n)
    compile_domain(domain_dir, out_root=tmp_path / "generated", force=True)
    synth = CompiledDomain.open("synth", generated=tmp_path / "generated")
    rows = total_rows(synth)
    runs = 1 if quick else 3
    eager = eager_domain(synth, tmp_path / "generated-eager" / "synth")
    # the real path, a load into an empty label, beside the previous statements (with their
    # Eager operators) on the same state: interleaved, after a warm-up load of each
    load(driver, synth, batch_size=5000, validate=False)
    wipe(driver, synth.label)
    load(driver, eager, batch_size=5000, validate=False)
    wipe(driver, synth.label)
    floor_load(driver, synth)
    empty, before, floor = [], [], []
    for _ in range(runs):
        for path, out in ((synth, empty), (eager, before)):
            wipe(driver, synth.label)
            t = time.perf_counter()
            load(driver, path, batch_size=5000, validate=False)
            out.append(time.perf_counter() - t)
        wipe(driver, synth.label)
        floor.append(floor_load(driver, synth))
    # paired on one state, a label populated by the load above: the batched re-load and the
    # naive baseline's 1% sample (whose MATCHes now find their nodes, as the re-load's do)
    fraction = 0.01
    load(driver, synth, batch_size=5000, validate=False)
    naive_load(driver, synth, fraction)  # warm-up of the naive path
    reload, naive_est = [], []
    for _ in range(runs):
        t = time.perf_counter()
        load(driver, synth, batch_size=5000, validate=False)
        reload.append(time.perf_counter() - t)
        sample_rows, sample_s = naive_load(driver, synth, fraction)
        naive_est.append(sample_s * rows / sample_rows)
    load(driver, synth, batch_size=5000)
    scenarios = synthetic_scenarios(synth.graph["entities"], 30 if quick else 100)
    baseline = baseline_domain(synth, tmp_path / "generated-baseline" / "synth")
    lines = extraction_lines(driver, synth, baseline, scenarios, 1 if quick else 3)
    lines += _synthetic_warm_up(state, synth, scenarios)  # restarts; wipes the label
    populated = "warm JVM both, label populated both, interleaved"
    return [
        f"synthetic load ({rows:,} rows, {n:,} assertions):",
        *versus_floor(
            "  ours: batched, into an empty label",
            empty,
            "hand-written UNWIND/CREATE, same rows",
            floor,
            target=TARGET_LOAD_RATIO,
            state="warm JVM (a load of each before), empty label each, interleaved",
        ),
        figure(
            "  ours: batched, into an empty label",
            [n / x for x in empty],
            unit="assertions/s",
            target=None,
            higher_is_better=True,
            state="warm JVM both (a load of each before), empty label both, interleaved",
            no_target="(information; issue 17's 12,000/s retired by issue 33)",
        ),
        figure(
            "  baseline: previous statements (Eager), same",
            [n / x for x in before],
            unit="assertions/s",
            target=None,
            higher_is_better=True,
            state="warm JVM both (a load of each before), empty label both, interleaved",
        ),
        f"  speed-up (median previous / median ours, same state): "
        f"{statistics.median(before) / statistics.median(empty):.1f}x",
        figure(
            "  ours: batched re-load",
            [n / x for x in reload],
            unit="assertions/s",
            target=None,
            higher_is_better=True,
            state=populated,
            no_target="no target (the pair for the baseline below)",
        ),
        figure(
            f"  baseline: one row per transaction ({sample_rows} rows, 1%, extrapolated)",
            [n / x for x in naive_est],
            unit="assertions/s",
            target=None,
            higher_is_better=True,
            state=populated,
        ),
        f"  speed-up (median naive / median re-load time, same state): "
        f"{statistics.median(naive_est) / statistics.median(reload):.1f}x",
        *lines,
    ]

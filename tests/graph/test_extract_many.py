"""The pilot's extraction on two sessions with one read transaction each
(harness.graph.pipelined) returns what one `execute_query` per extraction returns, in the
order asked, on the real cardio graph in Neo4j; and a bad scenario still stops it with the
located message, not a wrapped thread error."""

from __future__ import annotations

import json

import neo4j
import pytest

from harness.compiled import CompiledDomain
from harness.graph.extract import extract, parameters, plan_key, read_records, read_transaction
from harness.graph.load import load
from harness.graph.pipelined import extract_many, plan_ahead
from harness.scenario_files import read_scenarios
from kgbench.errors import UserError

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def cardio(neo4j_driver: neo4j.Driver) -> CompiledDomain:
    compiled = CompiledDomain.open("cardio")
    load(neo4j_driver, compiled)
    return compiled


@pytest.fixture(scope="module")
def items(cardio: CompiledDomain) -> list[dict]:
    """Every fourth cardio item: all eight categories, 20 items."""
    return read_scenarios(cardio.root / "scenarios" / "scenarios.jsonl")[::4]


def test_two_sessions_return_the_one_by_one_contexts_in_order(neo4j_driver, cardio, items):
    """Yes case: every condition the pilot can run (the volume-matched C6/C7 included, which
    read their padding with a second query in the same transaction), byte for byte."""
    work = [(s, c.id) for s in items for c in cardio.conditions if c.query]
    one_by_one = [extract(neo4j_driver, cardio, s, c) for s, c in work]
    together = extract_many(neo4j_driver, cardio, work, sessions=2)
    assert [(c["scenario_id"], c["condition"]) for c in together] == [
        (s["scenario_id"], c) for s, c in work
    ]
    assert json.dumps(together) == json.dumps(one_by_one)
    assert any(len(c["assertions"]) > 5 for c in together)  # not a run of empty contexts


def test_a_bad_scenario_stops_the_run_with_its_own_message(neo4j_driver, cardio, items):
    """No case: an unknown candidate id in one scenario is the UserError `extract` raises
    (scenario and id named), whichever session met it."""
    bad = json.loads(json.dumps(items[3]))
    bad["candidates"][0]["intervention_id"] = "DRG_9999"
    work = [(s, "C2") for s in (*items[:3], bad, *items[4:6])]
    with pytest.raises(UserError, match=rf"{bad['scenario_id']}: unknown entity id\(s\) DRG_9999"):
        extract_many(neo4j_driver, cardio, work, sessions=2)


def test_no_work_runs_no_query(neo4j_driver, cardio):
    assert extract_many(neo4j_driver, cardio, [], sessions=2) == []


def test_a_transaction_reads_the_records_the_driver_reads(neo4j_driver, cardio):
    query = f"MATCH (n:{cardio.label}) WHERE n.id IN $ids RETURN n.id AS id ORDER BY id"
    params = {"ids": ["DRG_0001", "DRG_0002", "NOT_THERE"]}
    via_driver = read_records(neo4j_driver, query, params, None)
    with read_transaction(neo4j_driver, None) as tx:
        via_tx = read_records(tx, query, params, None)
    assert [r.data() for r in via_tx] == [r.data() for r in via_driver]
    assert [r["id"] for r in via_driver] == ["DRG_0001", "DRG_0002"]


def test_plan_ahead_plans_each_query_per_plan_key_and_changes_no_context(
    neo4j_driver, cardio, items
):
    """`plan_ahead` (EXPLAIN, as the pilot runs it beside the load): one plan per (query,
    plan key), nothing written, and the contexts after it are those without it."""
    ids = [c.id for c in cardio.default_conditions if c.query]
    work = [(s, c) for s in items for c in ids]
    before = extract_many(neo4j_driver, cardio, work, sessions=2)
    keys = {plan_key(parameters(s, cardio)) for s in items}
    counts = "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS n, count(r) AS r"
    graph = read_records(neo4j_driver, counts, {}, None)[0].data()
    assert plan_ahead(neo4j_driver, cardio, items, ids) == len(keys) * len(ids)
    assert read_records(neo4j_driver, counts, {}, None)[0].data() == graph
    assert json.dumps(extract_many(neo4j_driver, cardio, work, sessions=2)) == json.dumps(before)
    assert plan_ahead(neo4j_driver, cardio, [], ids) == 0

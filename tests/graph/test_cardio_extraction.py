"""Extraction on the cardio graph: the paper's walk-through, contents per condition, id
integrity over every scenario, and agreement between the Cypher and the Python chain finder
the scenario generator uses."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest

from harness.compiled import CompiledDomain
from harness.graph.extract import extract
from harness.graph.load import load
from harness.scenario_files import generated_set, read_scenarios
from harness.scenarios.chain_index import ChainIndex

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]
SCN_0001 = REPO / "tests/fixtures/scenarios/cardio_scn_0001.jsonl"


@pytest.fixture(scope="module")
def cardio(neo4j_driver: neo4j.Driver) -> CompiledDomain:
    compiled = CompiledDomain.open("cardio")
    load(neo4j_driver, compiled)
    return compiled


def scenarios() -> list[dict]:
    """The committed scenario set (a missing one is an error, not a fallback)."""
    return read_scenarios(generated_set(CompiledDomain.open("cardio")))


def test_walkthrough_c3_chain_is_the_papers(
    neo4j_driver: neo4j.Driver, cardio: CompiledDomain
) -> None:
    scenario = read_scenarios(SCN_0001)[0]
    ctx = extract(neo4j_driver, cardio, scenario, "C3")
    chains = next(s for s in ctx["sections"] if s["shape"] == "causal_chain")["paths"]
    lisinopril = [p["assertion_ids"] for p in chains if p["candidate_id"] == "DRG_0001"]
    # every validated chain, strongest first: the class's outcome claim (one step), then ...
    assert lisinopril[0] == ["ASR_0262"]
    # ... the paper's chain among the other mechanisms, each shown once
    assert ["ASR_0019", "ASR_0010", "ASR_0011", "ASR_0013"] in lisinopril
    assert len(lisinopril) == len({tuple(c) for c in lisinopril}) > 2
    adverse = [
        p["assertion_ids"][0]
        for s in ctx["sections"]
        if s["name"] == "adverse_effects"
        for p in s["paths"]
    ]
    assert {"ASR_0087", "ASR_0091"} <= set(adverse)
    c4 = extract(neo4j_driver, cardio, scenario, "C4")
    assert "ASR_0028" in c4["assertions"], "C4 carries the indication"
    assert {e["evidence_id"] for e in c4["assertions"]["ASR_0011"]["evidence"]} >= {"EV_0003"}
    # the outcome claim that makes lisinopril gold: its class lowers CV events, from trials
    outcome = [
        p
        for s in c4["sections"]
        if s["name"] == "outcome_evidence"
        for p in s["paths"]
        if p["candidate_id"] == "DRG_0001"
    ]
    assert ["ASR_0262"] in [p["assertion_ids"] for p in outcome], outcome
    evidence = {e["evidence_id"] for e in c4["assertions"]["ASR_0262"]["evidence"]}
    assert {"EV_0024", "EV_0069"} <= evidence  # placebo-controlled overviews
    assert "EV_0004" not in evidence  # ALLHAT had no placebo arm (review 2026-12-A)


def test_every_extracted_id_exists_and_c2_has_no_mechanism(
    neo4j_driver: neo4j.Driver, cardio: CompiledDomain
) -> None:
    records, _, _ = neo4j_driver.execute_query(
        f"MATCH (n:{cardio.label}) RETURN collect(n.id) AS ids"
    )
    graph_ids = set(records[0]["ids"])
    items = scenarios()
    for scenario in items:
        for condition in ("C2", "C3", "C4"):
            ctx = extract(neo4j_driver, cardio, scenario, condition)
            cited = set(ctx["assertions"]) | set(ctx["entities"])
            for a in ctx["assertions"].values():
                cited |= {a["subject"]["id"], a["object"]["id"]}
                cited |= {e["evidence_id"] for e in a["evidence"]}
            for section in ctx["sections"]:
                for path in section["paths"]:
                    cited |= set(path["assertion_ids"])
                    assert set(path["assertion_ids"]) <= set(ctx["assertions"])
            assert cited <= graph_ids, (scenario["scenario_id"], condition, cited - graph_ids)
            if condition == "C2":
                kinds = {a["predicate"] for a in ctx["assertions"].values()}
                assert kinds.isdisjoint({"PARTICIPATES_IN", "TARGETS"}), scenario["scenario_id"]
    assert items


@pytest.mark.parametrize("condition", ["C3", "C4"])
def test_python_chains_agree_with_cypher(
    neo4j_driver: neo4j.Driver, cardio: CompiledDomain, condition: str
) -> None:
    """The generator reads chains from ChainIndex; contexts from Cypher. Same chains, same
    order, same cut."""
    index = ChainIndex(cardio.graph, cardio.evidence_rank)
    section = cardio.condition(condition).section("causal_chain")
    interventions = [
        e["id"] for e in cardio.graph["entities"] if e["category"] in ("Drug", "Intervention")
    ]
    outcomes = [e["id"] for e in cardio.graph["entities"] if e["category"] == "ClinicalOutcome"]
    compared = cut = 0
    for target in outcomes:
        scenario = {
            "scenario_id": "X",
            "population_id": "POP_0001",
            "target_outcome_id": target,
            "patient": {},
            "candidates": [{"intervention_id": i, "label": i} for i in interventions],
        }
        ctx = extract(neo4j_driver, cardio, scenario, condition)
        paths = next(s for s in ctx["sections"] if s["name"] == section.name)["paths"]
        for candidate in interventions:
            cypher = [p["assertion_ids"] for p in paths if p["candidate_id"] == candidate]
            python = index.section_chains(candidate, target, section)
            assert cypher == python, (candidate, target)
            compared += bool(python)
            cut += len(python) == section.max_chains
    assert compared > 50
    assert cut, "some candidate has more chains than the bound: the cut is exercised"


@pytest.mark.parametrize("condition", ["C2", "C3", "C4"])
def test_cardio_plans_start_from_index_seeks(
    neo4j_driver: neo4j.Driver, cardio: CompiledDomain, condition: str
) -> None:
    from harness.graph.extract import parameters

    from .test_load_extract import plan_operators

    scenario = read_scenarios(SCN_0001)[0]
    query = cardio.read(cardio.condition(condition).query)
    _, summary, _ = neo4j_driver.execute_query(
        "EXPLAIN " + query, parameters_=parameters(scenario, cardio)
    )
    ops = plan_operators(summary.plan)
    assert not [op for op in ops if "Scan" in op], ops
    assert any("IndexSeek" in op for op in ops)

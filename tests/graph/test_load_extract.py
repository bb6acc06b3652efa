"""Loading and extraction against a real Neo4j (the embedded one, or NEO4J_URI's)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import neo4j
import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.graph.extract import (
    WARM_UP_ROUNDS,
    WARM_UP_SCENARIOS,
    extract,
    parameters,
    plan_key,
    warm_up,
    warm_up_scenarios,
)
from harness.graph.load import LoadValidationError, graph_counts, load, run_checks

from .imported import imported_graph

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]
MINI_SCENARIO = {
    "scenario_id": "SCN_0001",
    "population_id": "POP_0001",
    "target_outcome_id": "OUT_0002",
    "patient": {"condition_ids": ["DIS_0001"]},
    "candidates": [
        {"intervention_id": "DRG_0001", "label": "Lisinopril"},
        {"intervention_id": "DRG_0002", "label": "Amlodipine"},
        {"intervention_id": "INT_0001", "label": "Smoking cessation"},
    ],
}


def wipe(driver: neo4j.Driver, label: str) -> None:
    driver.execute_query(f"MATCH (n:{label}) DETACH DELETE n")


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("generated")
    compile_domain(REPO / "tests/fixtures/domains/mini", out_root=out, force=True)
    return CompiledDomain.open("mini", generated=out)


@pytest.fixture(scope="module")
def loaded_mini(neo4j_driver: neo4j.Driver, mini: CompiledDomain) -> CompiledDomain:
    wipe(neo4j_driver, mini.label)
    load(neo4j_driver, mini)
    return mini


def test_load_is_validated_and_idempotent(
    neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain
) -> None:
    assert all(value == expect for _, value, expect in run_checks(neo4j_driver, loaded_mini))
    before = graph_counts(neo4j_driver, loaded_mini.label)
    assert before["nodes"] == 16 + 16 + 2  # entities + assertions + evidence sources
    load(neo4j_driver, loaded_mini)
    assert graph_counts(neo4j_driver, loaded_mini.label) == before


def test_interrupted_load_converges_to_a_clean_load(
    neo4j_driver: neo4j.Driver, mini: CompiledDomain
) -> None:
    wipe(neo4j_driver, mini.label)
    load(neo4j_driver, mini)
    clean = graph_counts(neo4j_driver, mini.label)
    wipe(neo4j_driver, mini.label)

    class Interrupted(Exception):
        pass

    calls = {"n": 0}

    def crash_midway(name: str, done: int, total: int) -> None:
        calls["n"] += 1
        if calls["n"] == 6:
            raise Interrupted

    with pytest.raises(Interrupted):
        load(neo4j_driver, mini, batch_size=2, progress=crash_midway)
    partial = graph_counts(neo4j_driver, mini.label)
    assert 0 < partial["nodes"] < clean["nodes"]
    load(neo4j_driver, mini, batch_size=2)
    assert graph_counts(neo4j_driver, mini.label) == clean


def test_validation_fails_loudly(neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain) -> None:
    """Damage a reload cannot undo (a node with the domain's labels but no id, written behind
    the loader's back) fails the load, and extraction then refuses the half-loaded graph."""
    from harness.graph.stamp import require_current
    from kgbench.errors import UserError

    label = loaded_mini.label
    neo4j_driver.execute_query(f"CREATE (:{label}:Entity:Drug {{name: 'ghost'}})")
    try:
        n = len(loaded_mini.graph["entities"])
        with pytest.raises(LoadValidationError, match=rf"entities: {n + 1} \(expected {n}\)"):
            load(neo4j_driver, loaded_mini)
        with pytest.raises(UserError, match="half-loaded"):
            require_current(neo4j_driver, loaded_mini)
    finally:
        neo4j_driver.execute_query(f"MATCH (n:{label} {{name: 'ghost'}}) DELETE n")
    load(neo4j_driver, loaded_mini)
    assert all(v == e for _, v, e in run_checks(neo4j_driver, loaded_mini))
    require_current(neo4j_driver, loaded_mini)


def test_a_reload_removes_what_was_written_behind_the_loaders_back(
    neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain
) -> None:
    """A direct edge without its assertion is caught by validation, and a reload prunes it."""
    label = loaded_mini.label
    before = graph_counts(neo4j_driver, label)
    neo4j_driver.execute_query(
        f"MATCH (s:{label} {{id: 'DRG_0002'}}), (o:{label} {{id: 'PRT_0001'}}) "
        "CREATE (s)-[:TARGETS {assertion_id: 'ASR_9999'}]->(o)"
    )
    checks = {
        name: (value, expect) for name, value, expect in run_checks(neo4j_driver, loaded_mini)
    }
    assert checks["direct_edges_paired"] == (1, 0)
    load(neo4j_driver, loaded_mini)
    assert graph_counts(neo4j_driver, label) == before


def test_assertions_without_their_edge_or_with_two_subjects_are_counted(
    neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain
) -> None:
    """`assertions_paired` counts an assertion whose direct edge is gone and one with a second
    subject, each once, while `direct_edges_paired` counts the edge of the second (its
    assertion now has two subjects, but still one is the edge's) as paired."""
    label = loaded_mini.label
    records, _, _ = neo4j_driver.execute_query(
        f"MATCH (s:{label})-[r]->(o:{label}) WHERE r.assertion_id IS NOT NULL "
        "RETURN r.assertion_id AS id ORDER BY id LIMIT 2"
    )
    gone, doubled = (r["id"] for r in records)
    neo4j_driver.execute_query(
        f"MATCH (:{label})-[r {{assertion_id: $id}}]->(:{label}) DELETE r", id=gone
    )
    neo4j_driver.execute_query(
        f"MATCH (a:{label}:Assertion {{id: $id}}), (x:{label} {{id: 'DRG_0002'}}) "
        "CREATE (a)-[:HAS_SUBJECT]->(x)",
        id=doubled,
    )
    checks = {n: (v, e) for n, v, e in run_checks(neo4j_driver, loaded_mini)}
    assert checks["assertions_paired"] == (2, 0)
    assert checks["direct_edges_paired"] == (0, 0)
    load(neo4j_driver, loaded_mini)
    assert all(v == e for _, v, e in run_checks(neo4j_driver, loaded_mini))


@pytest.mark.parametrize("name", ["direct_edges_paired", "assertions_paired"])
def test_pairing_checks_reach_assertions_through_the_id_index(
    neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain, name: str
) -> None:
    """The pairing checks are linear in the graph: each direct edge finds its assertion by an
    index seek, never by expanding its subject's relationships (the square of a hub's degree)."""
    (check,) = [c for c in loaded_mini.plan.checks if c.name == name]
    _, summary, _ = neo4j_driver.execute_query("EXPLAIN " + check.cypher)
    ops = plan_operators(summary.plan)
    assert any("NodeUniqueIndexSeek" in op for op in ops), ops


def test_domains_are_namespaced(neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain) -> None:
    afib = CompiledDomain.open("afib")
    load(neo4j_driver, afib)
    mini_counts = graph_counts(neo4j_driver, loaded_mini.label)
    afib_counts = graph_counts(neo4j_driver, afib.label)
    load(neo4j_driver, loaded_mini)  # reloading one domain ...
    assert graph_counts(neo4j_driver, afib.label) == afib_counts  # ... never touches another
    assert graph_counts(neo4j_driver, loaded_mini.label) == mini_counts
    # same ids exist in both domains (ASR_0001, DRG_0001), as distinct nodes
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (n {id: 'DRG_0001'}) RETURN labels(n) AS labels"
    )
    assert len({tuple(sorted(r["labels"])) for r in records}) >= 2


def test_extraction_contents_per_condition(
    neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain
) -> None:
    c3 = extract(neo4j_driver, loaded_mini, MINI_SCENARIO, "C3")
    chains = {s["name"]: s for s in c3["sections"]}["causal_chains"]["paths"]
    lisinopril = [p["assertion_ids"] for p in chains if p["candidate_id"] == "DRG_0001"]
    # every validated chain, strongest then shortest: the class's outcome claim (class-level,
    # it applies to lisinopril), its blood-pressure claim then the risk edge, the mechanism
    assert lisinopril == [
        ["ASR_0014"],
        ["ASR_0015", "ASR_0004"],
        ["ASR_0001", "ASR_0002", "ASR_0003", "ASR_0004"],
    ]
    assert all(p["candidate_id"] != "INT_0001" for p in chains), (
        "the unvalidated chain is not in C3"
    )
    c4 = extract(neo4j_driver, loaded_mini, MINI_SCENARIO, "C4")
    c4_chains = {s["name"]: s for s in c4["sections"]}["causal_chains"]["paths"]
    assert ["ASR_0011", "ASR_0013"] in [p["assertion_ids"] for p in c4_chains], (
        "C4 shows weak chains too"
    )
    safety = {s["name"]: s for s in c4["sections"]}["safety"]["paths"]
    assert {p["assertion_ids"][0] for p in safety} == {"ASR_0006", "ASR_0007"}
    c2 = extract(neo4j_driver, loaded_mini, MINI_SCENARIO, "C2")
    predicates = {a["predicate"] for a in c2["assertions"].values()}
    assert predicates.isdisjoint({"PARTICIPATES_IN", "TARGETS", "CAUSES_INCREASE_IN"})
    # no mechanism: the only causal lines are outcome claims on the target itself
    outcome = [a for a in c2["assertions"].values() if a["predicate"] == "CAUSES_DECREASE_IN"]
    assert outcome and all(a["object_id"] == MINI_SCENARIO["target_outcome_id"] for a in outcome)
    assert {"INDICATED_FOR", "MAY_CAUSE_ADVERSE_EFFECT"} <= predicates
    assert c2["assertions"]["ASR_0005"]["evidence"][0]["evidence_id"] == "EV_0001"
    assert extract(neo4j_driver, loaded_mini, MINI_SCENARIO, "C1") is None
    # deterministic: the same call gives the same JSON
    again = extract(neo4j_driver, loaded_mini, MINI_SCENARIO, "C4")
    assert json.dumps(again, sort_keys=True) == json.dumps(c4, sort_keys=True)


def plan_operators(plan: dict) -> list[str]:
    """Operator names of a plan tree; scans carry their details, for a readable failure."""
    op = plan["operatorType"].split("@")[0]
    if "Scan" in op:
        op += f" [{plan.get('args', {}).get('Details', '')}]"
    out = [op]
    for child in plan.get("children", []):
        out.extend(plan_operators(child))
    return out


@pytest.mark.parametrize("condition", ["C2", "C3", "C4"])
def test_every_extraction_plan_starts_from_an_index_seek(
    neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain, condition: str
) -> None:

    query = loaded_mini.read(loaded_mini.condition(condition).query)
    _, summary, _ = neo4j_driver.execute_query(
        "EXPLAIN " + query, parameters_=parameters(MINI_SCENARIO, loaded_mini)
    )
    ops = plan_operators(summary.plan)
    scans = [op for op in ops if "Scan" in op]
    assert not scans, f"{condition} plan scans: {scans}"
    assert any("IndexSeek" in op for op in ops), ops


def test_hostile_values_stay_data(
    neo4j_driver: neo4j.Driver, mini: CompiledDomain, tmp_path: Path
) -> None:
    """Quotes, backticks, braces, newlines and Cypher text in ids and names are only parameters."""
    root = tmp_path / "mini"
    shutil.copytree(mini.root, root)
    hostile = "x'}) MATCH (n) DETACH DELETE n //`\"{}\n"
    rows_file = root / "neo4j/rows/entities_Drug.json"
    rows = json.loads(rows_file.read_text())
    rows[0]["props"]["name"] = hostile
    rows[0]["props"]["synonyms"] = [hostile, "`backtick`", "{brace}"]
    rows.append({"id": hostile, "props": {"id": hostile, "name": hostile, "category": "Drug"}})
    rows_file.write_text(json.dumps(rows))
    evil = CompiledDomain("mini", root)
    others = graph_counts(neo4j_driver, "KG_afib")
    wipe(neo4j_driver, evil.label)
    load(neo4j_driver, evil, validate=False)
    counts = graph_counts(neo4j_driver, evil.label)
    assert counts["nodes"] == 16 + 16 + 2 + 1
    assert graph_counts(neo4j_driver, "KG_afib") == others
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (n:KG_mini {id: $id}) RETURN n.name AS name", parameters_={"id": hostile}
    )
    assert records[0]["name"] == hostile
    ctx = extract(neo4j_driver, evil, MINI_SCENARIO, "C3")
    assert ctx["assertions"]["ASR_0001"]["subject"]["name"] == hostile
    wipe(neo4j_driver, evil.label)
    load(neo4j_driver, mini)


def test_bulk_import_matches_the_transactional_load(
    neo4j_driver: neo4j.Driver, tmp_path: Path
) -> None:
    """The compiled neo4j/import/ files, through neo4j-admin, give the same graph as `load`:
    every node with its labels and properties, every relationship with its type and
    properties (`snapshot`), across every entity class and predicate of the example domain.
    The two paths share no Cypher (the import reads CSV headers that name labels literally;
    the load plan reads entity class labels from statement parameters), so this holds the
    plan's parameterised labels to the literal ones."""
    from harness.graph.load import snapshot

    compiled = CompiledDomain.open("cardio")
    plan = compiled.json("neo4j/import/import.json")
    with imported_graph(compiled, plan, tmp_path) as imported:
        checks = run_checks(imported, compiled)
        imported_counts = graph_counts(imported, compiled.label)
        imported_graph_dump = snapshot(imported, compiled.label)
        members, _, _ = imported.execute_query(
            f"MATCH (:{compiled.label})-[r:MEMBER_OF]->(:{compiled.label}) RETURN count(r) AS n"
        )
        scenario = json.loads(
            (REPO / "tests/fixtures/scenarios/cardio_scn_0001.jsonl").read_text().splitlines()[0]
        )
        imported_ctx = extract(imported, compiled, scenario, "C4")
    assert [c for c in checks if c[1] != c[2]] == []
    counted = {name: value for name, value, _ in checks}
    classes = compiled.graph["intervention_classes"]
    assert members[0]["n"] == sum(len(c["member_ids"]) for c in classes) > 0
    assert counted["assertions"] == len(compiled.graph["assertions"]) > 0
    wipe(neo4j_driver, compiled.label)
    load(neo4j_driver, compiled)
    assert graph_counts(neo4j_driver, compiled.label) == imported_counts
    loaded = snapshot(neo4j_driver, compiled.label)
    assert loaded == imported_graph_dump  # the whole graph, not its counts
    labels = {x for k, v in loaded.items() if k.startswith("node ") for x in json.loads(v)[0]}
    types = {k.split("|")[1] for k in loaded if k.startswith("rel ")}
    written = [s for s in compiled.plan.statements if json.loads(compiled.read(f"neo4j/{s.rows}"))]
    classes = {s.params["class_label"] for s in written if "class_label" in s.params}
    predicates = {s.name.removeprefix("assertion_") for s in written if "assertion_" in s.name}
    assert len(classes) >= 10 and classes <= labels  # every class and predicate is in the
    assert len(predicates) >= 10 and predicates <= types  # graph the two paths agree on
    assert extract(neo4j_driver, compiled, scenario, "C4") == imported_ctx


def test_load_syncs_an_edited_domain_and_reports_it(
    neo4j_driver: neo4j.Driver, mini: CompiledDomain, mini_copy: Path, tmp_path: Path
) -> None:
    """Issue 15: after rows are deleted from (and a value changed in) a loaded domain, a load
    leaves Neo4j equal to the compiled graph, reports what it added, changed and removed, and
    never touches another domain."""
    from harness.graph.load import snapshot

    afib = CompiledDomain.open("afib")
    load(neo4j_driver, afib)
    afib_before = snapshot(neo4j_driver, afib.label)
    wipe(neo4j_driver, mini.label)
    load(neo4j_driver, mini)

    # the curator deletes an assertion (and its evidence link) and renames an entity
    data = mini_copy / "data"
    for name in ("assertions.csv", "assertion_evidence.csv"):
        lines = (data / name).read_text().splitlines(keepends=True)
        (data / name).write_text("".join(ln for ln in lines if not ln.startswith("ASR_0016,")))
    entities = (data / "entities.csv").read_text()
    (data / "entities.csv").write_text(entities.replace(",Amlodipine,", ",Amlodipine besilate,", 1))
    compile_domain(mini_copy, out_root=tmp_path / "out", force=True)
    edited = CompiledDomain.open("mini", generated=tmp_path / "out")

    # the removal is part of the writes' managed transaction (one, for a domain this small):
    # when the first write has committed, so has the removal, and the renamed value with it
    committed: list[dict[str, str]] = []

    def seen(name: str, done: int, total: int) -> None:
        if not committed:
            committed.append(snapshot(neo4j_driver, edited.label))

    report = load(neo4j_driver, edited, changes=True, progress=seen)
    assert committed and "node ASR_0016" not in committed[0]
    assert committed[0] == snapshot(neo4j_driver, edited.label), "one transaction, all of it"
    changes = report.changes
    assert changes is not None
    assert changes.nodes_removed == ("ASR_0016",)
    assert changes.nodes_changed == ("DRG_0002",)
    assert not changes.nodes_added and not changes.relationships_added
    assert {
        "ASR_0016|HAS_SUBJECT|DRG_0002",
        "ASR_0016|HAS_OBJECT|OUT_0001",
        "DRG_0002|CAUSES_DECREASE_IN|OUT_0001|ASR_0016",
        "EV_0001|SUPPORTS|ASR_0016",
    } <= set(changes.relationships_removed)
    assert "removed" in changes.summary()

    # equal to the compiled graph: the same as a clean load of the edited domain
    synced = snapshot(neo4j_driver, edited.label)
    wipe(neo4j_driver, edited.label)
    load(neo4j_driver, edited)
    assert snapshot(neo4j_driver, edited.label) == synced
    assert snapshot(neo4j_driver, afib.label) == afib_before, "another domain was touched"

    again = load(neo4j_driver, edited, changes=True).changes
    assert again is not None and again.unchanged
    restored = load(neo4j_driver, mini, changes=True).changes
    assert restored is not None and restored.nodes_added == ("ASR_0016",)


def test_warm_up_runs_every_grounded_query_and_changes_no_context(
    neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain
) -> None:
    """The start-up warm-up (issue 17, item 6; issue 33, item 7) runs each grounded
    condition's compiled query for the first WARM_UP_SCENARIOS scenarios and for the first
    scenario of each plan key they lack, WARM_UP_ROUNDS times:
    its cost does not grow with the scenarios (yes: a few scenarios are all warmed; no: a
    thousand alike are not; yes: the one unlike them, past the first few, is), and the
    contexts extracted after it are those before it."""
    # the optional conditions (volume-matched controls) are not warmed: a default run has none
    grounded = [c.id for c in loaded_mini.default_conditions if c.query]
    before = {c: extract(neo4j_driver, loaded_mini, MINI_SCENARIO, c) for c in grounded}
    few = [MINI_SCENARIO] * 3
    assert warm_up(neo4j_driver, loaded_mini, few) == WARM_UP_ROUNDS * 3 * len(grounded)
    many = [MINI_SCENARIO] * 1000
    runs = WARM_UP_ROUNDS * WARM_UP_SCENARIOS * len(grounded)
    assert warm_up(neo4j_driver, loaded_mini, many) == runs
    # one candidate instead of three: another size bucket, so another plan in Neo4j's cache
    alone = {**MINI_SCENARIO, "candidates": MINI_SCENARIO["candidates"][:1]}
    keys = {plan_key(parameters(s, loaded_mini)) for s in (MINI_SCENARIO, alone)}
    assert len(keys) == 2
    assert warm_up_scenarios(loaded_mini, [*many, alone, alone])[WARM_UP_SCENARIOS:] == [alone]
    assert warm_up(neo4j_driver, loaded_mini, [*many, alone]) == runs + len(grounded)
    assert warm_up(neo4j_driver, loaded_mini, many, rounds=0) == 0
    assert {c: extract(neo4j_driver, loaded_mini, MINI_SCENARIO, c) for c in grounded} == before
    assert warm_up(neo4j_driver, loaded_mini, []) == 0

"""Issue 17, item 3: load statements without Eager operators that still converge on a reload
(a dropped property removed, an entity whose class changed re-labelled), and `kgbench load
--bulk` through neo4j-admin giving the same graph as the transactional load."""

from __future__ import annotations

import os
import re
from pathlib import Path

import neo4j
import pytest
from typer.testing import CliRunner

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.graph.load import graph_counts, load, snapshot
from kgbench.cli import app
from kgbench.errors import UserError

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]


def wipe(driver: neo4j.Driver, label: str) -> None:
    driver.execute_query(f"MATCH (n:{label}) DETACH DELETE n")


def operators(plan: dict) -> list[str]:
    return [plan["operatorType"], *(op for c in plan.get("children", []) for op in operators(c))]


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("generated")
    compile_domain(REPO / "tests/fixtures/domains/mini", out_root=out, force=True)
    return CompiledDomain.open("mini", generated=out)


def test_no_load_statement_plans_an_eager_operator(
    neo4j_driver: neo4j.Driver, mini: CompiledDomain
) -> None:
    """An Eager buffers every row of a batch (four of them made the load 3x slower): every
    compiled statement, its follow-ups and its reconcile read are planned without one."""
    for stmt in mini.plan.constraints:
        neo4j_driver.execute_query(stmt)
    planned = 0
    for stmt in mini.plan.statements:
        for cypher in [stmt.cypher, *stmt.then, *([stmt.reconcile] if stmt.reconcile else [])]:
            with neo4j_driver.session() as session:
                plan = session.run("EXPLAIN " + cypher, stmt.params, rows=[]).consume().plan
            ops = operators(plan)
            assert not [op for op in ops if op.startswith("Eager@")], f"{stmt.name}: {ops}"
            planned += 1
    assert planned > len(mini.plan.statements)  # the assertions' edges and reconciles too
    kinds = {s.name.split("_")[0] for s in mini.plan.statements}
    assert {"entity", "assertion", "evidence", "supports", "members"} <= kinds


def _edited_mini(mini_copy: Path, out: Path, edit) -> CompiledDomain:
    """Recompile a copy of mini after `edit(data_dir)`, with entity ids free of class
    prefixes (a declared id scheme), so an entity can change class and keep its id."""
    domain_yaml = mini_copy / "domain.yaml"
    text = domain_yaml.read_text()
    if "id_schemes" not in text:
        domain_yaml.write_text(
            text + 'id_schemes:\n  entities: {pattern: "^[A-Z]{3}_[0-9]{3,4}$"}\n'
        )
    edit(mini_copy / "data")
    compile_domain(mini_copy, out_root=out, force=True)
    return CompiledDomain.open("mini", generated=out)


def _node(driver: neo4j.Driver, label: str, node_id: str) -> tuple[list[str], dict]:
    records, _, _ = driver.execute_query(
        f"MATCH (n:{label} {{id: $id}}) RETURN labels(n) AS labels, properties(n) AS p",
        parameters_={"id": node_id},
    )
    assert len(records) == 1
    return sorted(records[0]["labels"]), records[0]["p"]


def test_a_reload_removes_dropped_properties_and_follows_a_class_change(
    neo4j_driver: neo4j.Driver, mini_copy: Path, tmp_path: Path
) -> None:
    """A property the data no longer holds is removed (not left stale), an entity whose class
    changed keeps one node with the new class label only and its relationships, and the result
    equals a clean load of the edited domain."""
    before = _edited_mini(mini_copy, tmp_path / "a", lambda data: None)
    wipe(neo4j_driver, before.label)
    load(neo4j_driver, before)
    labels, props = _node(neo4j_driver, before.label, "INT_0001")
    assert "Intervention" in labels and props["description"] == "Stopping tobacco use."
    assert _node(neo4j_driver, before.label, "DRG_0002")[1]["xrefs"] == ["DRUGBANK:DB00381"]

    def edit(data: Path) -> None:
        entities = (data / "entities.csv").read_text()
        entities = entities.replace(
            "INT_0001,Intervention,Smoking cessation,Quit smoking,Stopping tobacco use.,",
            "INT_0001,Drug,Smoking cessation,Quit smoking,,",
        )
        entities = entities.replace(",DRUGBANK:DB00381\n", ",\n")
        (data / "entities.csv").write_text(entities)
        assertions = (data / "assertions.csv").read_text()
        (data / "assertions.csv").write_text(
            assertions.replace("ACE inhibition,,acute", ",,acute", 1)
        )
        yaml = (data.parent / "domain.yaml").read_text()
        (data.parent / "domain.yaml").write_text(yaml.replace("Drug: 2", "Drug: 3"))

    after = _edited_mini(mini_copy, tmp_path / "b", edit)
    relationships = graph_counts(neo4j_driver, before.label)["relationships"]
    report = load(neo4j_driver, after, changes=True)  # validated: counts per class match
    assert not report.failures
    labels, props = _node(neo4j_driver, after.label, "INT_0001")
    assert labels == ["Drug", "Entity", after.label]
    assert props["category"] == "Drug" and "description" not in props
    assert "xrefs" not in _node(neo4j_driver, after.label, "DRG_0002")[1]
    assert "context" not in _node(neo4j_driver, after.label, "ASR_0001")[1]
    assert graph_counts(neo4j_driver, after.label)["relationships"] == relationships
    assert report.changes is not None and "node INT_0001" not in report.changes.nodes_removed
    assert {"INT_0001", "DRG_0002", "ASR_0001"} <= set(report.changes.nodes_changed)
    reloaded = snapshot(neo4j_driver, after.label)
    wipe(neo4j_driver, after.label)
    load(neo4j_driver, after)
    assert snapshot(neo4j_driver, after.label) == reloaded  # the same as a clean load
    wipe(neo4j_driver, after.label)


def test_an_id_that_changes_kind_is_reconciled(
    neo4j_driver: neo4j.Driver, mini: CompiledDomain
) -> None:
    """A node left by an earlier load with another kind's labels under an id the compile now
    gives an entity (the MERGE has the entity's labels in its pattern, so without the
    reconcile it would try a second node with the id and fail on the uniqueness constraint)."""
    wipe(neo4j_driver, mini.label)
    load(neo4j_driver, mini)
    clean = snapshot(neo4j_driver, mini.label)
    neo4j_driver.execute_query(
        f"MATCH (n:{mini.label} {{id: 'DRG_0001'}}) REMOVE n:Entity:Drug SET n:Assertion, "
        "n.stale = true"
    )
    load(neo4j_driver, mini)
    assert snapshot(neo4j_driver, mini.label) == clean


# --- bulk ------------------------------------------------------------------------------------


@pytest.fixture()
def own_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A private embedded server (the bulk load stops and restarts it) whose state directory
    is the default one for the code under test (KGBENCH_HOME), stopped at the end."""
    from harness.neo4j import start, stop

    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.delenv("NEO4J_DATABASE", raising=False)
    monkeypatch.setenv("KGBENCH_HOME", str(tmp_path / "home"))
    state = tmp_path / "home" / ".cache" / "neo4j"
    state.mkdir(parents=True)
    start(state, watch_pid=os.getpid())
    try:
        yield state
    finally:
        stop(state)


def test_bulk_load_gives_the_transactional_graph_and_refuses_a_full_database(
    neo4j_driver: neo4j.Driver, mini_copy: Path, tmp_path: Path, own_server: Path
) -> None:
    """mini, with a description spanning lines and holding quotes and the array delimiter's
    neighbours (what the CSV files must carry intact), bulk-imported: the same nodes,
    relationships and properties as the transactional load, stamped and extractable."""
    from harness.graph.bulk import bulk_load
    from harness.graph.stamp import require_current
    from harness.neo4j import connection_settings, open_driver, status

    entities = mini_copy / "data" / "entities.csv"
    entities.write_text(
        entities.read_text().replace(
            '"Myocardial infarction, stroke and cardiovascular death."',
            '"Myocardial infarction,\nstroke and ""cardiovascular"" death; \\ end."',
        )
    )
    compile_domain(mini_copy, out_root=tmp_path / "out", force=True)
    mini = CompiledDomain.open("mini", generated=tmp_path / "out")
    assert mini.json("neo4j/import/import.json")["multiline_fields"] is True
    before = status(own_server)
    report = bulk_load(mini, state_dir=own_server)
    assert not report.failures and report.checks
    assert report.nodes == 16 + 16 + 2 and report.relationships > 16 * 3
    assert status(own_server).running and status(own_server).pid != before.pid
    with open_driver(connection_settings(own_server)) as driver:
        bulk_graph = snapshot(driver, mini.label)
        bulk_counts = graph_counts(driver, mini.label)
        require_current(driver, mini)  # stamped "loaded" with this compile: extractable
    wipe(neo4j_driver, mini.label)
    load(neo4j_driver, mini)
    assert graph_counts(neo4j_driver, mini.label) == bulk_counts
    assert snapshot(neo4j_driver, mini.label) == bulk_graph  # every node, edge and property
    assert (
        '\nstroke and "cardiovascular"'
        in _node(neo4j_driver, mini.label, "OUT_0002")[1]["description"]
    )

    # the database now holds a domain: a second bulk load is refused before anything stops,
    # by the function and through the CLI (one message, exit 2)
    pid = status(own_server).pid
    with pytest.raises(UserError, match=r"not empty .*domains mini.*--force"):
        bulk_load(mini, state_dir=own_server)
    result = CliRunner().invoke(app, ["load", "--domain", "cardio", "--bulk"])
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert errors and "is not empty" in errors[0] and "Traceback" not in result.output
    assert status(own_server).pid == pid
    # a node kgbench did not load: --force alone is refused (what it would erase is listed,
    # nothing stops); --force --yes replaces the database and keeps the old one as a backup
    with open_driver(connection_settings(own_server)) as driver:
        driver.execute_query("CREATE (:HandMade {note: 'keep me'})")
    with pytest.raises(UserError, match=r"would erase 1 nodes .*HandMade 1.*--yes"):
        bulk_load(mini, state_dir=own_server, force=True)
    assert status(own_server).pid == pid
    report = bulk_load(mini, state_dir=own_server, force=True, yes=True)
    assert report.replaced == 16 + 16 + 2 + 2 and not report.failures  # and the stamp, HandMade
    assert report.backup is not None and (report.backup / "databases" / "neo4j").is_dir()
    assert "kgbench neo4j stop" in (report.backup / "README.txt").read_text(encoding="utf-8")
    with open_driver(connection_settings(own_server)) as driver:
        assert snapshot(driver, mini.label) == bulk_graph
        gone, _, _ = driver.execute_query("MATCH (n:HandMade) RETURN count(n) AS n")
        assert gone[0]["n"] == 0
    # the database now holds mini's own graph only: --force replaces it without --yes
    again = bulk_load(mini, state_dir=own_server, force=True)
    assert again.replaced == 16 + 16 + 2 + 1 and again.backup not in (None, report.backup)


def test_bulk_load_refuses_a_server_kgbench_does_not_manage(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    monkeypatch.setenv("KGBENCH_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["load", "--domain", "cardio", "--bulk"])
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert errors and "NEO4J_URI names your own server (bolt://127.0.0.1:1)" in errors[0]
    assert re.search(r"import\.json", result.stderr)
    assert not (tmp_path / ".cache" / "neo4j" / "server.json").exists()  # nothing started
    monkeypatch.delenv("NEO4J_URI")
    monkeypatch.setenv("NEO4J_DATABASE", "other")
    result = CliRunner().invoke(app, ["load", "--domain", "cardio", "--bulk"])
    assert result.exit_code == 2 and "serves one database" in result.stderr
    result = CliRunner().invoke(app, ["load", "--domain", "cardio", "--force"])
    assert result.exit_code == 2 and "--force only applies to --bulk" in result.output


def _plant(import_dir: Path, name: str, old: str, new: str) -> None:
    path = import_dir / name
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{name} has no {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_bulk_load_is_checked_as_thoroughly_as_a_transactional_one(
    tmp_path: Path, own_server: Path
) -> None:
    """Issue 33, item 4: after an import, `checks.run_fast` (counts from the count store's
    `GRAPH COUNTS`, the rest folded into one query) gives every compiled check the value
    `run_checks` (one query each, the transactional load's reference) gives. Yes: a clean
    import passes, with its counts answered by the count store, each equal to its compiled
    query. No: defects planted in the import files (a direct edge paired with the wrong assertion, a SUPPORTS edge reversed, an entity
    under another class's label), which the importer copies without complaint, fail the bulk
    load, and the same checks fail by the reference."""
    from harness.graph.bulk import bulk_load
    from harness.graph.checks import count_store, count_store_plan, run_fast
    from harness.graph.load import LoadValidationError, run_checks
    from harness.graph.pairing import PAIRING
    from harness.graph.replace import inventory
    from harness.graph.stamp import STAMP_LABEL
    from harness.neo4j import connection_settings, open_driver

    from .test_bulk_replace import scanned_inventory

    compile_domain(REPO / "tests/fixtures/domains/mini", out_root=tmp_path / "out", force=True)
    mini = CompiledDomain.open("mini", generated=tmp_path / "out")
    report = bulk_load(mini, state_dir=own_server)
    assert report.checks and not report.failures
    # the pairing checks were read from the files, and kg.json (the whole graph, 9 s of CPU
    # at 190k assertions) was never parsed on the way
    assert report.from_files == sorted(PAIRING) and "graph" not in vars(mini)
    answered = count_store_plan(mini)
    assert {"entities", "assertions", "supports", "members"} <= {name for name, *_ in answered}
    with open_driver(connection_settings(own_server)) as driver:
        assert run_fast(driver, mini) == run_checks(driver, mini) == report.checks
        # what a replacing bulk load counts (`replace.inventory`, the count store without a
        # scan here: every node is mini's or its stamp) is what a scan of every node counts
        assert inventory(driver, "neo4j") == scanned_inventory(driver)
        # the count store's answers were used: every node is mini's or a load stamp
        store = count_store(driver)
        every, stamps = store.node_count(), store.node_count(STAMP_LABEL)
        assert every == store.node_count(mini.plan.label) + stamps and stamps == 1
        # and each count it answers a check from is the compiled query's own value
        for name, cypher, keys in answered:
            value = driver.execute_query(cypher).records[0]["value"]
            for kind, *key in keys:
                got = (
                    store.node_count(key[0])
                    if kind == "node"
                    else store.relationship_count(key[1], start=key[0], end=key[2])
                )
                assert got == value, (name, kind, key)

    folder = mini.import_dir
    _plant(folder, "relationships_direct.csv", "TARGETS,ASR_0001,", "TARGETS,ASR_0002,")
    _plant(folder, "relationships_supports.csv", "EV_0001,ASR_0001,", "ASR_0001,EV_0001,")
    _plant(folder, "nodes_entities.csv", "KG_mini|Entity|AdverseEffect,", "KG_mini|Entity|Disease,")
    with pytest.raises(LoadValidationError) as failed:
        bulk_load(mini, state_dir=own_server, force=True)
    for check in ("direct_edges_paired", "supports", "entities_AdverseEffect"):
        assert f"{check}:" in str(failed.value)
    with open_driver(connection_settings(own_server)) as driver:
        fast = run_fast(driver, mini)
        assert fast == run_checks(driver, mini)
        failing = {name for name, value, expect in fast if value != expect}
        assert {"direct_edges_paired", "supports", "entities_AdverseEffect"} <= failing


def test_a_graph_that_holds_this_compile_is_not_written_again_unless_a_check_fails(
    neo4j_driver: neo4j.Driver, mini: CompiledDomain
) -> None:
    """Issue 33, item 2: `load(skip_current=True)` (what the pilot runs) writes nothing to a
    graph stamped "loaded" from this compile that passes every compiled check; a graph
    changed behind kgbench's back so that a check fails, a half-finished load and another
    compile's stamp are synced as ever, and the synced graph is the compiled one."""
    stamp = "MATCH (m:KgbenchLoad {domain: $domain}) "
    wipe(neo4j_driver, mini.label)
    first = load(neo4j_driver, mini, skip_current=True)
    assert not first.current and first.rows > 0  # nothing stamped yet: a full load
    graph = snapshot(neo4j_driver, mini.label)

    again = load(neo4j_driver, mini, skip_current=True)
    assert again.current and again.rows == 0 and again.checks and not again.failures
    assert snapshot(neo4j_driver, mini.label) == graph

    neo4j_driver.execute_query(  # one piece of evidence unlinked by hand
        f"MATCH (:{mini.label})-[r:SUPPORTS]->(:{mini.label}) WITH r LIMIT 1 DELETE r"
    )
    healed = load(neo4j_driver, mini, skip_current=True)
    assert not healed.current and healed.rows == first.rows and not healed.failures
    assert snapshot(neo4j_driver, mini.label) == graph

    for edit in ("SET m.state = 'loading'", "SET m.digest = 'another compile'"):
        neo4j_driver.execute_query(stamp + edit, domain=mini.name)
        synced = load(neo4j_driver, mini, skip_current=True)
        assert not synced.current and synced.rows == first.rows
        assert snapshot(neo4j_driver, mini.label) == graph

    always = load(neo4j_driver, mini)  # without the flag, as `kgbench load` runs: all written
    assert not always.current and always.rows == first.rows


def test_load_skip_current_says_it_wrote_nothing(
    neo4j_driver: neo4j.Driver, neo4j_env: None
) -> None:
    """`kgbench load --skip-current` on a graph that holds the compile: one line saying so,
    with the checks it passed; without the flag the same load writes every row."""
    load(neo4j_driver, CompiledDomain.open("afib"))
    skipped = CliRunner().invoke(app, ["load", "--domain", "afib", "--skip-current"])
    assert skipped.exit_code == 0, skipped.output
    said = " ".join(skipped.output.split())
    assert (
        "afib: the graph already holds this compile (stamped and checked): nothing written" in said
    )
    full = CliRunner().invoke(app, ["load", "--domain", "afib"])
    assert full.exit_code == 0 and "afib: loaded " in " ".join(full.output.split())

"""Extraction refuses a graph that does not hold the compiled domain (review 6g, 6h).

A private copy of the mini domain (`stale`, its own Neo4j label) is compiled and loaded here,
so nothing another test module loads is touched. The CLI half runs against the committed afib
domain and restores its stamp by loading it again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import neo4j
import pytest
from typer.testing import CliRunner

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.graph.extract import check_against_compile, expected_assertions, extract
from harness.graph.load import load
from harness.graph.stamp import STAMP_LABEL, require_current
from kgbench.errors import UserError

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "tests" / "fixtures" / "domains" / "mini"
SCENARIO = {
    "scenario_id": "SCN_0001",
    "population_id": "POP_0001",
    "target_outcome_id": "OUT_0002",
    "patient": {"condition_ids": ["DIS_0001"]},
    "candidates": [
        {"intervention_id": "DRG_0001", "label": "Lisinopril"},
        {"intervention_id": "DRG_0002", "label": "Amlodipine"},
    ],
}


def _domain_copy(tmp: Path) -> Path:
    root = tmp / "t" / "fixtures" / "domains" / "stale"
    shutil.copytree(MINI, root)
    (tmp / "spec").symlink_to(REPO / "spec")
    cfg = root / "domain.yaml"
    # a renamed copy keeps the CURIE prefix its schema declares
    cfg.write_text(cfg.read_text().replace("name: mini", "name: stale\ncurie_prefix: kgbench.mini"))
    return root


def _compile(root: Path, out: Path) -> CompiledDomain:
    compile_domain(root, out_root=out, force=True)
    return CompiledDomain("stale", out / "stale")


def _wipe(driver: neo4j.Driver, domain: CompiledDomain) -> None:
    driver.execute_query(f"MATCH (n:{domain.label}) DETACH DELETE n")
    driver.execute_query(f"MATCH (m:{STAMP_LABEL} {{domain: $d}}) DELETE m", d=domain.name)


@pytest.fixture
def stale(tmp_path: Path, neo4j_driver: neo4j.Driver):
    root = _domain_copy(tmp_path)
    domain = _compile(root, tmp_path / "gen")
    _wipe(neo4j_driver, domain)
    yield root, domain
    _wipe(neo4j_driver, domain)


def test_an_unloaded_domain_is_refused(neo4j_driver: neo4j.Driver, stale) -> None:
    """Review 6g: extraction from a never-loaded domain gave contexts without assertions."""
    _, domain = stale
    with pytest.raises(UserError, match="'stale' is not loaded in Neo4j; run `kgbench load"):
        require_current(neo4j_driver, domain)
    # and the per-context check catches what the compiled graph says is missing, whatever the
    # stamp says
    assert expected_assertions(domain, SCENARIO, "C2") == {"ASR_0005", "ASR_0006"}
    with pytest.raises(UserError, match="says it must return 2 more"):
        check_against_compile(extract(neo4j_driver, domain, SCENARIO, "C2"), domain, SCENARIO)
    load(neo4j_driver, domain)
    check_against_compile(extract(neo4j_driver, domain, SCENARIO, "C2"), domain, SCENARIO)


def test_a_half_loaded_domain_is_refused(neo4j_driver: neo4j.Driver, stale) -> None:
    _, domain = stale

    class Interrupted(Exception):
        pass

    def crash(name: str, done: int, total: int) -> None:
        raise Interrupted

    with pytest.raises(Interrupted):
        load(neo4j_driver, domain, batch_size=2, progress=crash)
    with pytest.raises(UserError, match="half-loaded"):
        require_current(neo4j_driver, domain)
    load(neo4j_driver, domain)
    require_current(neo4j_driver, domain)


def test_a_graph_from_another_compile_is_refused_and_a_reload_removes_deleted_rows(
    neo4j_driver: neo4j.Driver, stale, tmp_path: Path
) -> None:
    """Review 6h: an assertion deleted from the data stayed in Neo4j and was still extracted."""
    root, domain = stale
    load(neo4j_driver, domain)
    require_current(neo4j_driver, domain)
    assert "ASR_0006" in extract(neo4j_driver, domain, SCENARIO, "C2")["assertions"]

    asr = root / "data" / "assertions.csv"
    asr.write_text("".join(ln for ln in asr.read_text().splitlines(True) if "ASR_0006" not in ln))
    links = root / "data" / "assertion_evidence.csv"
    links.write_text(
        "".join(ln for ln in links.read_text().splitlines(True) if "ASR_0006" not in ln)
    )
    changed = _compile(root, tmp_path / "gen")
    with pytest.raises(UserError, match="loaded from another compile"):
        require_current(neo4j_driver, changed)
    load(neo4j_driver, changed)
    require_current(neo4j_driver, changed)
    assert "ASR_0006" not in extract(neo4j_driver, changed, SCENARIO, "C2")["assertions"]
    records, _, _ = neo4j_driver.execute_query(
        f"MATCH (n:{changed.label} {{id: 'ASR_0006'}}) RETURN count(n) AS n"
    )
    assert records[0]["n"] == 0


def test_entities_deleted_behind_the_loaders_back_are_noticed(
    neo4j_driver: neo4j.Driver, stale
) -> None:
    _, domain = stale
    load(neo4j_driver, domain)
    neo4j_driver.execute_query(f"MATCH (n:{domain.label} {{id: 'DRG_0002'}}) DETACH DELETE n")
    n = len(domain.graph["entities"])
    with pytest.raises(UserError, match=f"holds {n - 1} of its {n} entities"):
        require_current(neo4j_driver, domain)


def test_the_extract_command_refuses_an_unloaded_graph_and_writes_nothing(
    neo4j_driver: neo4j.Driver, neo4j_env: None, tmp_path: Path
) -> None:
    from kgbench.cli import app

    afib = CompiledDomain.open("afib")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(afib.root / "scenarios" / "scenarios.jsonl", run_dir / "scenarios.jsonl")
    load(neo4j_driver, afib)
    neo4j_driver.execute_query(f"MATCH (m:{STAMP_LABEL} {{domain: 'afib'}}) DELETE m")
    try:
        result = CliRunner().invoke(app, ["extract", "--domain", "afib", "--run-dir", str(run_dir)])
        assert result.exit_code == 2, result.output
        assert "error: domain 'afib' is not loaded in Neo4j" in result.stderr
        assert "Traceback" not in result.output
        assert not (run_dir / "contexts").exists()
    finally:
        load(neo4j_driver, afib)
    result = CliRunner().invoke(app, ["extract", "--domain", "afib", "--run-dir", str(run_dir)])
    assert result.exit_code == 0, result.output
    contexts = list((run_dir / "contexts").rglob("*.json"))
    assert contexts and all(json.loads(p.read_text())["assertions"] for p in contexts)


def test_the_longest_name_compile_accepts_loads(
    neo4j_driver: neo4j.Driver, stale, tmp_path
) -> None:
    """Review 6f: a 20 kB name passed compile and crashed `load` ("Property value is too large
    to index"). Compile now caps names at 200 characters; the longest, in 4-byte characters,
    is far below Neo4j's index limit and loads."""
    root, _ = stale
    entities = root / "data" / "entities.csv"
    entities.write_text(
        entities.read_text().replace(",Lisinopril,", "," + "\U0001f48a" * 200 + ",")
    )
    domain = _compile(root, tmp_path / "long")
    load(neo4j_driver, domain)
    records, _, _ = neo4j_driver.execute_query(
        f"MATCH (n:{domain.label} {{id: 'DRG_0001'}}) RETURN n.name AS name"
    )
    assert records[0]["name"] == "\U0001f48a" * 200

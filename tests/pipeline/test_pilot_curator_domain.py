"""Issue 29, done when: the curator's fixture domain (tests/fixtures/domains/t2dcare, its own id
schemes, no default population, a goal-resolved tie, a surrogate target) runs `kgbench pilot`
end to end with no code naming it, against the test session's Neo4j and the local
OpenAI-compatible server through the real `openai` client; every answer parses, the prompts
cite the domain's own ids, and the context-reader beats the C1 baseline with the graph."""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from rich.console import Console

from harness.neo4j import connection_settings
from kgbench.cli.pilot import run_pilot

pytestmark = pytest.mark.neo4j
REPO = Path(__file__).resolve().parents[2]
T2D = REPO / "tests" / "fixtures" / "domains" / "t2dcare"


def test_pilot_runs_the_curator_domain(
    neo4j_embedded, neo4j_driver: neo4j.Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = connection_settings(neo4j_embedded.state_dir)
    monkeypatch.setenv("NEO4J_URI", settings.uri)
    monkeypatch.setenv("NEO4J_USER", settings.user or "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", settings.password or "")
    # the fixture compiles into the test's folder, never into the project's generated/
    run_dir = tmp_path / "pilot"
    md, html = run_pilot(
        str(T2D), run_dir, "context-reader", Console(quiet=True), generated=tmp_path / "generated"
    )
    assert md.exists() and html.exists()
    assert (tmp_path / "generated" / "t2dcare" / "kg.json").exists()
    assert not (REPO / "generated" / "t2dcare").exists()
    scenarios = [json.loads(line) for line in (run_dir / "scenarios.jsonl").open()]
    assert {s["category"] for s in scenarios} == {
        "direct_effect",
        "contraindication_sensitive",
        "competing_interventions",
        "adverse_effect_pathway",
    }
    log = [json.loads(line) for line in (run_dir / "responses/openai-context-reader.jsonl").open()]
    assert len(log) == 4 * len(scenarios)
    assert all(r["status"] == "ok" and r["parse_ok"] and r["schema_ok"] for r in log)
    prompts = [json.loads(line) for line in (run_dir / "prompts/prompts.jsonl").open()]
    assert all("Cite identifiers (CL..., REF...)" in p["messages"][-1]["content"] for p in prompts)
    assert not any("ASR_" in p["messages"][-1]["content"] for p in prompts)
    panel = json.loads((run_dir / "scores/openai-context-reader/panel.json").read_text())
    overall = panel["overall"]
    accuracy = {c: overall[c]["intervention_accuracy"]["mean"] for c in ("C1", "C2", "C3", "C4")}
    assert all(accuracy[c] > accuracy["C1"] for c in ("C3", "C4")), accuracy

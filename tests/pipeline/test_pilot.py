"""The whole pipeline end to end (what `make pilot` runs), against the test session's Neo4j
and the local OpenAI-compatible server driven by the real `openai` client."""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from rich.console import Console

from harness.neo4j import connection_settings
from kgbench.cli.pilot import panel_table, run_pilot
from tests.response_grammar import StrictGrammar

pytestmark = pytest.mark.neo4j
REPO = Path(__file__).resolve().parents[2]


def test_pilot_runs_the_cardio_matrix(
    neo4j_embedded, neo4j_driver: neo4j.Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = connection_settings(neo4j_embedded.state_dir)
    monkeypatch.setenv("NEO4J_URI", settings.uri)
    monkeypatch.setenv("NEO4J_USER", settings.user or "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", settings.password or "")
    run_dir = tmp_path / "pilot"
    md, html = run_pilot("cardio", run_dir, "context-reader", Console(quiet=True))
    assert md.exists() and html.exists()
    assert "<script" not in html.read_text()
    log = [json.loads(line) for line in (run_dir / "responses/openai-context-reader.jsonl").open()]
    assert len(log) == 320 and len({r["key"] for r in log}) == 320
    assert all(r["status"] == "ok" and r["parse_ok"] and r["schema_ok"] for r in log)
    # every answer as sent is one a strictly decoding model could have written (key order too)
    schema = json.loads((REPO / "generated/cardio/schemas/response.schema.json").read_text())
    grammar = StrictGrammar(schema)
    assert [grammar.problem(r["raw"]) for r in log] == [None] * len(log)
    # every scenario: the four prompts are byte-identical outside the grounded-context block
    prompts = [json.loads(line) for line in (run_dir / "prompts/prompts.jsonl").open()]
    by_scenario: dict[str, dict[str, str]] = {}
    for record in prompts:
        text = record["messages"][-1]["content"]
        by_scenario.setdefault(record["scenario_id"], {})[record["condition"]] = text
    assert len(by_scenario) == 80
    for texts in by_scenario.values():
        assert "# Grounded context" not in texts["C1"]
        for cond in ("C2", "C3", "C4"):
            start = texts[cond].index("\n# Grounded context")
            end = texts[cond].index("\n# Answer format")
            assert texts[cond][:start] + texts[cond][end:] == texts["C1"]
    panel = json.loads((run_dir / "scores/openai-context-reader/panel.json").read_text())
    text = panel_table(md)
    assert "Overall panel" in text and "| C1 |" in text
    overall = panel["overall"]

    def mean(metric: str, cond: str):
        return overall[cond][metric]["mean"]

    # without a graph the baseline cannot cite the mechanism; with one it can
    assert mean("causal_edge_recall", "C1") == 0.0
    for cond in ("C3", "C4"):
        assert mean("causal_edge_recall", cond) > 0.5
        assert mean("causal_edge_f1", cond) > 0.5
    assert overall["C1"]["causal_edge_f1"]["n"] == 0  # undefined: nothing cited (paper Table 2)
    # the password of the test server never reaches the run folder
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert (settings.password or "x" * 40) not in path.read_text(errors="ignore")


def test_pilot_with_c5_and_order_variants(
    neo4j_embedded, neo4j_driver: neo4j.Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make pilot WITH_C5=1 ORDER_VARIANTS=1`: C5 answered and paired with C4 and C1, the
    C5-only figures and the order-sensitivity table in the report, C5's rows included (its
    agent rerun per presentation)."""
    settings = connection_settings(neo4j_embedded.state_dir)
    monkeypatch.setenv("NEO4J_URI", settings.uri)
    monkeypatch.setenv("NEO4J_USER", settings.user or "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", settings.password or "")
    run_dir = tmp_path / "pilot"
    md, _ = run_pilot(
        "cardio", run_dir, "context-reader", Console(quiet=True), with_c5=True, order_variants=True
    )
    panel = json.loads((run_dir / "scores/openai-context-reader/panel.json").read_text())
    assert panel["counts"]["C5"]["scored"] == 80
    assert [(p["a"], p["b"]) for p in panel["paired"]] == [("C4", "C2"), ("C5", "C4"), ("C5", "C1")]
    order = json.loads((run_dir / "scores/openai-context-reader/order.json").read_text())
    assert set(order["conditions"]) == {"C1", "C2", "C3", "C4", "C5"}
    c5 = order["conditions"]["C5"]["presentations"]
    assert set(c5) == {"original", "shift1", "reversed", "relabelled"}
    assert all(f["accuracy"]["n"] == 80 for f in c5.values())
    assert all(c["scenarios"] == 80 for c in order["conditions"].values())
    report = md.read_text()
    assert "### Verify-and-revise (C5)" in report and "### Order sensitivity" in report

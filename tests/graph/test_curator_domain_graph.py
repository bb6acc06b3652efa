"""Issue 29, done when (on Neo4j): the curator's fixture domain tests/fixtures/domains/t2dcare
loads and extracts with no code naming it; the class-level effect modifier (older adults and
sulfonylureas, whose object is the class) reaches the C4 context of a sulfonylurea, labelled
class-level; and on its generated items the context-reader baseline beats first-option in
C2-C4 (it reads the domain's own ids)."""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.evaluation.compiled_scorer import load_compiled_scorer
from harness.evaluation.prompts import PromptRenderer
from harness.evaluation.responders import respond
from harness.graph.extract import check_against_compile, extract
from harness.graph.load import load
from harness.scenarios.generator import generate_file

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]
T2D = REPO / "tests" / "fixtures" / "domains" / "t2dcare"


@pytest.fixture(scope="module")
def t2d(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("t2dcare-generated")
    compile_domain(T2D, out_root=out, force=True)
    return CompiledDomain.open("t2dcare", generated=out)


def test_the_curator_domain_loads_extracts_and_its_baseline_reads_it(
    neo4j_driver: neo4j.Driver, t2d: CompiledDomain, tmp_path: Path
) -> None:
    load(neo4j_driver, t2d)
    _, scenarios, _ = generate_file(t2d, out=tmp_path / "scenarios.jsonl")
    renderer = PromptRenderer(t2d)
    scorer = load_compiled_scorer(t2d)
    accuracy = {"context-reader": [], "first-option": []}
    for scenario in scenarios:
        for condition in ("C2", "C3", "C4"):
            ctx = extract(neo4j_driver, t2d, scenario, condition)
            check_against_compile(ctx, t2d, scenario)
            prompt = renderer.render(scenario, condition, ctx)
            for name, scores in accuracy.items():
                result = scorer.score(scenario["gold"], respond(name, prompt), ctx)
                assert result.parse_ok and result.schema_ok, result.problems
                scores.append(result.scores["intervention_accuracy"])
    reader = sum(accuracy["context-reader"]) / len(accuracy["context-reader"])
    first = sum(accuracy["first-option"]) / len(accuracy["first-option"])
    assert reader > first, (reader, first)

    older = json.loads(json.dumps(scenarios[0]))
    older["population_id"] = "pop-01"
    older["candidates"] = [
        {"intervention_id": "drug-04", "label": "Glimepiride"},
        {"intervention_id": "drug-02", "label": "Empagliflozin"},
    ]
    ctx = extract(neo4j_driver, t2d, older, "C4")
    check_against_compile(ctx, t2d, older)
    modifiers = next(s for s in ctx["sections"] if s["shape"] == "context_modifiers")
    assert {"candidate_id": "drug-04", "assertion_ids": ["CL050"]} in modifiers["paths"]
    line = next(ln for ln in renderer.render(older, "C4", ctx).splitlines() if "[CL050]" in ln)
    assert line.endswith("| class-level claim for Sulfonylurea, applies to Glimepiride"), line

"""Issue 15, done when: a fourth domain written in the test fixtures in its own conventions
(tests/fixtures/domains/hfcare: its own id scheme for entities, assertions, evidence and
scenarios; class-level claims; no populations at all) compiles, loads, generates and scores
with no code change, and the gold path of each of its items is among the chains its C3 and C4
contexts show. Its pinned item states neither a population nor the patient's sex (item 3,
optional fields): it is validated, worded neutrally, prompted, extracted and scored like any
other."""

from __future__ import annotations

import re
from pathlib import Path

import neo4j
import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.evaluation.compiled_scorer import load_compiled_scorer
from harness.evaluation.prompts import PromptRenderer
from harness.evaluation.responders import oracle
from harness.graph.extract import check_against_compile, extract
from harness.graph.load import load, snapshot
from harness.scenarios.generator import generate_file
from harness.scenarios.validation import check_file

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]
FOURTH = REPO / "tests" / "fixtures" / "domains" / "hfcare"


@pytest.fixture(scope="module")
def fourth(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("fourth-generated")
    compile_domain(FOURTH, out_root=out, force=True)
    return CompiledDomain.open("hfcare", generated=out)


def chains_of(ctx: dict, candidate: str) -> list[list[str]]:
    section = next(s for s in ctx["sections"] if s["shape"] == "causal_chain")
    return [p["assertion_ids"] for p in section["paths"] if p["candidate_id"] == candidate]


def class_level_lines(prompt: str, ctx: dict, class_claims: dict[str, dict]) -> None:
    """A class-level claim is one assertion of the context, under its own id (never a copy
    per member), and every line that shows it is labelled class-level, naming the class and
    the candidate member it applies to there."""
    names = {e: v["name"] for e, v in ctx["entities"].items()}
    for aid, claim in class_claims.items():
        if aid not in ctx["assertions"]:
            continue
        assert ctx["assertions"][aid]["subject_id"] == claim["subject_id"]
        lines = [ln for ln in prompt.splitlines() if f"[{aid}]" in ln]
        assert lines, aid
        for ln in lines:
            members = [m for m in claim["member_ids"] if m in names]
            labels = [
                f"| class-level claim for {names[claim['subject_id']]}, applies to {names[m]}"
                for m in members
            ]
            assert any(ln.endswith(label) for label in labels), ln


def test_the_fourth_domain_runs_end_to_end_in_its_own_conventions(
    neo4j_driver: neo4j.Driver, fourth: CompiledDomain, tmp_path: Path
) -> None:
    graph = fourth.graph
    assert all(re.fullmatch(r"[a-z]+\.[0-9]{2}", e["id"]) for e in graph["entities"])
    assert all(re.fullmatch(r"C-[0-9]{3}", a["assertion_id"]) for a in graph["assertions"])
    class_claims = [a for a in graph["assertions"] if a.get("member_ids")]
    assert class_claims, "the fixture has class-level claims that apply to members"

    load(neo4j_driver, fourth)
    assert snapshot(neo4j_driver, fourth.label)

    assert not [e for e in graph["entities"] if e["category"] == "Population"]
    assert not [a for a in graph["assertions"] if a.get("population_id")]
    assert fourth.default_population is None

    path, scenarios, _ = generate_file(fourth, out=tmp_path / "scenarios.jsonl")
    assert len(scenarios) == 8, "every category, with no population to set any in"
    assert all(re.fullmatch(r"IT-[0-9]{3}", s["scenario_id"]) for s in scenarios)
    assert all("population_id" not in s for s in scenarios)
    assert check_file(fourth, path) == scenarios  # the hand-written bar: schema, graph, gold
    unstated = next(s for s in scenarios if "sex" not in s["patient"])
    assert unstated["scenario_id"] == "IT-001"
    assert unstated["patient"]["narrative"] == "A 64-year-old patient with coronary artery disease."
    assert unstated["gold"]["preferred_intervention"] == "drug.04"

    renderer = PromptRenderer(fourth)
    by_id = {a["assertion_id"]: a for a in class_claims}

    scorer = load_compiled_scorer(fourth)
    validated = {a["assertion_id"]: a["validated"] for a in graph["assertions"]}
    scored = class_level_shown = 0
    for scenario in scenarios:
        gold = scenario["gold"]
        for condition in ("C3", "C4"):
            ctx = extract(neo4j_driver, fourth, scenario, condition)
            check_against_compile(ctx, fourth, scenario)
            shown = {i for s in ctx["sections"] for p in s["paths"] for i in p["assertion_ids"]}
            class_level_shown += bool(shown & {a["assertion_id"] for a in class_claims})
            path, preferred = gold["causal_path_assertion_ids"], gold["preferred_intervention"]
            if path and preferred and all(validated[i] for i in path):
                assert path in chains_of(ctx, preferred), (scenario["scenario_id"], condition)
            prompt = renderer.render(scenario, condition, ctx)
            assert scenario["patient"]["narrative"] in prompt
            class_level_lines(prompt, ctx, by_id)
            result = scorer.score(gold, oracle(prompt, gold=scenario), ctx)
            assert result.parse_ok and result.schema_ok, result.problems
            assert not result.unknown_ids, result.unknown_ids
            defined = {k: v for k, v in result.scores.items() if v is not None}
            assert defined and all(v == 1.0 for k, v in defined.items() if "edge" in k), defined
            scored += 1
    assert scored == 2 * len(scenarios)
    ungrounded = renderer.render(unstated, "C1", None)
    assert "A 64-year-old patient with coronary artery disease." in ungrounded
    assert class_level_shown, "a class-level claim reaches a grounded context"

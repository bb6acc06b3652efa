"""Issue 29, done when (the parts that need no database): a fixture domain written as a curator
would, tests/fixtures/domains/t2dcare (type 2 diabetes, real trials and guidelines cited by
name, journal and year), in its own id schemes, with population profiles but no default
population, population-less claims, a class-level effect modifier whose object is an
intervention class, a direct claim on a surrogate and an exclusive pair of findings:
validated, compiled, generated, checked, audited and explained with no code naming it; its
class-level modifier reaches the C4 context of a sulfonylurea, labelled class-level.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.evaluation.prompts import PromptRenderer
from harness.evaluation.responders import parse_prompt
from harness.graph.extract import expected_assertions
from harness.review.explain import as_text, explain
from harness.scenarios.audit import UNCHANGED, ItemJudge
from harness.scenarios.generator import generate_file
from harness.scenarios.rules import load_rules
from harness.scenarios.validation import check_file, validate_records

REPO = Path(__file__).resolve().parents[2]
T2D = REPO / "tests" / "fixtures" / "domains" / "t2dcare"


@pytest.fixture(scope="module")
def t2d(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("t2dcare-generated")
    compile_domain(T2D, out_root=out, force=True)
    return CompiledDomain.open("t2dcare", generated=out)


@pytest.fixture(scope="module")
def generated(t2d: CompiledDomain, tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("t2dcare-scenarios") / "scenarios.jsonl"
    return generate_file(t2d, None, None, path)


def test_the_domain_is_what_the_issue_asks_for(t2d: CompiledDomain) -> None:
    rules = load_rules(t2d)
    assert rules.default_population is None and rules.populations  # profiles, no default
    claims = t2d.graph["assertions"]
    assert any(not a["population_id"] for a in claims if a["predicate"] == "CAUSES_DECREASE_IN")
    assert all(a["assertion_id"].startswith("CL") for a in claims)  # its own id scheme
    modifier = next(a for a in claims if a["assertion_id"] == "CL050")
    assert modifier["object_id"] == "cls-01" and modifier["member_ids"] == ["drug-04", "drug-06"]


def test_generate_check_audit_and_explain(t2d: CompiledDomain, generated) -> None:
    path, records, report = generated
    assert {r["category"] for r in records} == {
        "direct_effect",
        "contraindication_sensitive",
        "competing_interventions",
        "adverse_effect_pathway",
    }
    assert all(r["scenario_id"].startswith("T2D-") for r in records)
    assert report.rule_order_dependent == 0
    assert check_file(t2d, path) == records
    judge = ItemJudge(t2d)
    assert [judge.item(r).outcome for r in records] == [UNCHANGED] * len(records)
    for r in records:
        text = as_text(judge.kg, explain(judge.kg, r, judge))
        assert "Rules: unknown" not in text and "Judged now: the current rules" in text
    trap = next(r for r in records if r["category"] == "contraindication_sensitive")
    assert "cti-02" in trap["patient"]["condition_ids"]  # medullary thyroid carcinoma history
    assert trap["gold"]["preferred_intervention"] == "drug-02"  # empagliflozin, not liraglutide


def test_the_exclusive_pair_never_meets(t2d: CompiledDomain, generated) -> None:
    _, records, _ = generated
    assert not any({"dis-01", "dis-02"} <= set(r["patient"]["condition_ids"]) for r in records)
    record = json.loads(json.dumps(records[0]))
    record["patient"]["condition_ids"].append("dis-02")
    problems = [str(p) for p in validate_records(t2d, [(1, record)], "hand.jsonl")]
    assert any("dis-01 excludes dis-02" in p for p in problems), problems


def test_a_class_modifier_reaches_each_member_labelled_class_level(
    t2d: CompiledDomain, generated
) -> None:
    """Older adults modify the hypoglycaemia risk of sulfonylureas (AGS Beers Criteria 2023):
    the claim names the class; a glimepiride candidate for an older adult sees it in C4."""
    _, records, _ = generated
    scenario = json.loads(json.dumps(records[0]))
    scenario["population_id"] = "pop-01"
    scenario["candidates"] = [
        {"intervention_id": "drug-04", "label": "Glimepiride"},
        {"intervention_id": "drug-02", "label": "Empagliflozin"},
    ]
    assert "CL050" in expected_assertions(t2d, scenario, "C4")
    assert "CL050" not in expected_assertions(t2d, {**scenario, "population_id": "pop-02"}, "C4")
    modifier = next(a for a in t2d.graph["assertions"] if a["assertion_id"] == "CL050")
    entity = {e["id"]: e for e in t2d.graph["entities"]}

    def node(i: str) -> dict:
        return {k: entity[i][k] for k in ("id", "name", "category")}

    context = {
        "entities": {i: node(i) for i in ("drug-04", "drug-02", "out-01", "pop-01", "cls-01")},
        "sections": [
            {
                "name": "effect_modifiers",
                "title": "Effect modifiers in this patient's context",
                "shape": "context_modifiers",
                "paths": [{"candidate_id": "drug-04", "assertion_ids": ["CL050"]}],
            }
        ],
        "assertions": {
            "CL050": {
                **modifier,
                "subject": node("pop-01"),
                "object": node("cls-01"),
                "evidence": [{"evidence_id": "REF05", "evidence_tier": "tier_1"}],
            }
        },
    }
    prompt = PromptRenderer(t2d).render(scenario, "C4", context)
    line = next(ln for ln in prompt.splitlines() if "[CL050]" in ln)
    assert line.endswith("| class-level claim for Sulfonylurea, applies to Glimepiride"), line
    (parsed,) = [ln for ln in parse_prompt(prompt).lines if ln.assertion_id == "CL050"]
    assert parsed.applies_to == "Glimepiride" and parsed.evidence_ids == ("REF05",)


def test_a_gold_without_a_qualifying_claim_says_what_would_qualify(
    t2d: CompiledDomain, generated
) -> None:
    """Issue 29 item 6: metformin as the answer for MACE (its only claims are a direct one on
    hyperglycaemia, UKPDS 34, and a mechanism): the message names the candidate, the target
    and the claim that would qualify it."""
    _, records, _ = generated
    record = json.loads(json.dumps(records[0]))
    record["candidates"] = [
        {"intervention_id": "drug-01", "label": "Metformin"},
        {"intervention_id": "drug-05", "label": "Sitagliptin"},
    ]
    record["gold"].update(
        preferred_intervention="drug-01",
        acceptable_interventions=["drug-01"],
        causal_path_assertion_ids=[],
        outcome_assertion_ids=[],
        adverse_effect_assertion_ids=[],
        contraindication_assertion_ids=[],
        evidence_source_ids=[],
    )
    problems = [str(p) for p in validate_records(t2d, [(1, record)], "hand.jsonl")]
    (message,) = [p for p in problems if "gold.preferred_intervention" in p]
    assert "Metformin (drug-01) has no qualifying outcome claim on Major adverse" in message
    assert "a direct claim would qualify it: drug-01 (or a homogeneous class of it)" in message
    assert "trial or meta_analysis that studied drug-01" in message
    assert "a mechanism chain never does" in message


def test_the_prompt_frame_names_the_domains_own_id_schemes(t2d: CompiledDomain) -> None:
    """Issue 29 item 2 (the frame): the fixture cites CL... and REF... ids, never cardio's."""
    frame = (t2d.root / "prompts" / "frame.j2").read_text(encoding="utf-8")
    assert "Cite identifiers (CL..., REF...) exactly" in frame
    assert "ASR_" not in frame and "EV_" not in frame
    assert "Ordered assertion ids (CL*) from the intervention" in frame


def test_a_scheme_without_a_fixed_prefix_is_named_by_its_kind() -> None:
    from compiler.idschemes import citation_hint, literal_prefix
    from compiler.ir import IdScheme, IdSchemes

    default = IdSchemes(
        IdScheme("^[A-Z]{2,5}_[0-9]{3,7}$"),
        IdScheme("^ASR_[0-9]{4,7}$"),
        IdScheme("^EV_[0-9]{4,7}$"),
        IdScheme("^SCN_[0-9]{4,6}$"),
    )
    assert citation_hint(default) == "ASR_..., EV_..."
    own = IdSchemes(
        default.entities, IdScheme("^[a-z]+-[0-9]{2}$"), IdScheme("^AB?[0-9]$"), default.scenarios
    )
    assert citation_hint(own) == "assertion ids, A..."
    assert literal_prefix(IdScheme("^X\\.Y[0-9]$")) == "X.Y"
    assert literal_prefix(IdScheme("^A.B[0-9]$")) == "A"  # an unescaped dot is no literal
    assert literal_prefix(IdScheme("^(CL|AS)[0-9]$")) == ""


def test_the_commands_run_on_the_fixture_as_a_curator_types_them(
    t2d: CompiledDomain, tmp_path: Path, monkeypatch
) -> None:
    """validate, compile, generate, check-scenarios, audit and explain as a curator types them
    (the CLI, the domain by path, then its compiled folder: a name means the project's
    generated/<name>/, which a test must not write), the compiled tree in a folder of the test.

    `compile` is given that folder with `--out`, not by patching a module's GENERATED_DIR:
    the up-to-date check (compiler.freshness) holds its own binding, so a stray, current
    generated/t2dcare in the checkout made `compile` a no-op there and `generate` found no
    compiled domain in the test's folder (issue 29)."""
    from typer.testing import CliRunner

    from kgbench.cli import app

    # The default output root holds a current compile of the fixture, as a stray
    # generated/t2dcare would: the steps must still use the test's folder.
    stray = t2d.root.parent
    monkeypatch.setattr("compiler.freshness.GENERATED_DIR", stray)
    monkeypatch.setattr("compiler.api.GENERATED_DIR", stray)
    before = sorted(p.relative_to(stray) for p in stray.rglob("*"))
    scenarios = tmp_path / "t2dcare.jsonl"
    compiled = str(tmp_path / "t2dcare")
    steps = [
        ["validate", "--domain", str(T2D)],
        ["compile", "--domain", str(T2D), "--out", str(tmp_path)],
        ["generate", "--domain", compiled, "--out", str(scenarios)],
        ["check-scenarios", "--domain", compiled, str(scenarios)],
        ["audit", "--domain", compiled, "--scenarios", str(scenarios)],
        ["explain", "T2D-003", "--domain", compiled, "--scenarios", str(scenarios)],
    ]
    outputs = []
    for argv in steps:
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 0, (argv, result.output)
        outputs.append(result.output)
    assert (tmp_path / "t2dcare" / "manifest.json").exists()
    assert sorted(p.relative_to(stray) for p in stray.rglob("*")) == before
    assert "stated goal, weight loss" in outputs[-1]

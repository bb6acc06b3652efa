"""Bad input gets one clear message naming the scenario (or category) and field, exit code 2:
hand-written scenarios with unknown ids or a gold path that is not a chain, a category rule
that matches nothing, more scenarios than the graph supports, and scenario rules whose ids,
classes or template fields do not exist (caught by the compiler, with file and line)."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.scenarios.generator import Generator, generate_file
from harness.scenarios.validation import check_file
from kgbench.errors import UserError, UserErrors

REPO = Path(__file__).resolve().parents[2]
SCN_0001 = REPO / "tests" / "fixtures" / "scenarios" / "cardio_scn_0001.jsonl"


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def errors_of(result) -> list[str]:
    return [
        ln.removeprefix("error: ") for ln in result.stderr.splitlines() if ln.startswith("error:")
    ]


def test_a_hand_written_scenario_is_accepted(cli, cardio) -> None:
    """The paper's walk-through, written by hand (schema 1.0.0), passes the same checks."""
    assert len(check_file(cardio, SCN_0001)) == 1
    result = CliRunner().invoke(cli, ["check-scenarios", str(SCN_0001), "-d", "cardio"])
    assert result.exit_code == 0, result.output


def test_generated_records_pass_check_scenarios(cli, cardio_scenarios, tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", cardio_scenarios)
    result = CliRunner().invoke(cli, ["check-scenarios", str(path), "-d", "cardio"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda s: s["candidates"].__setitem__(1, {"intervention_id": "DRG_9999", "label": "X"}),
            "field 'candidates[1].intervention_id': unknown intervention 'DRG_9999'",
        ),
        (
            lambda s: s.__setitem__("target_outcome_id", "OUT_0200"),
            "field 'target_outcome_id': unknown entity 'OUT_0200'",
        ),
        (
            lambda s: s["gold"].__setitem__(
                "causal_path_assertion_ids", ["ASR_0019", "ASR_0011", "ASR_0013"]
            ),
            "field 'gold.causal_path_assertion_ids[1]': not a chain: ASR_0019 ends at PRT_0001 "
            "but ASR_0011 starts at BPR_0001",
        ),
        (
            lambda s: s["gold"].__setitem__("causal_path_assertion_ids", ["ASR_0019", "ASR_0010"]),
            "field 'gold.causal_path_assertion_ids[1]': the gold path must end at the target "
            "outcome OUT_0002",
        ),
        (
            lambda s: s["gold"].__setitem__("causal_path_assertion_ids", ["ASR_0001", "ASR_0010"]),
            "field 'gold.causal_path_assertion_ids[0]': the gold path must start at the preferred",
        ),
        (
            lambda s: s["gold"].__setitem__(
                "adverse_effect_assertion_ids", ["ASR_0087", "ASR_9087"]
            ),
            "field 'gold.adverse_effect_assertion_ids[1]': unknown assertion 'ASR_9087'",
        ),
        (
            lambda s: s["gold"].__setitem__("contraindication_assertion_ids", ["ASR_0087"]),
            "field 'gold.contraindication_assertion_ids[0]': ASR_0087 is a MAY_CAUSE_ADVERSE_EFFECT "
            "assertion (role adverse_effect); expected role contraindication",
        ),
        (
            lambda s: s["gold"].__setitem__("preferred_intervention", "DRG_0002"),
            "field 'gold.preferred_intervention': 'DRG_0002' is not one of the candidates",
        ),
        (
            lambda s: s["gold"].__setitem__("evidence_source_ids", ["EV_0077"]),
            "field 'gold.evidence_source_ids[0]': unknown evidence source 'EV_0077'",
        ),
        (
            lambda s: s["gold"].pop("expects_uncertainty"),
            "field 'gold.expects_uncertainty': 'expects_uncertainty' is required",
        ),
        (
            lambda s: s.__setitem__("category", "direct"),
            "field 'category': 'direct' is not one of",
        ),
    ],
    ids=[
        "unknown candidate",
        "unknown target",
        "path not a chain",
        "path misses the target",
        "path not from preferred",
        "unknown adverse assertion",
        "wrong role",
        "preferred not a candidate",
        "unknown evidence",
        "missing gold field",
        "unknown category",
    ],
)
def test_hand_written_errors_name_scenario_and_field(cli, tmp_path: Path, edit, expected) -> None:
    good = json.loads(SCN_0001.read_text())
    bad = copy.deepcopy(good)
    edit(bad)
    path = write(tmp_path / "hand.jsonl", [good | {"scenario_id": "SCN_0009"}, bad])
    result = CliRunner().invoke(cli, ["check-scenarios", str(path), "--domain", "cardio"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = errors_of(result)
    assert lines, result.stderr
    assert all(ln.startswith(f"{path}, line 2, scenario SCN_0001, field") for ln in lines), lines
    assert any(expected in ln for ln in lines), lines


def test_duplicate_ids_and_malformed_lines(cardio, tmp_path: Path) -> None:
    good = json.loads(SCN_0001.read_text())
    with pytest.raises(UserErrors, match="duplicate scenario id"):
        check_file(cardio, write(tmp_path / "d.jsonl", [good, good]))
    broken = tmp_path / "b.jsonl"
    broken.write_text('{"scenario_id": "SCN_0001",\n')
    with pytest.raises(UserError, match=r"line 1: not valid JSON"):
        check_file(cardio, broken)


def edit_rules(compiled, change) -> None:
    path = compiled.root / "scenario_rules.json"
    doc = json.loads(path.read_text())
    change(doc["rules"])
    path.write_text(json.dumps(doc))


def test_a_rule_that_matches_nothing_is_an_error(compiled_copy) -> None:
    compiled = compiled_copy("cardio")

    def impossible(rules: dict) -> None:
        rule = next(c for c in rules["categories"] if c["category"] == "mediated_effect")
        rule["path"]["via_classes"] = ["Contraindication"]

    edit_rules(compiled, impossible)
    with pytest.raises(
        UserError,
        match=r"category 'mediated_effect' \(pattern causal_chain\): no instance in the graph",
    ):
        Generator(compiled).generate()


def test_more_than_the_graph_supports_is_an_error(cli, compiled_copy) -> None:
    compiled = compiled_copy("cardio")
    with pytest.raises(
        UserError,
        match=r"category '[a-z_]+': 1000 scenarios requested \(1 pinned\), but the graph supports only \d+",
    ):
        generate_file(compiled, per_category=1000, out=compiled.root / "s.jsonl")
    assert not (compiled.root / "s.jsonl").exists(), "a failed generate writes nothing"
    args = ["generate", "-d", str(compiled.root), "--per-category", "1000"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "1000 scenarios requested" in errors_of(result)[0]


def test_a_domain_without_rules_cannot_generate(compiled_copy) -> None:
    compiled = compiled_copy("cardio")
    (compiled.root / "scenario_rules.json").unlink()
    with pytest.raises(UserError, match="declares no scenario rules"):
        Generator(compiled)


# The compiler's cross-checks of scenarios.yaml --------------------------------------------------


@pytest.fixture(scope="module")
def cardio_domain_copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(REPO / "domains" / "cardio", root / "domains" / "cardio")
    os.symlink(REPO / "spec", root / "spec")
    return root / "domains" / "cardio"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "default_population: POP_0001",
            "default_population: POP_0091",
            "scenarios.yaml, line {line}, field 'default_population': unknown entity 'POP_0091'",
        ),
        (
            "      via_classes: [RiskFactor]",
            "      via_classes: [RiskFactors]",
            "scenarios.yaml, line {line}, field 'via_classes': unknown class 'RiskFactors' (did you mean 'RiskFactor'?)",
        ),
        (
            "  - category: mediated_effect",
            "  - category: mediated_effects",
            "scenarios.yaml, line {line}, field 'category': unknown category 'mediated_effects' (did you mean 'mediated_effect'?)",
        ),
        (
            "    candidates: [DRG_0001, DRG_0006, INT_0001]",
            "    candidates: [DRG_0001, DRG_0066, INT_0008]",
            "scenarios.yaml, line {line}, field 'candidates': unknown entity 'DRG_0066'",
        ),
        (
            'title: "Lowering {target} in {population}"',
            'title: "Lowering {targt} in {population}"',
            "scenarios.yaml, line {line}, field 'title': unknown template field '{{targt}}' (did you mean 'target'?)",
        ),
        (
            "      evidence_levels: [high, moderate]",
            "      evidence_levels: [high, medium]",
            "scenarios.yaml, line {line}, field 'evidence_levels': unknown value 'medium'",
        ),
        (
            "      condition: C3",
            "      condition: C9",
            "scenarios.yaml, line {line}, field 'condition': condition 'C9' has no causal_chain section",
        ),
        (
            "    pattern: multiple_pathways",
            "    pattern: several_pathways",
            "scenarios.yaml, line {line}, field 'pattern': expected one of causal_chain",
        ),
        (
            "stated_in: [POP_0007, POP_0011]",
            "stated_in: [POP_0007, POP_0099]",
            "scenarios.yaml, line {line}, field 'stated_in': unknown population 'POP_0099'",
        ),
        (
            "stated_in: [POP_0007, POP_0011]",
            "stated_in: [POP_0007, DIS_0002]",
            "scenarios.yaml, line {line}, field 'stated_in': 'DIS_0002' is a Disease, not a population",
        ),
    ],
    ids=[
        "unknown population",
        "unknown class",
        "unknown category",
        "unknown pinned candidate",
        "unknown template field",
        "unknown evidence level",
        "unknown condition",
        "unknown pattern",
        "unknown stated_in population",
        "stated_in names no population",
    ],
)
def test_scenario_rules_are_cross_checked_by_the_compiler(
    cardio_domain_copy: Path, old: str, new: str, expected: str
) -> None:
    from compiler.api import validate_domain

    path = cardio_domain_copy / "scenarios.yaml"
    original = path.read_text()
    assert old in original, old
    edited = original.replace(old, new, 1)
    line = edited[: edited.index(new)].count("\n") + 1
    path.write_text(edited)
    try:
        with pytest.raises(UserError) as err:
            validate_domain(cardio_domain_copy)
    finally:
        path.write_text(original)
    first = str(err.value).splitlines()[0]
    assert expected.format(line=line) in first, first

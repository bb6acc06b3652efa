"""Issue 15, item 3 (optional fields): a scenario may omit its population (the domain's
default applies) and the patient's sex (the narrative is then worded neutrally); a domain may
declare no population at all, and then nothing may name one.

The fourth fixture domain (tests/graph/test_fourth_domain.py) runs a domain without
populations end to end on Neo4j; these tests cover the same rules on the committed domains
and the compiler, without a database."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.graph.extract import parameters
from harness.scenarios.generator import Generator
from harness.scenarios.narratives import Wording
from harness.scenarios.patients import score_value
from harness.scenarios.rules import load_rules
from harness.scenarios.validation import check_file
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
HFCARE = REPO / "tests" / "fixtures" / "domains" / "hfcare"


def test_a_hand_written_item_may_omit_population_and_sex(
    cardio: CompiledDomain, tmp_path: Path
) -> None:
    """Without population_id the domain's default population applies (extraction reads its
    context from it); without sex the item is still valid, as a curator's source may say
    neither."""
    record = json.loads(cardio.read("scenarios/scenarios.jsonl").splitlines()[0])
    default = load_rules(cardio).default_population
    assert default and record["population_id"] == default
    stated = parameters(record, cardio)["context_ids"]
    del record["population_id"]
    del record["patient"]["sex"]
    path = tmp_path / "hand_written.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert check_file(cardio, path) == [record]
    assert cardio.population_of(record) == default
    assert parameters(record, cardio)["context_ids"] == stated


def test_an_unknown_population_is_still_located(cardio: CompiledDomain, tmp_path: Path) -> None:
    record = json.loads(cardio.read("scenarios/scenarios.jsonl").splitlines()[0])
    record["population_id"] = "POP_9999"
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(UserError) as err:
        check_file(cardio, path)
    assert "field 'population_id'" in str(err.value) and "POP_9999" in str(err.value)


def test_a_patient_without_a_stated_sex_is_worded_neutrally() -> None:
    wording = Wording(
        {"DIS_1": "Essential hypertension"},
        {"DIS_1": {"sentence": "{Pronoun} takes {possessive} tablets daily."}},
        {},
        {
            "opening": "{Article} {age}-year-old {person}{conditions}.",
            "labs": "Recent results: {labs}.",
            "pregnant": "{Pronoun} is pregnant.",
            "not_pregnant": "{Pronoun} is not pregnant.",
            "outcome_phrase": "the risk of {name}",
            "person": {"female": "woman", "male": "man"},
        },
    )
    text = wording.narrative(58, None, None, ["DIS_1"], [], "pregnant")
    assert text == (
        "A 58-year-old patient. The patient takes the patient's tablets daily. "
        "The patient is pregnant."
    )
    assert wording.narrative(58, "female", None, [], [], None) == "A 58-year-old woman."
    wording.templates["person"]["neutral"] = "adult"  # a domain may declare its own noun
    assert wording.narrative(80, None, None, [], [], None) == "An 80-year-old adult."


def test_a_score_component_for_a_sex_does_not_apply_when_none_is_stated() -> None:
    score = {"components": [{"points": 1, "sex": "female"}, {"points": 2, "findings": ["X"]}]}
    assert score_value(score, {"X"}, 70, "female") == 3
    assert score_value(score, {"X"}, 70, None) == 2


def _hfcare_copy(tmp_path: Path) -> Path:
    root = tmp_path / "t" / "fixtures" / "domains" / "hfcare"
    shutil.copytree(HFCARE, root)
    (tmp_path / "spec").symlink_to(REPO / "spec")
    return root


def test_a_domain_without_populations_cannot_name_one_in_a_title(tmp_path: Path) -> None:
    """Without default_population an item may have no population, so a title that names one
    is a located compile error, and nothing is written."""
    root = _hfcare_copy(tmp_path)
    rules = root / "scenarios.yaml"
    text = rules.read_text()
    rules.write_text(
        text.replace('title: "Lowering {target}"', 'title: "{target} in {population}"', 1)
    )
    out = tmp_path / "out"
    with pytest.raises(UserError) as err:
        compile_domain(root, out_root=out, force=True)
    message = str(err.value)
    assert "scenarios.yaml, line " in message and "field 'title'" in message
    assert "'{population}' needs default_population" in message
    assert not (out / "hfcare").exists()


def test_the_generator_draws_no_population_where_none_is_declared(tmp_path: Path) -> None:
    """A domain without populations still gets patients of both sexes from the default
    profile, and its items carry no population_id."""
    out = tmp_path / "out"
    compile_domain(_hfcare_copy(tmp_path), out_root=out, force=True)
    domain = CompiledDomain.open("hfcare", generated=out)

    gen = Generator(domain)
    patient = gen.patients.make(random.Random(1), None, (), (), False)
    assert patient.sex in ("female", "male") and 40 <= patient.age <= 75
    records = gen.generate()
    assert records and all("population_id" not in r for r in records)
    assert {r["patient"].get("sex") for r in records} >= {None, "female", "male"}

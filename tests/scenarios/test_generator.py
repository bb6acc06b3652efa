"""The scenario generator on the real domains: balance, the paper's walk-through, real chains,
every category's rule, the gold definitions, wording, and determinism (including the committed
files, byte for byte)."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

from harness.compiled import CompiledDomain
from harness.scenarios.clinical import Clinical
from harness.scenarios.files import jsonl_bytes
from harness.scenarios.generator import Generator, default_output
from harness.scenarios.kg import KnowledgeGraph
from harness.scenarios.paths import ChainFinder
from harness.scenarios.validation import validate_records

CATEGORIES = [
    "direct_effect",
    "mediated_effect",
    "multiple_pathways",
    "confounded_association",
    "competing_interventions",
    "contraindication_sensitive",
    "adverse_effect_pathway",
    "incomplete_evidence",
]


def by_category(records: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in records:
        out.setdefault(r["category"], []).append(r)
    return out


def test_cardio_is_80_items_balanced_over_eight_categories(cardio_scenarios) -> None:
    assert [r["scenario_id"] for r in cardio_scenarios] == [f"SCN_{i:04d}" for i in range(1, 81)]
    assert Counter(r["category"] for r in cardio_scenarios) == {c: 10 for c in CATEGORIES}
    assert [r["category"] for r in cardio_scenarios[::10]] == CATEGORIES  # blocks, in order


def test_afib_has_at_least_two_per_category(afib_scenarios) -> None:
    counts = Counter(r["category"] for r in afib_scenarios)
    assert set(counts) == set(CATEGORIES) and min(counts.values()) >= 2


def test_scn_0001_is_the_papers_walkthrough(cardio_scenarios, cardio_kg) -> None:
    s = cardio_scenarios[0]
    assert s["category"] == "direct_effect"
    assert [c["intervention_id"] for c in s["candidates"]] == ["DRG_0001", "DRG_0006", "INT_0008"]
    assert [c["label"] for c in s["candidates"]][1] == "Metoprolol succinate"  # for atenolol
    gold = s["gold"]
    assert gold["preferred_intervention"] == "DRG_0001"
    assert gold["causal_path_assertion_ids"] == ["ASR_0019", "ASR_0010", "ASR_0011", "ASR_0013"]
    # The target is where the paper's gold path ends (ASR_0013's object).
    assert s["target_outcome_id"] == cardio_kg.assertions["ASR_0013"]["object_id"] == "OUT_0002"
    assert {"ASR_0087", "ASR_0091"} <= set(gold["adverse_effect_assertion_ids"])
    assert {"EV_0007", "EV_0011"} <= set(gold["evidence_source_ids"])
    assert "CLS_001" in gold["acceptable_interventions"]  # "ACE inhibitor" counts
    assert gold["contraindication_assertion_ids"] == [] and gold["expects_uncertainty"] is False
    patient = s["patient"]
    assert (patient["age"], patient["sex"], patient["condition_ids"]) == (62, "male", ["DIS_0001"])
    assert {(lab["name"], lab["value"]) for lab in patient["labs"]} == {
        ("LDL cholesterol", 138),
        ("eGFR", 78),
    }


@pytest.mark.parametrize("domain", ["cardio", "afib"])
def test_every_gold_path_is_a_real_chain_to_the_target(domain, cardio_scenarios, afib_scenarios):
    records = cardio_scenarios if domain == "cardio" else afib_scenarios
    kg = KnowledgeGraph(CompiledDomain.open(domain))
    for s in records:
        path = [kg.assertions[i] for i in s["gold"]["causal_path_assertion_ids"]]
        assert path, s["scenario_id"]
        assert path[0]["subject_id"] == s["gold"]["preferred_intervention"], s["scenario_id"]
        for a, b in itertools.pairwise(path):
            assert a["object_id"] == b["subject_id"], s["scenario_id"]
        assert path[-1]["object_id"] == s["target_outcome_id"], s["scenario_id"]
    assert validate_records(kg.domain, list(enumerate(records, 1))) == []


def test_gold_paths_are_the_chains_the_grounded_context_shows(cardio_scenarios, cardio) -> None:
    """Validated categories take C3's chains, weak-evidence items C4's (same finder as Cypher)."""
    from harness.graph.chains import ChainIndex

    index = ChainIndex(cardio.graph)
    kg = KnowledgeGraph(cardio)
    for s in cardio_scenarios:
        condition = "C4" if s["category"] == "incomplete_evidence" else "C3"
        section = kg.condition_section(condition)
        shown = index.chains(
            s["gold"]["preferred_intervention"],
            s["target_outcome_id"],
            section["path_shapes"],
            section["validated_only"],
        )
        assert s["gold"]["causal_path_assertion_ids"] in shown, s["scenario_id"]


def clinical_for(domain: CompiledDomain) -> Clinical:
    gen = Generator(domain)
    return gen.clinical


def test_category_rules_hold(cardio_scenarios, cardio, cardio_kg) -> None:
    clinical = clinical_for(cardio)
    groups = by_category(cardio_scenarios)
    roles = {a: cardio_kg.role(cardio_kg.assertions[a]) for a in cardio_kg.assertions}

    for s in groups["mediated_effect"]:
        path = s["gold"]["causal_path_assertion_ids"]
        mids = [cardio_kg.assertions[i]["object_id"] for i in path[:-1]]
        assert any(cardio_kg.category(m) == "RiskFactor" for m in mids), s["scenario_id"]
    for s in groups["direct_effect"]:
        mids = [
            cardio_kg.assertions[i]["object_id"]
            for i in s["gold"]["causal_path_assertion_ids"][:-1]
        ]
        assert not any(cardio_kg.category(m) == "RiskFactor" for m in mids), s["scenario_id"]

    for s in groups["multiple_pathways"]:
        anchors = s["anchor_assertion_ids"]
        ends = {
            a for a in anchors if cardio_kg.assertions[a]["object_id"] == s["target_outcome_id"]
        }
        assert len(ends) >= 2, s["scenario_id"]

    for s in groups["confounded_association"]:
        (anchor,) = s["anchor_assertion_ids"]
        a = cardio_kg.assertions[anchor]
        assert a["predicate"] == "ASSOCIATED_WITH" and roles[anchor] == "associative"
        assert a["causal_status"] == "associational"
        assert a["object_id"] == s["target_outcome_id"]
        assert a["subject_id"] in s["patient"]["condition_ids"], "the patient has the marker"
        nodes = {
            cardio_kg.assertions[i]["subject_id"] for i in s["gold"]["causal_path_assertion_ids"]
        }
        assert a["subject_id"] not in nodes, "the gold path avoids the associated marker"

    for s in groups["contraindication_sensitive"]:
        (anchor,) = s["anchor_assertion_ids"]
        a = cardio_kg.assertions[anchor]
        assert a["predicate"] == "CONTRAINDICATED_FOR" and roles[anchor] == "contraindication"
        assert a["subject_id"] in {c["intervention_id"] for c in s["candidates"]}
        assert a["subject_id"] != s["gold"]["preferred_intervention"]
        assert a["object_id"] in s["patient"]["condition_ids"]
        if a["population_id"]:
            assert s["population_id"] == a["population_id"]
        assert anchor in s["gold"]["contraindication_assertion_ids"]

    for s in groups["adverse_effect_pathway"]:
        anchor = s["anchor_assertion_ids"][0]
        assert roles[anchor] == "adverse_effect"
        assert cardio_kg.assertions[anchor]["subject_id"] == s["gold"]["preferred_intervention"]
        assert anchor in s["gold"]["adverse_effect_assertion_ids"]

    for s in groups["incomplete_evidence"]:
        assert s["gold"]["expects_uncertainty"] is True
        weak = s["anchor_assertion_ids"]
        assert weak and set(weak) <= set(s["gold"]["causal_path_assertion_ids"])
        for a in weak:
            asr = cardio_kg.assertions[a]
            assert (
                asr["evidence_level"] in ("low", "very_low")
                or not asr["validated"]
                or not cardio_kg.supports.get(a)
            ), (s["scenario_id"], a)
        assert not clinical.has_adequate_chain(
            s["gold"]["preferred_intervention"], s["target_outcome_id"]
        )
        for c in s["candidates"]:  # no option is a confident answer for this patient
            if c["intervention_id"] != s["gold"]["preferred_intervention"]:
                assert not clinical.has_validated_chain(
                    c["intervention_id"], s["target_outcome_id"], s["population_id"]
                ), (s["scenario_id"], c)
    assert all(
        not s["gold"]["expects_uncertainty"]
        for c, items in groups.items()
        if c != "incomplete_evidence"
        for s in items
    )


def test_competing_preferred_wins_the_declared_tie_break(cardio_scenarios, cardio) -> None:
    gen = Generator(cardio)
    rule = gen.rules.category("competing_interventions")
    for s in by_category(cardio_scenarios)["competing_interventions"]:
        gold, pop, target = s["gold"], s["population_id"], s["target_outcome_id"]
        acceptable = [a for a in gold["acceptable_interventions"] if not a.startswith("CLS_")]
        assert len(acceptable) >= 2
        keys = {}
        for a in acceptable:
            chain = next(
                c for c in gen.patterns.ranked(a, target, rule) if gen.clinical.applies(c, pop)
            )
            keys[a] = gen.clinical.preference_key(a, chain, s["patient"]["condition_ids"], pop)
        best = min(keys, key=keys.get)
        assert best == gold["preferred_intervention"], s["scenario_id"]
        assert all(keys[a][:-1] != keys[best][:-1] for a in keys if a != best), "not an id tie"


def test_distractors_have_no_validated_chain_and_classes_are_unambiguous(
    cardio_scenarios, cardio, cardio_kg
) -> None:
    clinical = clinical_for(cardio)
    for s in cardio_scenarios:
        gold = s["gold"]
        acceptable = set(gold["acceptable_interventions"])
        candidates = [c["intervention_id"] for c in s["candidates"]]
        assert 3 <= len(candidates) <= 4 and len(set(candidates)) == len(candidates)
        assert (
            gold["preferred_intervention"] in candidates
            and gold["preferred_intervention"] in acceptable
        )
        assert {c for c in cardio_kg.classes_of.get(gold["preferred_intervention"], ())} >= {
            c for c in acceptable if c.startswith("CLS_")
        } or s["category"] == "competing_interventions"
        contraindicated = {
            cardio_kg.assertions[a]["subject_id"] for a in gold["contraindication_assertion_ids"]
        }
        for c in candidates:
            if c in acceptable or c in contraindicated:
                continue
            if s["source"].startswith("pinned"):
                continue  # the paper's own candidates, see test_scn_0001
            assert not clinical.has_validated_chain(
                c, s["target_outcome_id"], s["population_id"]
            ), (
                s["scenario_id"],
                c,
            )
            for cls in (a for a in acceptable if a.startswith("CLS_")):
                assert c not in cardio_kg.classes[cls]["member_ids"], (s["scenario_id"], cls)


def test_gold_pieces_follow_their_definitions(cardio_scenarios, cardio, cardio_kg) -> None:
    clinical = clinical_for(cardio)
    for s in cardio_scenarios:
        gold = s["gold"]
        preferred = gold["preferred_intervention"]
        assert gold["adverse_effect_assertion_ids"] == sorted(
            a["assertion_id"]
            for a in cardio_kg.outgoing.get(preferred, ())
            if cardio_kg.role(a) == "adverse_effect" and a["validated"]
        )
        path = gold["causal_path_assertion_ids"]
        assert gold["evidence_source_ids"] == sorted(
            {e for a in path for e in cardio_kg.supports.get(a, ())}
        )
        assert not clinical.contraindications(preferred, s["patient"]["condition_ids"])
        for cls in (a for a in gold["acceptable_interventions"] if a.startswith("CLS_")):
            assert cls in cardio_kg.classes


ARTEFACTS = re.compile(r"\b[A-Z]{3}_\d{3,4}\b|\{|\}|\bNone\b|_\w+_|\ba [aeiou]|\s{2,}|\.\.")


@pytest.mark.parametrize("domain", ["cardio", "afib"])
def test_narratives_read_naturally(domain, cardio_scenarios, afib_scenarios) -> None:
    records = cardio_scenarios if domain == "cardio" else afib_scenarios
    for s in records:
        p = s["patient"]
        for text in (p["narrative"], s["decision_target"], s["title"]):
            assert not ARTEFACTS.search(text), (s["scenario_id"], text)
            assert text[0].isupper(), text
        assert re.match(r"^An? \d+-year-old (\w+ )?(man|woman)\b", p["narrative"]), p["narrative"]
        article = "An" if p["age"] in (8, 11, 18) or 80 <= p["age"] <= 89 else "A"
        assert p["narrative"].startswith(f"{article} {p['age']}-year-old")
        for lab in p["labs"]:
            assert f"{lab['name']} " in p["narrative"] and lab["unit"] in p["narrative"]
        if p["pregnancy_status"] == "pregnant":
            assert p["sex"] == "female" and 18 <= p["age"] <= 45 and "is pregnant" in p["narrative"]
        if p["sex"] == "male":
            assert p["pregnancy_status"] == "not_applicable"
        if s["population_id"] in ("POP_0002",) and domain == "cardio":
            assert p["age"] >= 65
        for c in s["candidates"]:
            assert c["label"] not in p["narrative"], "the narrative must not name an option"


def test_pregnancy_is_stated_for_women_of_childbearing_age_when_it_matters(cardio) -> None:
    gen = Generator(cardio)
    inst_rule = gen.rules.category("direct_effect")
    inst = next(i for i in gen.patterns.instances(inst_rule) if i.preferred == "DRG_0004")
    import random

    for seed in range(40):
        p = gen.make_patient(inst, ["DRG_0004", "DRG_0001", "DRG_0014"], random.Random(seed))
        if p["sex"] == "female" and p["age"] <= 49:
            assert p["pregnancy_status"] == "not_pregnant"
            assert p["narrative"].endswith("She is not pregnant.")
            return
    pytest.fail("no woman of childbearing age drawn in 40 seeds")


def test_generation_is_deterministic_and_seeded(cardio) -> None:
    a = Generator(cardio).generate()
    b = Generator(cardio).generate()
    assert jsonl_bytes(a) == jsonl_bytes(b)
    c = Generator(cardio, seed=7).generate()
    assert jsonl_bytes(c) != jsonl_bytes(a)
    assert c[0] == a[0], "a pinned scenario does not depend on the seed"


@pytest.mark.parametrize("domain", ["cardio", "afib"])
def test_committed_scenarios_are_reproduced_byte_for_byte(domain: str, tmp_path: Path) -> None:
    compiled = CompiledDomain.open(domain)
    committed = default_output(compiled)
    assert committed.exists(), f"run `kgbench generate --domain {domain}`"
    from harness.scenarios.generator import generate_file

    out, _ = generate_file(compiled, out=tmp_path / "scenarios.jsonl")
    assert out.read_bytes() == committed.read_bytes(), (
        f"{committed} is stale; run `kgbench generate --domain {domain}`"
    )


def test_chain_finder_effect_sign(cardio_kg) -> None:
    finder = ChainFinder(cardio_kg)
    walkthrough = finder.chain_of(["ASR_0019", "ASR_0010", "ASR_0011", "ASR_0013"])
    assert finder.effect(walkthrough) == "decrease"  # ACE inhibition lowers event risk
    assert finder.effect(finder.chain_of(["ASR_0019", "ASR_0018", "ASR_0080"])) == "increase"


def test_cli_generate_writes_atomically_where_asked(cli, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    out = tmp_path / "x" / "s.jsonl"
    result = CliRunner().invoke(cli, ["generate", "-d", "afib", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == default_output(CompiledDomain.open("afib")).read_bytes()
    assert [p.name for p in out.parent.iterdir()] == ["s.jsonl"], "no temporary file left"

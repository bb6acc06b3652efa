"""The evidence-anchored gold rules, on a small hand-made graph (tests/fixtures/domains/toy).

The toy graph is built so each rule has a case whose answer is known by hand:
- metoprolol lowers blood pressure (a validated chain to MACE) but has no outcome claim, and a
  null result for MACE in coronary disease: a surrogate chain never makes it an answer;
- ezetimibe lowers MACE in coronary disease (its own trial) but has a null mortality result:
  the null result blocks its LDL chain to mortality;
- lisinopril and ramipril qualify through the ACE-inhibitor class claim (declared homogeneous),
  which is also contraindicated in angioedema (class-level, inherited by every member);
- "Antihypertensive" (CLS_002) is a heterogeneous class and never an acceptable answer;
- renal denervation and sodium reduction have only putative or surrogate evidence.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.evaluation.lexicon import Lexicon
from harness.evaluation.scoring import score_response
from harness.scenarios.evidence import OutcomeJudge
from harness.scenarios.generator import Generator, rule_order_dependent
from harness.scenarios.kg import KnowledgeGraph
from harness.scenarios.patients import score_value
from harness.scenarios.rules import load_rules
from harness.scenarios.validation import validate_records
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "tests" / "fixtures" / "domains" / "toy"


def _compile(domain_dir: Path, out: Path) -> CompiledDomain:
    compile_domain(domain_dir, out_root=out, force=True)
    return CompiledDomain.open(domain_dir.name, out)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    return _compile(TOY, tmp_path_factory.mktemp("toy-generated"))


@pytest.fixture(scope="module")
def judge(toy: CompiledDomain) -> OutcomeJudge:
    return OutcomeJudge(KnowledgeGraph(toy), load_rules(toy))


@pytest.fixture(scope="module")
def generated(toy: CompiledDomain) -> tuple[Generator, list[dict]]:
    gen = Generator(toy)
    return gen, gen.generate()


@pytest.fixture
def toy_copy(tmp_path: Path) -> Path:
    """A writable copy of the toy domain at the same depth, so its schema import resolves."""
    root = tmp_path / "t" / "fixtures" / "domains" / "toy"
    shutil.copytree(TOY, root)
    (tmp_path / "spec").symlink_to(REPO / "spec")
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# --- the judge ----------------------------------------------------------------------------


def test_a_surrogate_only_chain_yields_no_gold(judge: OutcomeJudge, generated) -> None:
    gen, records = generated
    # metoprolol's validated chain reaches MACE through blood pressure ...
    chains = gen.clinical.chains("DRG_0003", "OUT_0001", gen.rules.distractor_exclusion, "POP_0001")
    assert [c.ids for c in chains] == [("ASR_0007", "ASR_0008", "ASR_0009", "ASR_0005")]
    verdict = judge.judge("DRG_0003", "OUT_0001", "POP_0001")
    assert verdict.status == "no_outcome_evidence" and verdict.claim is None
    # ... and in the generated set it is never an answer
    for r in records:
        assert r["gold"]["preferred_intervention"] != "DRG_0003"
        assert "DRG_0003" not in r["gold"]["acceptable_interventions"]


def test_every_answer_rests_on_an_outcome_claim(generated) -> None:
    gen, records = generated
    for r in records:
        gold = r["gold"]
        verdicts = {v["intervention_id"]: v for v in gold["justification"]["candidates"]}
        assert set(verdicts) == {c["intervention_id"] for c in r["candidates"]}
        if gold["preferred_intervention"] is None:
            assert all(v["verdict"] == "excluded" for v in verdicts.values())
            continue
        mine = verdicts[gold["preferred_intervention"]]
        assert mine["reason"] == "outcome_evidence" and mine["evidence_source_ids"]
        assert gold["outcome_assertion_ids"] == mine["assertion_ids"]
        for aid in gold["outcome_assertion_ids"]:
            a = gen.kg.assertions[aid]
            assert a["validated"] and a["direction"] == "decrease"
            assert a["object_id"] in gen.kg.outcome_ids(r["target_outcome_id"])


def test_null_evidence_blocks_a_chain(judge: OutcomeJudge, generated) -> None:
    # ezetimibe's LDL chain reaches all-cause mortality, but a null result stands against it
    assert judge.kg.assertions["ASR_0017"]["object_id"] == "OUT_0003"
    blocked = judge.judge("DRG_0005", "OUT_0003", "POP_0002")
    assert (blocked.status, blocked.blocking) == ("null_evidence", ("ASR_0026",))
    assert judge.judge("DRG_0005", "OUT_0001", "POP_0002").qualified  # its own MACE trial
    _, records = generated
    for r in records:
        if r["target_outcome_id"] == "OUT_0003" and r["population_id"] == "POP_0002":
            assert r["gold"]["preferred_intervention"] != "DRG_0005"


def test_a_contraindicated_class_member_is_never_acceptable(judge, generated) -> None:
    verdict = judge.judge("DRG_0001", "OUT_0001", "POP_0001", ("CTI_0001",))
    assert verdict.status == "contraindicated"
    assert verdict.contraindications == ("ASR_0033",)  # the class-level claim, inherited
    _, records = generated
    for r in records:
        findings = set(r["patient"]["condition_ids"])
        acceptable = set(r["gold"]["acceptable_interventions"])
        assert "CLS_002" not in acceptable  # heterogeneous: never a wildcard
        if findings & {"CTI_0001", "CTI_0002"}:
            assert not acceptable & {"DRG_0001", "DRG_0002", "CLS_001"}


def test_a_class_claim_needs_a_homogeneous_class(toy_copy: Path, tmp_path: Path) -> None:
    _edit(
        toy_copy / "domain.yaml",
        "  homogeneous_classes:\n    - class_id: CLS_001\n      note: ACE inhibitors share their mechanism and outcome benefit.\n",
        "",
    )
    domain = _compile(toy_copy, tmp_path / "gen")
    j = OutcomeJudge(KnowledgeGraph(domain), load_rules(domain))
    assert j.judge("DRG_0001", "OUT_0001", "POP_0001").status == "no_outcome_evidence"
    # the contraindication still applies to every member (members_inherit: always)
    assert j.judge("DRG_0001", "OUT_0001", "POP_0001", ("CTI_0001",)).status == "contraindicated"


def test_a_tie_yields_no_item(judge: OutcomeJudge, generated) -> None:
    """Lisinopril and ramipril are equally supported for MACE in hypertension: no generated
    item offers both, and the independent re-judging finds no item decided by rule order."""
    a = judge.judge("DRG_0001", "OUT_0001", "POP_0001")
    b = judge.judge("DRG_0002", "OUT_0001", "POP_0001")
    assert a.qualified and b.qualified and a.claim.strength == b.claim.strength
    gen, records = generated
    assert gen.report.rule_order_dependent == 0
    for r in records:
        ids = {c["intervention_id"] for c in r["candidates"]}
        assert not {"DRG_0001", "DRG_0002"} <= ids
    # a hand-written item offering both is counted as rule-order dependent
    item = json.loads(json.dumps(records[0]))
    item.update(target_outcome_id="OUT_0001", population_id="POP_0001")
    item["candidates"] = [
        {"intervention_id": "DRG_0001", "label": "Lisinopril"},
        {"intervention_id": "DRG_0002", "label": "Ramipril"},
    ]
    item["patient"]["condition_ids"] = ["DIS_0001"]
    item["gold"]["preferred_intervention"] = "DRG_0001"
    assert rule_order_dependent(judge, [item]) == 1


def test_every_category_and_an_abstention_item(generated) -> None:
    gen, records = generated
    assert len(records) == 8 and len({r["category"] for r in records}) == 8
    abstain = [r for r in records if r["category"] == "incomplete_evidence"]
    assert abstain and all(r["gold"]["preferred_intervention"] is None for r in abstain)
    for r in abstain:
        g = r["gold"]
        assert g["acceptable_interventions"] == [] and g["expects_uncertainty"] is True
    assert not validate_records(gen.domain, list(enumerate(records, 1)))


def test_computed_scores_match_the_listed_findings(generated) -> None:
    gen, records = generated
    score = gen.rules.clinical_scores[0]
    seen = 0
    for r in records:
        p = r["patient"]
        printed = [lab for lab in p["labs"] if lab["name"] == score["name"]]
        if r["population_id"] != "POP_0002":
            assert not printed
            continue
        seen += 1
        value = score_value(score, set(p["condition_ids"]), p["age"], p["sex"])
        assert printed == [{"name": score["name"], "value": value, "unit": "points"}]
        assert value >= (3 if p["sex"] == "female" else 2)  # the population's threshold
    assert seen


def test_gold_evidence_is_the_preferreds_own(generated) -> None:
    gen, records = generated
    for r in records:
        preferred = r["gold"]["preferred_intervention"]
        for e in r["gold"]["evidence_source_ids"]:
            studied = gen.kg.evidence[e].get("studied_interventions") or []
            own = {preferred, *gen.kg.classes_of.get(preferred, ())}
            assert not studied or own & set(studied), (r["scenario_id"], e)


# --- the compiler -------------------------------------------------------------------------


def test_a_trial_never_supports_another_drugs_claim(toy_copy: Path, tmp_path: Path) -> None:
    # the statin trial (EV_0002, studied atorvastatin only) attached to ezetimibe's claim
    with (toy_copy / "data" / "assertion_evidence.csv").open("a", encoding="utf-8") as f:
        f.write("ASR_0025,EV_0002,,\n")
    with pytest.raises(UserError) as err:
        compile_domain(toy_copy, out_root=tmp_path / "gen", force=True)
    assert "trial EV_0002 supports ASR_0025 about DRG_0005, which it did not study" in str(
        err.value
    )
    assert "assertion_evidence.csv, line" in str(err.value)


def test_a_trial_on_a_physiology_edge_is_refused(toy_copy: Path, tmp_path: Path) -> None:
    with (toy_copy / "data" / "assertion_evidence.csv").open("a", encoding="utf-8") as f:
        f.write("ASR_0005,EV_0005,,\n")  # an amlodipine trial behind blood pressure -> MACE
    with pytest.raises(UserError) as err:
        compile_domain(toy_copy, out_root=tmp_path / "gen", force=True)
    assert "trial EV_0005 supports ASR_0005, a physiology edge" in str(err.value)


def test_in_warning_mode_a_foreign_trial_stays_out_of_the_gold(
    toy_copy: Path, tmp_path: Path
) -> None:
    with (toy_copy / "data" / "assertion_evidence.csv").open("a", encoding="utf-8") as f:
        f.write("ASR_0005,EV_0005,,\n")
    _edit(
        toy_copy / "domain.yaml", "evidence_rules:\n", "evidence_rules:\n  study_scope: warning\n"
    )
    domain = _compile(toy_copy, tmp_path / "gen")
    records = Generator(domain).generate()
    for r in records:
        if "ASR_0005" in r["gold"]["causal_path_assertion_ids"]:
            assert ("EV_0005" in r["gold"]["evidence_source_ids"]) == (
                r["gold"]["preferred_intervention"] == "DRG_0006"
            )


def test_contradictory_claims_need_a_declared_resolution(toy_copy: Path, tmp_path: Path) -> None:
    with (toy_copy / "data" / "assertions.csv").open("a", encoding="utf-8") as f:
        f.write(
            "ASR_0045,DRG_0005,HAS_NO_EFFECT_ON,OUT_0001,causal,none,no_effect,moderate,0.7,"
            "true,,POP_0002,long_term,,\n"
        )
    with (toy_copy / "data" / "assertion_evidence.csv").open("a", encoding="utf-8") as f:
        f.write("ASR_0045,EV_0003,,\n")
    with pytest.raises(UserError) as err:
        compile_domain(toy_copy, out_root=tmp_path / "gen", force=True)
    assert "ASR_0025 (benefit) and ASR_0045 (no effect) contradict each other" in str(err.value)
    _edit(
        toy_copy / "domain.yaml",
        "evidence_rules:\n",
        "evidence_rules:\n  conflicts:\n    - assertions: [ASR_0025, ASR_0045]\n"
        "      resolution: contested\n      note: two analyses disagree\n",
    )
    domain = _compile(toy_copy, tmp_path / "gen2")
    j = OutcomeJudge(KnowledgeGraph(domain), load_rules(domain))
    assert j.judge("DRG_0005", "OUT_0001", "POP_0002").status == "null_evidence"


def test_a_class_claim_on_a_class_without_members_is_an_error(
    toy_copy: Path, tmp_path: Path
) -> None:
    with (toy_copy / "data" / "entities.csv").open("a", encoding="utf-8") as f:
        f.write("CLS_003,InterventionClass,Empty class,,No members.,\n")
    with (toy_copy / "data" / "assertions.csv").open("a", encoding="utf-8") as f:
        f.write(
            "ASR_0045,CLS_003,CAUSES_DECREASE_IN,OUT_0001,causal,decrease,causal,low,0.3,"
            "false,,,long_term,,none yet\n"
        )
    with pytest.raises(UserError) as err:
        compile_domain(toy_copy, out_root=tmp_path / "gen", force=True)
    assert "ASR_0045 is a class-level claim on 'CLS_003', which has no members" in str(err.value)


# --- scoring ------------------------------------------------------------------------------


def _response(**fields) -> dict:
    base = {
        "recommended_intervention": None,
        "causal_path_assertion_ids": [],
        "adverse_effect_assertion_ids": [],
        "contraindication_assertion_ids": [],
        "supporting_evidence_ids": [],
        "claims": [],
        "uncertainty_flag": True,
        "rationale": "",
    }
    return {**base, **fields}


def test_a_correct_abstention_scores_one_and_a_pick_zero(generated) -> None:
    gen, records = generated
    lex = Lexicon.from_graph(gen.kg.graph)
    item = next(r for r in records if r["gold"]["preferred_intervention"] is None)
    label = item["candidates"][0]["label"]
    gold = item["gold"]
    abstain = score_response(gold, _response(), None, lexicon=lex, domain=gen.kg.domain)
    assert abstain["intervention_accuracy"] == 1.0 == abstain["preferred_intervention_accuracy"]
    assert abstain["uncertainty_correctness"] == 1.0
    confident = score_response(
        gold,
        _response(recommended_intervention=label, uncertainty_flag=False),
        None,
        lexicon=lex,
        domain=gen.kg.domain,
    )
    assert confident["intervention_accuracy"] == 0.0
    hedged = score_response(
        gold, _response(recommended_intervention=label), None, lexicon=lex, domain=gen.kg.domain
    )
    assert hedged["intervention_accuracy"] == 0.0  # a pick is a pick, flagged or not
    silent = score_response(
        gold, _response(uncertainty_flag=False), None, lexicon=lex, domain=gen.kg.domain
    )
    assert silent["intervention_accuracy"] == 0.0  # null without the flag is not an abstention
    normal = next(r for r in records if r["gold"]["preferred_intervention"])
    assert (
        score_response(normal["gold"], _response(), None, lexicon=lex, domain=gen.kg.domain)[
            "intervention_accuracy"
        ]
        == 0.0
    )
    chosen = next(
        c["label"]
        for c in normal["candidates"]
        if c["intervention_id"] == normal["gold"]["preferred_intervention"]
    )
    right = score_response(
        normal["gold"],
        _response(recommended_intervention=chosen, uncertainty_flag=False),
        None,
        lexicon=lex,
        domain=gen.kg.domain,
    )
    assert right["intervention_accuracy"] == 1.0 == right["preferred_intervention_accuracy"]


# --- hand-written items meet the same rules -------------------------------------------------


def _problems(gen: Generator, record: dict) -> list[str]:
    return [str(p) for p in validate_records(gen.domain, [(1, record)], "hand.jsonl")]


def _copy(record: dict) -> dict:
    return json.loads(json.dumps(record))


def test_check_scenarios_rejects_what_the_generator_never_writes(generated) -> None:
    gen, records = generated
    item = next(r for r in records if r["category"] == "contraindication_sensitive")
    assert _problems(gen, item) == []
    trap = next(
        v for v in item["gold"]["justification"]["candidates"] if v["reason"] == "contraindicated"
    )
    ruled = _copy(item)  # the contraindicated option made the answer
    ruled["gold"]["preferred_intervention"] = trap["intervention_id"]
    ruled["gold"]["acceptable_interventions"] = [trap["intervention_id"]]
    assert any(
        f"'{trap['intervention_id']}' is contraindicated for this patient: "
        f"{trap['assertion_ids'][0]}" in p
        for p in _problems(gen, ruled)
    )

    stray = _copy(item)  # a source that supports no gold assertion
    stray["gold"]["evidence_source_ids"] = [*stray["gold"]["evidence_source_ids"], "EV_0003"]
    assert any("EV_0003 supports none of the gold assertions" in p for p in _problems(gen, stray))

    wildcard = _copy(item)  # a heterogeneous class as a wildcard
    wildcard["gold"]["acceptable_interventions"].append("CLS_002")
    assert any("class 'CLS_002' is not declared homogeneous" in p for p in _problems(gen, wildcard))


def test_check_scenarios_rejects_a_path_that_raises_the_target(generated) -> None:
    """Sodium restriction activates the renin-angiotensin system (ASR_0044): a path through it
    raises blood pressure and MACE, so it cannot explain an answer that lowers MACE."""
    gen, records = generated
    item = _copy(next(r for r in records if r["category"] == "direct_effect"))
    item["target_outcome_id"] = "OUT_0001"
    item["candidates"].append({"intervention_id": "INT_0002", "label": "Dietary sodium reduction"})
    item["gold"].update(
        preferred_intervention="INT_0002",
        acceptable_interventions=["INT_0002"],
        causal_path_assertion_ids=["ASR_0022", "ASR_0005"],
        outcome_assertion_ids=[],
        evidence_source_ids=[],
    )
    assert not any("net effect" in p for p in _problems(gen, item))  # lowers BP, then MACE
    item["gold"]["causal_path_assertion_ids"] = ["ASR_0044", "ASR_0004", "ASR_0005"]
    assert any(
        "the gold path's net effect increases the target OUT_0001" in p
        for p in _problems(gen, item)
    )


def test_a_category_the_evidence_cannot_fill_is_one_clear_error(toy: CompiledDomain) -> None:

    with pytest.raises(UserError) as err:
        Generator(toy).generate(per_category=3)
    message = str(err.value)
    assert message.startswith("category '") and "scenarios requested" in message
    assert "It needs " in message and "add the evidence" in message


def test_provenance_labels_never_contradict_the_assertion(toy: CompiledDomain) -> None:
    for a in toy.graph["assertions"]:
        label = a["provenance"]
        assert label, a["assertion_id"]
        words = set(label.replace(",", " ").split())
        if "unvalidated" in words:
            assert a["validated"] is False, a["assertion_id"]
        elif "validated" in words:
            assert a["validated"] is True, a["assertion_id"]
        if a["causal_status"] == "no_effect":
            assert label.startswith("null result"), a["assertion_id"]


def test_a_label_that_lies_about_validation_is_refused(toy_copy: Path, tmp_path: Path) -> None:
    conditions = toy_copy / "conditions.yaml"
    text = (REPO / "spec" / "declarations" / "conditions.yaml").read_text(encoding="utf-8")
    conditions.write_text(
        text.replace(
            "  - label: validated claim\n    validated: true\n",
            "  - label: validated claim\n    validated: false\n",
        ),
        encoding="utf-8",
    )
    _edit(
        toy_copy / "domain.yaml",
        "scenarios: scenarios.yaml\n",
        "scenarios: scenarios.yaml\nconditions: conditions.yaml\n",
    )
    with pytest.raises(UserError) as err:
        compile_domain(toy_copy, out_root=tmp_path / "gen", force=True)
    assert "provenance label 'validated claim' speaks of validation" in str(err.value)
    assert "field 'validated'" in str(err.value)


# --- patients and populations -------------------------------------------------------------


def test_score_findings_each_raise_the_score(toy: CompiledDomain) -> None:
    import random
    from dataclasses import replace as dc_replace

    from harness.scenarios.patients import PatientMaker

    score = {
        "name": "S",
        "unit": "points",
        "when": [],
        "components": [
            {"points": 1, "findings": ["RSK_0001", "RSK_0002"]},  # one component, two names
            {"points": 1, "findings": ["RSK_0003"]},
        ],
    }
    rules = dc_replace(load_rules(toy), clinical_scores=(score,))
    maker = PatientMaker(rules)
    profile = {"population": "POP_0002", "score_thresholds": [{"score": "S", "min": 2}]}
    for seed in range(50):
        found = maker.meet_thresholds(random.Random(seed), profile, ("DIS_0002",), 60, "male")
        assert "RSK_0003" in found and len({"RSK_0001", "RSK_0002"} & set(found)) == 1


def test_a_pregnant_patient_is_of_childbearing_age(generated) -> None:
    _, records = generated
    pregnant = [r for r in records if r["patient"]["pregnancy_status"] == "pregnant"]
    assert all(18 <= r["patient"]["age"] <= 49 for r in pregnant)


def test_a_finding_can_fix_the_patients_sex(toy: CompiledDomain) -> None:
    import random
    from dataclasses import replace as dc_replace

    from harness.scenarios.patients import PatientMaker

    rules = load_rules(toy)
    profiles = {**rules.entity_profiles, "RSK_0003": {"entity": "RSK_0003", "sexes": ["female"]}}
    maker = PatientMaker(dc_replace(rules, entity_profiles=profiles))
    sexes = {
        maker.make(random.Random(s), "POP_0001", ("DIS_0001", "RSK_0003"), (), False).sex
        for s in range(30)
    }
    assert sexes == {"female"}


def test_no_option_exceeds_the_distractor_share(toy_copy: Path, tmp_path: Path) -> None:
    _edit(toy_copy / "scenarios.yaml", "distractor_share_max: 1.0", "distractor_share_max: 0.4")
    domain = _compile(toy_copy, tmp_path / "gen")
    gen = Generator(domain)
    records = gen.generate()
    cap = int(0.4 * len(records))
    uses: dict[str, int] = {}
    for r in records:
        for c in r["candidates"]:
            if c["intervention_id"] != r["gold"]["preferred_intervention"]:
                uses[c["intervention_id"]] = uses.get(c["intervention_id"], 0) + 1
    assert max(uses.values()) <= cap, uses  # fixed options (competitors, traps) included


def test_a_below_the_bar_claim_is_named_as_such(generated) -> None:
    gen, records = generated
    # renal denervation's MACE claim exists but is putative, low certainty and not validated
    verdict = gen.judge.judge("INT_0001", "OUT_0001", "POP_0001")
    assert verdict.status == "no_outcome_evidence"
    ((aid, why),) = verdict.weak
    assert aid == "ASR_0030" and "not validated" in why and "low certainty" in why
    for r in records:
        for v in r["gold"]["justification"]["candidates"]:
            if v["intervention_id"] == "INT_0001" and r["target_outcome_id"] == "OUT_0001":
                assert "does not meet the bar (ASR_0030: not validated" in v["summary"]

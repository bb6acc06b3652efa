"""Gold from evidence, never from its absence (issue 26), on the small hand-made toy graph.

Each rule has a case whose answer is known by hand, including the "no" case:
- sodium reduction (INT_0002) has no outcome claim on MACE, no indication and no declared gap:
  its status for MACE in hypertension is unknown, so it is never offered; a declared
  `evidence_gap` with its source makes it known;
- metoprolol (DRG_0003) is indicated only for coronary disease: for a hypertensive patient
  without it, "not indicated" is a known status;
- the ACE-inhibitor class claim on MACE (ASR_0023) speaks for stroke (a component) only once a
  component credit is declared;
- a class 2b recommendation as the best guideline support makes a correct answer uncertain;
- the ACE inhibitors reach MACE through two validated chains of one shape (through blood
  pressure and through remodelling): both are gold;
- renal denervation's MACE claim is below the bar: with a class 1 recommendation for the
  patient's hypertension its text says so ("recommended for ..."), with none, with one for
  another condition, or with a class the domain does not count, it says "no ... recommendation".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.scenarios.evidence import EVIDENCE_GAP, NOT_INDICATED, OutcomeJudge
from harness.scenarios.generator import Generator
from harness.scenarios.gold import GoldError
from harness.scenarios.kg import KnowledgeGraph
from harness.scenarios.patterns import Instance
from harness.scenarios.rules import load_rules
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "tests" / "fixtures" / "domains" / "toy"


def _compile(domain_dir: Path, out: Path) -> CompiledDomain:
    compile_domain(domain_dir, out_root=out, force=True)
    return CompiledDomain.open(domain_dir.name, out)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    return _compile(TOY, tmp_path_factory.mktemp("toy-known"))


@pytest.fixture(scope="module")
def generated(toy: CompiledDomain) -> tuple[Generator, list[dict]]:
    gen = Generator(toy)
    return gen, gen.generate()


@pytest.fixture
def toy_copy(tmp_path: Path) -> Path:
    root = tmp_path / "t" / "fixtures" / "domains" / "toy"
    shutil.copytree(TOY, root)
    (tmp_path / "spec").symlink_to(REPO / "spec")
    return root


def _append_rules(domain_dir: Path, text: str) -> None:
    path = domain_dir / "domain.yaml"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _judge(domain: CompiledDomain) -> OutcomeJudge:
    return OutcomeJudge(KnowledgeGraph(domain), load_rules(domain))


GAP = """  evidence_gaps:
    - intervention_id: INT_0002
      outcome_id: OUT_0001
      population_id: POP_0001
      evidence_id: EV_0001
      note: No outcome trial or recommendation of sodium reduction for MACE (test fixture).
"""


# --- item 1: known statuses --------------------------------------------------------------


def test_a_candidate_with_unknown_status_is_never_offered(generated) -> None:
    gen, records = generated
    silent = gen.judge.judge("INT_0002", "OUT_0001", "POP_0001", ("DIS_0001",))
    assert silent.status == "no_outcome_evidence" and not silent.known and not silent.basis
    # it has a validated chain to MACE (a tempting option), yet no item offers it for MACE
    assert gen.clinical.chains("INT_0002", "OUT_0001", gen.rules.distractor_exclusion, "POP_0001")
    for r in records:
        findings = tuple(r["patient"]["condition_ids"])
        for c in r["candidates"]:
            j = gen.judge.judge(
                c["intervention_id"], r["target_outcome_id"], r["population_id"], findings
            )
            assert j.known, (r["scenario_id"], c["intervention_id"])
        for v in r["gold"]["justification"]["candidates"]:
            assert v["reason"] != "no_outcome_evidence" or v["assertion_ids"]
    # the gold builder refuses an item that offers it
    inst = Instance("direct_effect", "DRG_0001", "OUT_0001", "POP_0001", None, (), ("DIS_0001",))
    with pytest.raises(GoldError, match="unknown evidence status for INT_0002"):
        gen.gold.verdicts(inst, ["DRG_0001", "INT_0002"], ("DIS_0001",))


def test_not_indicated_is_a_known_status_only_where_no_indication_fits(generated) -> None:
    gen, _ = generated
    j = gen.judge.judge("DRG_0003", "OUT_0001", "POP_0001", ("DIS_0001",))
    assert (j.basis, j.indications, j.known) == (NOT_INDICATED, ("DIS_0002",), True)
    # with coronary disease listed it is indicated: then nothing is known about MACE in
    # hypertension (its null result is for coronary disease as a population)
    j = gen.judge.judge("DRG_0003", "OUT_0001", "POP_0001", ("DIS_0001", "DIS_0002"))
    assert not j.known


def test_a_declared_evidence_gap_makes_the_status_known(toy_copy: Path, tmp_path: Path) -> None:
    _append_rules(toy_copy, GAP)
    domain = _compile(toy_copy, tmp_path / "gen")
    j = _judge(domain).judge("INT_0002", "OUT_0001", "POP_0001", ("DIS_0001",))
    assert (j.status, j.basis, j.known) == ("no_outcome_evidence", EVIDENCE_GAP, True)
    assert j.gap is not None and j.gap["evidence_id"] == "EV_0001"
    # the gap speaks for MACE only, never for another outcome
    other = _judge(domain).judge("INT_0002", "OUT_0002", "POP_0001", ("DIS_0001",))
    assert other.basis != EVIDENCE_GAP


def test_an_abstention_item_has_every_candidates_status_known(generated) -> None:
    gen, records = generated
    abstain = [r for r in records if r["gold"]["preferred_intervention"] is None]
    assert abstain
    for r in abstain:
        findings = tuple(r["patient"]["condition_ids"])
        for c in r["candidates"]:
            j = gen.judge.judge(
                c["intervention_id"], r["target_outcome_id"], r["population_id"], findings
            )
            assert j.known and not j.qualified, (r["scenario_id"], c["intervention_id"])
        assert r["gold"]["expects_uncertainty"] is True and r["gold"]["causal_paths"] == []


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ("      evidence_id: EV_0001\n", "", "evidence_id", "evidence_id"),
        ("evidence_id: EV_0001\n", "evidence_id: ''\n", "evidence_id", "needs the source"),
        ("intervention_id: INT_0002", "intervention_id: INT_0099", "intervention_id", "INT_0099"),
        ("outcome_id: OUT_0001", "outcome_id: OUT_0099", "outcome_id", "OUT_0099"),
        ("population_id: POP_0001", "population_id: DIS_0001", "population_id", "DIS_0001"),
    ],
)
def test_a_bad_evidence_gap_is_one_located_error(
    toy_copy: Path, tmp_path: Path, old: str, new: str, field: str, message: str
) -> None:
    _append_rules(toy_copy, GAP.replace(old, new))
    out = tmp_path / "gen"
    with pytest.raises(UserError) as exc:
        compile_domain(toy_copy, out_root=out, force=True)
    text = str(exc.value)
    assert "domain.yaml" in text and "line" in text and message in text, text
    assert field in text
    assert not (out / "toy" / "kg.json").exists()  # nothing written


# --- item 2: composite outcomes ------------------------------------------------------------


def test_a_composite_claim_gives_a_component_no_credit_unless_declared(
    toy, toy_copy: Path, tmp_path: Path
) -> None:
    ids = [c.assertion_id for c in _judge(toy).outcome_claims("DRG_0001", "OUT_0002", "POP_0001")]
    assert "ASR_0023" not in ids and ids == ["ASR_0029"]  # the MACE claim says nothing of stroke
    assert "ASR_0023" in [
        c.assertion_id for c in _judge(toy).outcome_claims("DRG_0001", "OUT_0001", "POP_0001")
    ]
    _append_rules(
        toy_copy,
        "  component_credits:\n    - {assertion_id: ASR_0023, components: [OUT_0002], "
        "evidence_id: EV_0004, note: the toy overview reports stroke (test fixture)}\n",
    )
    credited = _judge(_compile(toy_copy, tmp_path / "gen"))
    ids = [c.assertion_id for c in credited.outcome_claims("DRG_0001", "OUT_0002", "POP_0001")]
    assert ids == ["ASR_0023", "ASR_0029"]


def test_a_component_credit_naming_a_non_member_is_one_located_error(
    toy_copy: Path, tmp_path: Path
) -> None:
    _append_rules(
        toy_copy,
        "  component_credits:\n    - {assertion_id: ASR_0023, components: [OUT_0003], "
        "evidence_id: EV_0004, note: mortality is not a member (test fixture)}\n",
    )
    with pytest.raises(UserError) as exc:
        compile_domain(toy_copy, out_root=tmp_path / "gen", force=True)
    text = str(exc.value)
    assert "'OUT_0003' is not a member of the composite OUT_0001" in text
    assert "domain.yaml" in text and "components" in text


# --- item 3: uncertainty ---------------------------------------------------------------------


def test_a_class_2b_only_answer_expects_uncertainty(toy, toy_copy: Path, tmp_path: Path) -> None:
    gen = Generator(toy)
    sure = gen.judge.judge("DRG_0001", "OUT_0001", "POP_0001", ("DIS_0001",))
    assert sure.qualified and gen.gold.uncertainty(sure.claims) == []  # class 1, level A
    links = toy_copy / "data" / "assertion_evidence.csv"
    text = links.read_text(encoding="utf-8")
    links.write_text(
        text.replace("ASR_0023,EV_0001,class_1,A", "ASR_0023,EV_0001,class_2b,B_R"),
        encoding="utf-8",
    )
    weak = Generator(_compile(toy_copy, tmp_path / "gen"))
    j = weak.judge.judge("DRG_0001", "OUT_0001", "POP_0001", ("DIS_0001",))
    assert j.qualified  # its meta-analysis still qualifies it ...
    assert weak.gold.uncertainty(j.claims) == ["best recommendation class_2b"]  # ... uncertainly
    inst = Instance("direct_effect", "DRG_0001", "OUT_0001", "POP_0001", None, (), ("DIS_0001",))
    gold = weak.gold.gold(inst, ["DRG_0001", "DRG_0003"], ("DIS_0001",))
    assert gold["preferred_intervention"] == "DRG_0001" and gold["expects_uncertainty"] is True


# --- item 4: every equal chain is gold ---------------------------------------------------------


def test_two_equal_chains_both_appear_in_the_gold(generated) -> None:
    gen, _ = generated
    through_bp = ("ASR_0001", "ASR_0003", "ASR_0004", "ASR_0005")
    through_remodelling = ("ASR_0001", "ASR_0003", "ASR_0042", "ASR_0043")
    found = gen.clinical.chains(
        "DRG_0001", "OUT_0001", gen.rules.category("direct_effect").path, "POP_0001"
    )
    assert {c.ids for c in found} >= {through_bp, through_remodelling}
    for path in (through_bp, through_remodelling):  # whichever the ranking lists first
        inst = Instance(
            "direct_effect", "DRG_0001", "OUT_0001", "POP_0001",
            gen.finder.chain_of(path), path, ("DIS_0001",),
        )  # fmt: skip
        gold = gen.gold.gold(inst, ["DRG_0001", "DRG_0003"], ("DIS_0001",))
        assert gold["causal_paths"] == [list(through_bp), list(through_remodelling)]
        assert gold["causal_path_assertion_ids"] == list(path)  # kept for 2.0 readers


# --- a shortfall's text says what a guideline does recommend ------------------------------


def _add_recommendation(domain_dir: Path, row: str, link: str) -> None:
    """Append an INDICATED_FOR assertion and its SUPPORTS link to the toy copy."""
    for name, line in (("assertions.csv", row), ("assertion_evidence.csv", link)):
        path = domain_dir / "data" / name
        path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")


INDICATION = (
    "ASR_0045,INT_0001,INDICATED_FOR,DIS_0001,therapeutic,none,not_applicable,high,0.9,true,"
    ",,long_term,,"
)


def test_a_recommended_candidate_without_a_target_claim_is_not_called_unrecommended(
    toy, toy_copy: Path, tmp_path: Path
) -> None:
    # no: renal denervation has a putative MACE claim and no recommendation at all
    plain = _judge(toy).judge("INT_0001", "OUT_0001", "POP_0001", ("DIS_0001",))
    ((aid, why),) = plain.weak
    assert aid == "ASR_0030" and (
        "no qualifying study or guideline recommendation supports it on major adverse "
        "cardiovascular events" in why
    )
    assert "no study of it" not in why  # absence of a qualifying source, not of any study
    assert "recommended for" not in why and plain.recommendations == ()
    # yes: a class 1 guideline recommendation for the patient's hypertension (not for MACE)
    _add_recommendation(toy_copy, INDICATION, "ASR_0045,EV_0001,class_1,A")
    compiled = _compile(toy_copy, tmp_path / "gen")
    judge = _judge(compiled)
    j = judge.judge("INT_0001", "OUT_0001", "POP_0001", ("DIS_0001",))
    assert j.status == "no_outcome_evidence" and not j.qualified  # still no answer ...
    ((aid, why),) = j.weak
    assert aid == "ASR_0030"
    assert (  # ... and the text says what the guideline recommends it for, truthfully
        "recommended for essential hypertension (ASR_0045: guideline EV_0001, class 1, level A), "
        "but no qualifying study or recommendation supports it on major adverse "
        "cardiovascular events" in why
    )
    assert "no qualifying study or guideline recommendation" not in why
    assert "no study of it" not in why
    assert [(r.assertion_id, r.evidence_id) for r in j.recommendations] == [("ASR_0045", "EV_0001")]
    # the item's justification cites what its text names: the claim and the recommendation
    gen = Generator(compiled)
    inst = Instance("direct_effect", "DRG_0001", "OUT_0001", "POP_0001", None, (), ("DIS_0001",))
    gold = gen.gold.gold(inst, ["DRG_0001", "INT_0001"], ("DIS_0001",))
    (entry,) = [
        c for c in gold["justification"]["candidates"] if c["intervention_id"] == "INT_0001"
    ]
    assert entry["assertion_ids"] == ["ASR_0030", "ASR_0045"]
    assert "EV_0001" in entry["evidence_source_ids"] and "recommended for" in entry["summary"]
    # no: the same recommendation says nothing for a patient without hypertension
    other = judge.judge("INT_0001", "OUT_0001", "POP_0002", ("DIS_0002",))
    assert [w for _, w in other.weak] == [
        "not validated, putative, low certainty, no qualifying study or guideline "
        "recommendation supports it on major adverse cardiovascular events"
    ]


def test_a_recommendation_without_a_qualifying_class_is_not_cited(
    toy_copy: Path, tmp_path: Path
) -> None:
    # no: a guideline link with no class (or a class the domain does not count) is not a
    # recommendation of the candidate; the text stays "no qualifying ... recommendation"
    _add_recommendation(toy_copy, INDICATION, "ASR_0045,EV_0001,class_2b,C_LD")
    judge = _judge(_compile(toy_copy, tmp_path / "gen"))
    j = judge.judge("INT_0001", "OUT_0001", "POP_0001", ("DIS_0001",))
    ((_, why),) = j.weak
    assert "no qualifying study or guideline recommendation supports it on" in why
    assert "recommended for" not in why and j.recommendations == ()

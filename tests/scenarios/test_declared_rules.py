"""Scenario rules that used to be code or inference, declared in scenarios.yaml (issue 26).

On the small hand-made toy graph, each with its "no" case:
- `uncertainty`: the declared classes, levels, conflict and abstention settings decide
  `expects_uncertainty`; changing the declaration changes the answer;
- `indication_scopes`: "not indicated" comes only from a declared scope with its source, never
  from a missing indication edge;
- `stated_background`: a vignette states the findings an offered option's class depends on,
  and nothing is stated without a declaration;
- the gold cites the sources of every gold chain, not only the first;
- a bad declaration is one located message and exit 2, nothing written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.scenarios.evidence import NOT_INDICATED
from harness.scenarios.generator import Generator
from harness.scenarios.patterns import Instance
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "tests" / "fixtures" / "domains" / "toy"
HTN = ("DIS_0001",)


def _compile(domain_dir: Path, out: Path) -> CompiledDomain:
    compile_domain(domain_dir, out_root=out, force=True)
    return CompiledDomain.open(domain_dir.name, out)


@pytest.fixture
def toy_copy(tmp_path: Path) -> Path:
    root = tmp_path / "t" / "fixtures" / "domains" / "toy"
    shutil.copytree(TOY, root)
    (tmp_path / "spec").symlink_to(REPO / "spec")
    return root


def _edit(domain_dir: Path, name: str, old: str, new: str) -> None:
    path = domain_dir / name
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _append(domain_dir: Path, text: str) -> None:
    path = domain_dir / "scenarios.yaml"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _generator(domain_dir: Path, out: Path) -> Generator:
    return Generator(_compile(domain_dir, out))


UNCERTAINTY = """uncertainty:
  abstention: {abstention}
  class_order: [class_1, class_2a, class_2b]
  weak_classes: {classes}
  weak_levels: {levels}
  guideline_conflict: {conflict}
"""


def _uncertainty(
    abstention: str = "true", classes: str = "[class_2b]", levels: str = "[C, C_LD, C_EO]",
    conflict: str = "true",
) -> str:  # fmt: skip
    return UNCERTAINTY.format(
        abstention=abstention, classes=classes, levels=levels, conflict=conflict
    )


def _why(gen: Generator) -> list[str]:
    j = gen.judge.judge("DRG_0001", "OUT_0001", "POP_0001", HTN)
    assert j.qualified
    return gen.gold.uncertainty(j.claims)


# --- expects_uncertainty, by the declared rule -------------------------------------------------


def test_a_class_2b_best_is_uncertain_only_where_declared_weak(
    toy_copy: Path, tmp_path: Path
) -> None:
    _edit(
        toy_copy, "data/assertion_evidence.csv",
        "ASR_0023,EV_0001,class_1,A", "ASR_0023,EV_0001,class_2b,B_R",
    )  # fmt: skip
    _append(toy_copy, _uncertainty())
    assert _why(_generator(toy_copy, tmp_path / "a")) == ["best recommendation class_2b"]
    _edit(toy_copy, "scenarios.yaml", "weak_classes: [class_2b]", "weak_classes: []")
    assert _why(_generator(toy_copy, tmp_path / "b")) == []  # the "no" case: not declared weak


def test_level_c_only_is_uncertain_only_where_declared(toy_copy: Path, tmp_path: Path) -> None:
    _edit(
        toy_copy, "data/assertion_evidence.csv",
        "ASR_0023,EV_0001,class_1,A", "ASR_0023,EV_0001,class_1,C_EO",
    )  # fmt: skip
    _append(toy_copy, _uncertainty())
    assert _why(_generator(toy_copy, tmp_path / "a")) == ["weak levels only: C_EO"]
    _edit(toy_copy, "scenarios.yaml", "weak_levels: [C, C_LD, C_EO]", "weak_levels: [C]")
    assert _why(_generator(toy_copy, tmp_path / "b")) == []


def test_a_guideline_conflict_is_uncertain_only_where_declared(
    toy_copy: Path, tmp_path: Path
) -> None:
    links = toy_copy / "data" / "assertion_evidence.csv"
    links.write_text(
        links.read_text(encoding="utf-8") + "ASR_0023,EV_0007,class_2a,B_R\n", encoding="utf-8"
    )
    _append(toy_copy, _uncertainty())
    assert _why(_generator(toy_copy, tmp_path / "a")) == ["guidelines disagree: class_1, class_2a"]
    _edit(toy_copy, "scenarios.yaml", "guideline_conflict: true", "guideline_conflict: false")
    assert _why(_generator(toy_copy, tmp_path / "b")) == []


def test_a_sure_answer_expects_no_uncertainty_and_abstention_follows_the_declaration(
    toy_copy: Path, tmp_path: Path
) -> None:
    abstain = Instance("incomplete_evidence", None, "OUT_0001", "POP_0001", None, (), HTN)
    sure = Instance("direct_effect", "DRG_0001", "OUT_0001", "POP_0001", None, (), HTN)
    _append(toy_copy, _uncertainty())
    gen = _generator(toy_copy, tmp_path / "a")
    assert _why(gen) == []  # class 1, level A, one guideline: no
    assert gen.gold.gold(sure, ["DRG_0001", "DRG_0003"], HTN)["expects_uncertainty"] is False
    assert gen.gold.gold(abstain, ["DRG_0003"], HTN)["expects_uncertainty"] is True
    _edit(toy_copy, "scenarios.yaml", "abstention: true", "abstention: false")
    gen = _generator(toy_copy, tmp_path / "b")
    assert gen.gold.gold(abstain, ["DRG_0003"], HTN)["expects_uncertainty"] is False


# --- "not indicated" only from a declared scope ---------------------------------------------


def test_not_indicated_comes_only_from_a_declared_scope(toy_copy: Path, tmp_path: Path) -> None:
    gen = _generator(toy_copy, tmp_path / "a")  # the toy declares metoprolol's scope
    j = gen.judge.judge("DRG_0003", "OUT_0001", "POP_0001", HTN)
    assert (j.basis, j.indications, j.known) == (NOT_INDICATED, ("DIS_0002",), True)
    inst = Instance("direct_effect", "DRG_0001", "OUT_0001", "POP_0001", None, (), HTN)
    verdict = gen.gold.gold(inst, ["DRG_0001", "DRG_0003"], HTN)["justification"]["candidates"][1]
    assert verdict["reason"] == NOT_INDICATED and verdict["evidence_source_ids"] == ["EV_0007"]
    # with coronary disease listed it is indicated: no "not indicated"
    assert not gen.judge.judge("DRG_0003", "OUT_0001", "POP_0001", ("DIS_0001", "DIS_0002")).known
    # the same graph, the same single indication edge, no declared scope: silence, not evidence
    scope = (toy_copy / "scenarios.yaml").read_text(encoding="utf-8")
    start = scope.index("indication_scopes:")
    end = scope.index("populations:", start)
    (toy_copy / "scenarios.yaml").write_text(scope[:start] + scope[end:], encoding="utf-8")
    gen = _generator(toy_copy, tmp_path / "b")
    assert gen.kg.claims("DRG_0003", ("therapeutic",))  # the edge is still there
    j = gen.judge.judge("DRG_0003", "OUT_0001", "POP_0001", HTN)
    assert (j.basis, j.known) == ("", False)
    for r in gen.generate():  # and so it is never offered to a hypertensive patient
        offered = {c["intervention_id"] for c in r["candidates"]}
        assert "DRG_0003" not in offered or "DIS_0002" in r["patient"]["condition_ids"]


# --- vignettes state what the answer depends on ----------------------------------------------

BACKGROUND = """stated_background:
  - options: [DRG_0003]
    finding: DIS_0002
    absent: "{Pronoun} has no coronary artery disease."
    evidence_id: EV_0007
    note: Toy metoprolol's class depends on coronary disease (test fixture).
"""


def test_an_option_whose_class_depends_on_a_finding_has_it_stated(
    toy_copy: Path, tmp_path: Path
) -> None:
    plain = _generator(toy_copy, tmp_path / "a").generate()
    assert not any("coronary artery disease." in r["patient"]["narrative"] for r in plain)
    _append(toy_copy, BACKGROUND)
    stated = _generator(toy_copy, tmp_path / "b").generate()
    seen = 0
    for r in stated:
        text = r["patient"]["narrative"]
        offered = {c["intervention_id"] for c in r["candidates"]}
        has = "DIS_0002" in r["patient"]["condition_ids"]
        pronoun = "She" if r["patient"].get("sex") == "female" else "He"
        absent = f"{pronoun} has no coronary artery disease."
        if "DRG_0003" in offered and not has:
            assert absent in text, text
            seen += 1
        else:  # present: named with her conditions; not offered: nothing is invented
            assert "has no coronary artery disease" not in text, text
        if "DRG_0003" in offered and has:
            assert "coronary artery disease" in text
    assert seen, "no item offers metoprolol to a patient without coronary disease"


def test_wording_states_each_absent_finding_once(toy_copy: Path, tmp_path: Path) -> None:
    _append(toy_copy, BACKGROUND)
    _append(
        toy_copy, BACKGROUND.replace("stated_background:\n", "").replace("DRG_0003", "DRG_0002")
    )
    gen = _generator(toy_copy, tmp_path / "a")
    assert gen.wording.stated_background(["DRG_0002", "DRG_0003"], HTN) == [
        "{Pronoun} has no coronary artery disease."
    ]
    assert gen.wording.stated_background(["DRG_0003"], ("DIS_0002",)) == []
    assert gen.wording.stated_background(["DRG_0001"], HTN) == []


# --- the gold cites every gold chain's sources ------------------------------------------------


def test_the_gold_cites_the_sources_of_every_chain(toy_copy: Path, tmp_path: Path) -> None:
    links = toy_copy / "data" / "assertion_evidence.csv"  # a guideline behind remodelling only
    links.write_text(links.read_text(encoding="utf-8") + "ASR_0042,EV_0007,,\n", encoding="utf-8")
    gen = _generator(toy_copy, tmp_path / "a")
    through_bp = ("ASR_0001", "ASR_0003", "ASR_0004", "ASR_0005")
    inst = Instance(
        "direct_effect", "DRG_0001", "OUT_0001", "POP_0001",
        gen.finder.chain_of(through_bp), through_bp, HTN,
    )  # fmt: skip
    gold = gen.gold.gold(inst, ["DRG_0001", "DRG_0003"], HTN)
    assert ["ASR_0001", "ASR_0003", "ASR_0042", "ASR_0043"] in gold["causal_paths"]
    assert not any("EV_0007" in gen.kg.supports.get(a, ()) for a in through_bp)
    assert "EV_0007" in gold["evidence_source_ids"]  # from the second chain, not the first


# --- bad declarations ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (BACKGROUND.replace("[DRG_0003]", "[DRG_0099]"), "options", "DRG_0099"),
        (BACKGROUND.replace("[DRG_0003]", "[DIS_0001]"), "options", "not an intervention"),
        (BACKGROUND.replace("finding: DIS_0002", "finding: DIS_0099"), "finding", "DIS_0099"),
        (BACKGROUND.replace("{Pronoun} has", "{Pronon} has"), "absent", "Pronon"),
        (BACKGROUND.replace("evidence_id: EV_0007", "evidence_id: EV_0099"), "evidence_id", "EV_0099"),
        (_uncertainty(classes="[class_4]"), "weak_classes", "class_4"),
    ],
    ids=["unknown option", "not an option", "unknown finding", "bad template",
         "unknown source", "unknown class"],
)  # fmt: skip
def test_a_bad_declaration_is_one_located_message_and_exit_2(
    toy_copy: Path, tmp_path: Path, text: str, field: str, message: str
) -> None:
    from kgbench.cli import app

    _append(toy_copy, text)
    out = tmp_path / "gen"
    result = CliRunner().invoke(app, ["compile", "-d", str(toy_copy), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, result.output
    assert "scenarios.yaml, line" in errors[0] and f"field '{field}'" in errors[0], errors
    assert message in errors[0], errors
    assert not (out / "toy").exists()  # nothing written


def test_a_scope_leaving_out_an_indication_edge_is_an_error(toy_copy: Path, tmp_path: Path) -> None:
    _edit(toy_copy, "scenarios.yaml", "indicated_for: [DIS_0002]", "indicated_for: [DIS_0001]")
    with pytest.raises(UserError) as exc:
        compile_domain(toy_copy, out_root=tmp_path / "gen", force=True)
    text = str(exc.value)
    assert "the graph says DRG_0003 is indicated for DIS_0002, which the scope leaves out" in text
    assert "scenarios.yaml" in text and "indicated_for" in text

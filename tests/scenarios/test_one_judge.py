"""Issue 29 item 3 and issue 28 item 4: one judge at every gate.

`check-scenarios`, `publish`, `audit` and `explain` ask one judgement
(`harness.scenarios.audit.ItemJudge`), so they give one verdict on an item, hand-written or
generated. Regression of the 2026-12 reliability review's high case ck.null-result-gold: a
hand-written gold answer that the graph's own null result blocks (metoprolol succinate for
MACE where ASR_0319 says beta-blockers have no effect on it) was "valid" for check-scenarios
and published; only audit noticed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.compiled import CompiledDomain
from harness.release.publish import publish_release
from harness.review.explain import as_text, explain
from harness.scenarios.audit import UNCHANGED, WRONG_ANSWER, ItemJudge, audit
from harness.scenarios.kg import KnowledgeGraph
from harness.scenarios.validation import check_file, validate_records
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
SCN_0001 = REPO / "tests" / "fixtures" / "scenarios" / "cardio_scn_0001.jsonl"


def hand_written() -> dict[str, Any]:
    """The paper's walk-through as a curator writes it: no machine justification."""
    record = json.loads(SCN_0001.read_text(encoding="utf-8").splitlines()[0])
    del record["gold"]["justification"]
    return record


def null_result_gold() -> dict[str, Any]:
    """ck.null-result-gold: metoprolol succinate as the answer for MACE in adults with chronic
    coronary disease (POP_0012), where the graph holds ASR_0319 (HAS_NO_EFFECT_ON MACE), with a
    consistent chain from it to the target."""
    record = hand_written()
    record["population_id"] = "POP_0012"
    gold = record["gold"]
    gold.update(
        preferred_intervention="DRG_0006",
        acceptable_interventions=["DRG_0006"],
        causal_path_assertion_ids=["ASR_0005", "ASR_0023", "ASR_0066", "ASR_0013"],
        outcome_assertion_ids=[],
        adverse_effect_assertion_ids=[],
        evidence_source_ids=[],
    )
    return record


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_gold_the_null_result_blocks_fails_check_scenarios(cardio, cli, tmp_path) -> None:
    path = write(tmp_path / "null.jsonl", [null_result_gold()])
    with pytest.raises(UserError) as err:
        check_file(cardio, path)
    message = str(err.value)
    assert "field 'gold.preferred_intervention'" in message
    assert "'DRG_0006' is not qualified for this patient (null evidence: ASR_0319)" in message
    result = CliRunner().invoke(cli, ["check-scenarios", str(path), "-d", "cardio"])
    assert result.exit_code == 2 and "ASR_0319" in result.output


def test_publish_refuses_a_blocked_gold_and_writes_nothing(compiled_copy, tmp_path) -> None:
    staged = compiled_copy("cardio")
    path = write(tmp_path / "null.jsonl", [null_result_gold()])
    with pytest.raises(UserError, match="null evidence: ASR_0319"):
        publish_release(staged, "3.0.0", path)
    assert not (staged.root / "gold" / "3.0.0").exists()


def test_the_hand_written_walkthrough_passes_every_gate(cardio, tmp_path) -> None:
    record = hand_written()
    path = write(tmp_path / "hand.jsonl", [record])
    assert check_file(cardio, path) == [record]
    assert audit(cardio, [record])[0].outcome == UNCHANGED
    kg = KnowledgeGraph(cardio)
    text = as_text(kg, explain(kg, record))
    assert "Rules: unknown" not in text
    assert "Rules: evidence-anchored" in text and "computed now" in text
    assert "Judged now: the current rules and graph give this gold" in text
    assert "  - Lisinopril: preferred (outcome evidence)" in text
    assert "  - Metoprolol succinate: excluded (evidence gap)" in text


def variants() -> list[tuple[str, dict[str, Any]]]:
    """Hand-made items whose gold is right or wrong by the evidence, and which way."""
    out = [("walk-through", hand_written()), ("null result", null_result_gold())]
    dash = hand_written()  # the DASH diet (no qualifying outcome claim) made the answer
    dash["gold"].update(
        preferred_intervention="INT_0001",
        acceptable_interventions=["INT_0001"],
        causal_path_assertion_ids=[],
        outcome_assertion_ids=[],
        adverse_effect_assertion_ids=[],
        evidence_source_ids=[],
    )
    out.append(("no outcome evidence", dash))
    abstain = hand_written()  # abstaining where lisinopril qualifies
    abstain["gold"].update(
        preferred_intervention=None,
        acceptable_interventions=[],
        causal_path_assertion_ids=[],
        outcome_assertion_ids=[],
        adverse_effect_assertion_ids=[],
        evidence_source_ids=[],
        expects_uncertainty=True,
    )
    out.append(("abstain where one qualifies", abstain))
    return out


@pytest.mark.parametrize(("name", "record"), variants(), ids=[n for n, _ in variants()])
def test_check_scenarios_audit_and_explain_agree(cardio, name, record) -> None:
    judge = ItemJudge(cardio)
    item = judge.item(record)
    refused = [
        str(p)
        for p in validate_records(cardio, [(1, record)], "hand.jsonl", judge)
        if "gold.preferred_intervention" in str(p)
    ]
    text = as_text(judge.kg, explain(judge.kg, record, judge))
    if name == "walk-through":
        assert item.outcome == UNCHANGED and not refused
        assert "check-scenarios accepts it" in text
    else:
        assert item.outcome in WRONG_ANSWER
        assert refused and judge.problem(item) in refused[0]
        assert f"Judged now: {item.outcome}: {judge.problem(item)}" in text


def test_every_generated_item_is_accepted_by_every_gate(cardio: CompiledDomain) -> None:
    records = [json.loads(x) for x in cardio.read("scenarios/scenarios.jsonl").splitlines()]
    judge = ItemJudge(cardio)
    assert [judge.item(r).outcome for r in records] == [UNCHANGED] * len(records)
    numbered = list(enumerate(records, 1))
    assert validate_records(cardio, numbered, "<generated>", judge) == []


def test_explain_reads_a_run_folder_and_a_release_folder(cli, cardio, tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    write(run / "scenarios.jsonl", [hand_written()])
    result = CliRunner().invoke(
        cli, ["explain", "SCN_0001", "-d", "cardio", "--scenarios", str(run)]
    )
    assert result.exit_code == 0, result.output
    assert "Rules: unknown" not in result.output and "Lisinopril: preferred" in result.output
    release = cardio.root / "gold" / "2.0.0"
    first = json.loads((release / "scenarios.jsonl").read_text().splitlines()[0])
    result = CliRunner().invoke(
        cli, ["explain", first["scenario_id"], "-d", "cardio", "--scenarios", str(release)]
    )
    assert result.exit_code == 0, result.output
    assert "Judged now:" in result.output


def test_a_hand_written_patient_with_exclusive_findings_is_refused(tmp_path) -> None:
    """Issue 29 item 7: findings a domain declares mutually exclusive (`incompatible_with`:
    afib's severe renal impairment CTI_0005 and CTI_0012) never meet in one patient, generated
    (the generator skips the instance) or hand-written (check-scenarios refuses it)."""
    afib = CompiledDomain.open("afib")
    record = json.loads(afib.read("scenarios/scenarios.jsonl").splitlines()[0])
    assert check_file(afib, write(tmp_path / "ok.jsonl", [record])) == [record]
    record["patient"]["condition_ids"] += ["CTI_0005", "CTI_0012"]
    problems = [str(p) for p in validate_records(afib, [(1, record)], "hand.jsonl")]
    assert any(
        "CTI_0005 excludes CTI_0012 (incompatible_with in the domain's entity_profiles)" in p
        for p in problems
    ), problems

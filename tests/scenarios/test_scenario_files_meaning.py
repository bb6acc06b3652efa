"""Hand-written scenario records that parse but mean something this kgbench must not accept
silently (reliability review 2026-12: ck.future-version, ck.pick-with-flag,
ex.unknown-candidate): check-scenarios and explain answer each with one located `error:`
and exit 2; the "no" cases beside them (older versions, a pick with the flag, an added known
candidate) still pass."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kgbench.cli import app

REPO = Path(__file__).resolve().parents[2]
CARDIO_SET = REPO / "generated" / "cardio" / "scenarios" / "scenarios.jsonl"


def cli(*args: str | Path) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    return result.exit_code, errors, result.output


def _records() -> list[dict]:
    return [json.loads(ln) for ln in CARDIO_SET.read_text(encoding="utf-8").splitlines()]


def _write(tmp_path: Path, record: dict) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def test_ck_future_version_a_newer_schema_version_is_refused(tmp_path: Path) -> None:
    record = _records()[0]
    current = record["schema_version"]
    record["schema_version"] = "9.0.0"
    code, errors, output = cli("check-scenarios", _write(tmp_path, record), "--domain", "cardio")
    assert code == 2, output
    assert len(errors) == 1 and "line 1" in errors[0] and "field 'schema_version'" in errors[0]
    assert f"newer than the scenario schema this kgbench reads ({current})" in errors[0]
    record["schema_version"] = "9" * 5000 + ".0.0"  # no int() of it: still one message
    code, errors, output = cli("check-scenarios", _write(tmp_path, record), "--domain", "cardio")
    assert code == 2 and len(errors) == 1 and "newer than" in errors[0], output


def test_ck_future_version_the_current_and_older_versions_pass(tmp_path: Path) -> None:
    record = _records()[0]
    code, _, output = cli("check-scenarios", _write(tmp_path, record), "--domain", "cardio")
    assert code == 0, output
    major, minor, patch = record["schema_version"].split(".")
    record["schema_version"] = f"{major}.{minor}.{int(patch) + 1}"
    code, errors, _ = cli("check-scenarios", _write(tmp_path, record), "--domain", "cardio")
    assert code == 2 and "newer than" in errors[0]  # a newer patch is newer too


def test_ck_pick_with_flag_an_abstention_turned_into_a_pick_is_refused(tmp_path: Path) -> None:
    """An abstention item (nothing qualifies: preferred null, expects_uncertainty) given a
    pick of one of its candidates, which no outcome evidence supports for this patient."""
    record = next(r for r in _records() if r["gold"]["preferred_intervention"] is None)
    assert record["gold"]["expects_uncertainty"] is True
    pick = record["candidates"][0]["intervention_id"]
    record["gold"]["preferred_intervention"] = pick
    record["gold"]["acceptable_interventions"] = [pick]
    code, errors, output = cli("check-scenarios", _write(tmp_path, record), "--domain", "cardio")
    assert code == 2, output
    assert any(
        "field 'gold.preferred_intervention'" in e and "the answer is to abstain" in e
        for e in errors
    ), errors


def test_ex_unknown_candidate_explain_names_it(tmp_path: Path) -> None:
    record = _records()[0]
    record["candidates"].append({"intervention_id": "DRG_9999", "label": "Mystery"})
    path = _write(tmp_path, record)
    sid = record["scenario_id"]
    code, errors, output = cli("explain", sid, "--domain", "cardio", "--scenarios", path)
    assert code == 2, output
    index = len(record["candidates"]) - 1
    assert errors == [
        f"error: scenario {sid}, field 'candidates[{index}].intervention_id': unknown "
        "intervention 'DRG_9999'; `kgbench check-scenarios` lists every problem of the file"
    ]
    assert "Traceback" not in output


def test_ex_a_known_candidate_added_by_hand_is_judged_and_shown(tmp_path: Path) -> None:
    """The item's stored justification does not cover the added candidate: explain judges
    the item now instead of leaving the candidate out."""
    records = _records()
    record = records[0]
    offered = {c["intervention_id"] for c in record["candidates"]}
    other = next(c for r in records for c in r["candidates"] if c["intervention_id"] not in offered)
    record["candidates"].append(other)
    path = _write(tmp_path, record)
    code, _, output = cli(
        "explain", record["scenario_id"], "--domain", "cardio", "--scenarios", path
    )
    assert code == 0, output
    shown = [ln for ln in output.splitlines() if ln.startswith("  - ")]
    assert len(shown) == len(record["candidates"])


def test_a_record_lacking_a_field_is_one_message_for_audit_and_explain(tmp_path: Path) -> None:
    """Found by `make fuzz` (2026-12-05, the audit target): a record whose "category" key was
    damaged, or whose gold is not an object, was a KeyError / AttributeError traceback."""
    line = CARDIO_SET.read_text(encoding="utf-8").split("\n", 1)[0]
    damaged = tmp_path / "damaged.jsonl"
    record = json.loads(line)
    record["gold"] = [1]
    for text, cause in (
        (line.replace('"category":', '",category":', 1), "KeyError: 'category'"),
        (json.dumps(record), "AttributeError"),
    ):
        damaged.write_text(text + "\n", encoding="utf-8")
        for args in (
            ["audit", "--domain", "cardio", "--scenarios", damaged],
            ["explain", "SCN_0001", "--domain", "cardio", "--scenarios", damaged],
        ):
            code, errors, output = cli(*args)
            assert code == 2 and "Traceback" not in output, output
            assert len(errors) == 1 and "scenario 'SCN_0001' lacks or mistypes" in errors[0]
            assert cause in errors[0] and "kgbench check-scenarios" in errors[0]

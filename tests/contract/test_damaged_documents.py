"""A damaged compiled document is the contract's one message, never a traceback (reliability
review 2026-12: ct.kg-truncated, ct.kg-empty, ct.kg-bigint, ct.kg-deep, ct.kg-non-utf8,
ct.kg-is-dir, ct.rules-edit): kg.json is now read by `contract.read_json` (the kernel's reader
of untrusted text), not by `json.loads` directly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.compiled import CompiledDomain
from kgbench import contract
from kgbench.cli import app

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def compiled_copy(tmp_path: Path) -> Path:
    """A private copy of the example domain's compile; commands are given its folder."""
    root = tmp_path / "generated" / "cardio"
    shutil.copytree(REPO / "generated" / "cardio", root, ignore=shutil.ignore_patterns("gold"))
    return root


def _damage(path: Path, case: str) -> None:
    data = path.read_bytes()
    if case == "ct.kg-truncated":
        path.write_bytes(data[: len(data) // 2])
    elif case == "ct.kg-empty":
        path.write_bytes(b"")
    elif case == "ct.kg-bigint":
        path.write_bytes(data.replace(b'"entities":', b'"x": ' + b"9" * 5000 + b', "entities":', 1))
    elif case == "ct.kg-deep":
        path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    elif case == "ct.kg-non-utf8":
        path.write_bytes(data[:1000] + b"\xef\xff" + data[1000:])
    elif case == "ct.kg-is-dir":
        path.unlink()
        path.mkdir()


CASES = [
    "ct.kg-truncated",
    "ct.kg-empty",
    "ct.kg-bigint",
    "ct.kg-deep",
    "ct.kg-non-utf8",
    "ct.kg-is-dir",
]


@pytest.mark.parametrize("case", CASES)
def test_a_damaged_kg_json_is_one_message(compiled_copy: Path, case: str) -> None:
    _damage(compiled_copy / "kg.json", case)
    domain = CompiledDomain.open("cardio", compiled_copy.parent)
    with pytest.raises(contract.IncompatibleArtifact) as err:
        _ = domain.graph
    message = str(err.value)
    assert message.startswith(str(compiled_copy / "kg.json")) or "kg.json" in message
    assert "run `make compile DOMAIN=cardio`" in message


@pytest.mark.parametrize("case", ["ct.kg-truncated", "ct.kg-deep"])
def test_explain_on_a_damaged_kg_json_exits_2(compiled_copy: Path, case: str) -> None:
    _damage(compiled_copy / "kg.json", case)
    result = CliRunner().invoke(app, ["explain", "SCN_0001", "--domain", str(compiled_copy)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "kg.json" in result.output and "make compile DOMAIN=cardio" in result.output


def test_ct_rules_edit_a_hand_edited_rule_is_one_message(compiled_copy: Path) -> None:
    path = compiled_copy / "scenario_rules.json"
    data = json.loads(path.read_text())
    data["rules"]["per_category"] = "ten"
    path.write_text(json.dumps(data))
    out = compiled_copy.parent.parent / "s.jsonl"
    result = CliRunner().invoke(
        app, ["generate", "--domain", str(compiled_copy), "--out", str(out)]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "scenario_rules.json" in result.output and "make compile DOMAIN=cardio" in result.output
    assert not out.exists()

"""One version field name for harness-written documents (issue 32 item 3).

Each renamed document gets its hand-made cases: the current document (`format_version`) reads,
an older one (the legacy `schema_version`) still reads, and an unknown major version is one
located message (a UserError naming the file), never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.evaluation.stats import build_panel
from harness.runfolder import RunFolder
from kgbench import contract
from kgbench.contract import Context, IncompatibleArtifact, Metric, ScoredPanel
from kgbench.errors import UserError

MINI_RUN = Path(__file__).resolve().parents[1] / "evaluation" / "fixtures" / "mini_run"
FIXTURE_CONTEXT = MINI_RUN / "contexts" / "SCN_0001" / "C2.json"

ACC = Metric(
    name="acc",
    title="Accuracy",
    kind="boolean_match",
    response_field="x",
    gold_field="y",
    defined_when="always",
    higher_is_better=True,
    binary=True,
)


def _context(**version: str) -> dict:
    """The fixture context (a real extraction) with its version field replaced by `version`."""
    data = json.loads(FIXTURE_CONTEXT.read_text())
    data.pop("format_version", None)
    data.pop("schema_version", None)
    return {**version, **data}


# A context as format 1.1.0 wrote it: the same content under the old field name (the rename
# to format_version 2.0.0 changed nothing else).
OLD_CONTEXT_DATA = _context(schema_version="1.1.0")
OLD_CONTEXT = FIXTURE_CONTEXT  # the path errors name


def test_every_harness_written_document_names_its_version_format_version() -> None:
    """Only the compiled manifest and the response record keep their own names."""
    from kgbench.contract import DOCUMENTS

    names = {m.__name__: m.VERSION_FIELD for m in DOCUMENTS}
    assert names.pop("Manifest") == "manifest_version"
    assert names.pop("ResponseRecord") == "record_version"
    assert set(names.values()) == {"format_version"}


def test_an_old_context_with_schema_version_still_reads() -> None:
    data = OLD_CONTEXT_DATA
    assert data["schema_version"].startswith("1.") and "format_version" not in data
    parsed = contract.parse(Context, data, OLD_CONTEXT)
    assert parsed.format_version == data["schema_version"]


def test_a_new_context_reads_and_dumps_format_version_only() -> None:
    parsed = contract.parse(Context, _context(format_version=Context.FORMAT), OLD_CONTEXT)
    dumped = parsed.model_dump()
    assert dumped["format_version"] == Context.FORMAT and "schema_version" not in dumped


@pytest.mark.parametrize(
    "version",
    [
        {"format_version": "3.0.0"},  # an unknown major
        {"format_version": "1.1.0"},  # the old major under the new name: never written
        {"schema_version": "2.0.0"},  # the new major under the old name: never written
        {},  # no version at all
    ],
)
def test_a_context_of_an_unknown_version_is_one_located_error(version: dict) -> None:
    with pytest.raises(IncompatibleArtifact, match="incompatible kgbench") as caught:
        contract.parse(Context, _context(**version), OLD_CONTEXT, remedy="extract again")
    assert caught.value.location is not None and "C2.json" in str(caught.value.location)


def test_a_run_folder_reads_an_old_context(tmp_path: Path) -> None:
    target = tmp_path / "contexts" / "SCN_0001" / "C2.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(OLD_CONTEXT_DATA))
    assert RunFolder(tmp_path).context("SCN_0001", "C2")["scenario_id"] == "SCN_0001"


def _panel() -> dict:
    item = {
        "scenario_id": "S1",
        "condition": "C2",
        "replicate": 0,
        "status": "scored",
        "category": "c",
        "parse_ok": True,
        "schema_ok": True,
        "unknown_ids": [],
        "scores": {"acc": 1.0},
    }
    return build_panel([item], [ACC], ["C2"], pairs=[], bootstrap=10)


def test_a_panel_is_written_with_format_version_and_keeps_its_contract() -> None:
    panel = _panel()
    assert panel["format_version"] == ScoredPanel.FORMAT and "schema_version" not in panel
    ScoredPanel.model_validate(panel)


def _write_panel(run: Path, panel: dict) -> Path:
    path = run / "scores" / "m" / "panel.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(panel))
    return path


def test_an_old_panel_with_schema_version_still_reads(tmp_path: Path) -> None:
    panel = _panel()
    old = {"schema_version": "1.2.0", **{k: v for k, v in panel.items() if k != "format_version"}}
    _write_panel(tmp_path, old)
    (read,) = RunFolder(tmp_path).panels()
    assert read["schema_version"] == "1.2.0" and read["overall"] == panel["overall"]
    assert ScoredPanel.model_validate(old).format_version == "1.2.0"


@pytest.mark.parametrize("version", [{"format_version": "9.0.0"}, {"schema_version": "2.0.0"}, {}])
def test_a_panel_of_an_unknown_version_is_one_located_error(tmp_path: Path, version: dict) -> None:
    panel = {k: v for k, v in _panel().items() if k != "format_version"}
    path = _write_panel(tmp_path, {**version, **panel})
    with pytest.raises(UserError, match=r"incompatible kgbench.*kgbench score") as caught:
        RunFolder(tmp_path).panels()
    assert str(caught.value.location).startswith(contract._shown(path))


# Versions that stay where they are, each for its reason (the brief's scope of issue 32 item 3);
# the gold rules' RULES_VERSION ("evidence-anchored 2.0") is a rules name, not a format.
KEPT_OUTSIDE = {
    "harness/gold_layout.py": "RELEASE_FORMAT",  # inside published gold releases: unchanged
    "harness/release/index.py": "INDEX_FORMAT",  # inside published gold releases: unchanged
}


def test_no_harness_module_declares_a_document_format_of_its_own() -> None:
    """A literal version constant under harness/ is a format kept outside the contract; the
    one scoring-API version is kgbench.scoring.API_VERSION."""
    import re

    root = Path(__file__).resolve().parents[2]
    literal = re.compile(r'^([A-Z_]*(?:FORMAT|VERSION)[A-Z_]*) = "\d', re.MULTILINE)
    found = {
        str(p.relative_to(root)): m.group(1)
        for p in sorted((root / "harness").rglob("*.py"))
        for m in literal.finditer(p.read_text())
    }
    assert found == KEPT_OUTSIDE
    planted = 'SUMMARY_FORMAT = "1.0.0"\n'  # the no case: what harness/verify/agent.py had
    assert literal.search(planted) is not None


def test_kgbench_report_on_a_panel_of_an_unknown_version_exits_2_with_one_message(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from kgbench.cli import app

    panel = {k: v for k, v in _panel().items() if k != "format_version"}
    _write_panel(tmp_path, {"format_version": "9.0.0", **panel})
    result = CliRunner().invoke(app, ["report", "--run-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output
    assert "panel.json" in errors[0] and "format 9.0.0" in errors[0]

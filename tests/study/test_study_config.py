"""Bad study files: one message naming the file, line and field, exit code 2, nothing run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgbench.cli import app
from kgbench.cli.study import load_study

BASE = """name: bad
domain: cardio
release:
  path: {release}
conditions: [C1, C4]
replicates: 1
models:
  - name: a
    kind: reference
    responder: oracle
  - name: b
    kind: reference
    responder: ungrounded
"""

# (what to replace, with what, line, field, words the message must hold)
CASES = [
    ("    kind: reference\n    responder: ungrounded", "    kind: llama\n    responder: ungrounded",
     12, "kind", "expected one of openai, compatible, reference; got 'llama'"),
    ("  - name: b", "  - name: A", 11, "name", "duplicate model name 'A' (first declared on line 8)"),
    ("    responder: ungrounded", "    responder: ungrounded\n    price: {input: 1, output: 2}",
     14, "price", "'price' conflicts with kind reference of model 'b': reference responders are free"),
    ("    responder: ungrounded", "    responder: noisy-oracle", 13, "responder",
     "a noisy-oracle responder needs its declared error_rate"),
    ("    responder: ungrounded", "    responder: ungrounded\n    error_rate: 0.2", 14,
     "error_rate", "only a noisy-oracle has a declared error rate"),
    ("    responder: ungrounded", "    responder: oracle\n    transport: in_process\n    batch: true",
     15, "batch", "'batch' conflicts with transport in_process"),
    ("    kind: reference\n    responder: ungrounded",
     "    kind: openai\n    model: gpt-4o-mini\n    base_url: http://127.0.0.1:9/v1",
     14, "base_url", "use kind compatible for another server"),
    ("    kind: reference\n    responder: ungrounded", "    kind: compatible\n    model: m",
     12, "kind", "a model of kind compatible needs 'base_url'"),
    ("conditions: [C1, C4]", "conditions: [C1, C9]", 5, "conditions", "unknown condition 'C9'"),
    ("conditions: [C1, C4]", "conditions: [C1, C1]", 5, "conditions", "listed twice"),
    ("conditions: [C1, C4]", "conditions: [C1, C5]", 5, "conditions",
     "condition 'C5' is verify-and-revise (a multi-step agent): studies do not run it"),
    ("domain: cardio", "domain: afib", 2, "domain", "declared for domain 'afib'"),
    ("replicates: 1", "replicate: 3", 6, "replicate", "unknown field 'replicate'"),
    ("replicates: 1", "replicates: 0", 6, "replicates", "0 is less than the minimum of 1"),
    ("  path: {release}", "  path: {release}\n  digest: sha256:" + "0" * 64, 4, "path",
     "the release digest is sha256:"),
    ("  path: {release}", "  version: 9.9.9", 4, "version", "has no release 9.9.9"),
    ("  path: {release}", "  version: 1.0.1", 4, "version",
     "was published from cardio 1.0.0, but the compiled domain is 2.0.0"),
    ("  - name: b", "  - name: b\n    temperature: 3", 12, "temperature",
     "3 is greater than the maximum of 2"),
]  # fmt: skip


def invoke(config: Path, run_dir: Path):
    return CliRunner().invoke(
        app,
        ["study", "--domain", "cardio", "--config", str(config), "--run-dir", str(run_dir)],
    )


@pytest.mark.parametrize(("old", "new", "line", "field", "words"), CASES)
def test_bad_study_file(tmp_path, release, old, new, line, field, words) -> None:
    text = BASE.replace(old, new).replace("{release}", str(release))
    assert text != BASE.replace("{release}", str(release))
    config = tmp_path / "study.yaml"
    config.write_text(text)
    run_dir = tmp_path / "run"
    result = invoke(config, run_dir)
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert f"study.yaml, line {line}, field '{field}'" in lines[0], lines[0]
    assert words in lines[0], lines[0]
    assert "Traceback" not in result.output
    assert not run_dir.exists()  # nothing run, nothing written


def test_a_release_that_does_not_verify(tmp_path, release) -> None:
    tampered = tmp_path / "gold" / "2.0.0"
    shutil.copytree(release, tampered)
    data = (tampered / "scenarios.jsonl").read_bytes()
    (tampered / "scenarios.jsonl").write_bytes(data.replace(b"Lisinopril", b"Lisinoprill", 1))
    config = tmp_path / "study.yaml"
    config.write_text(BASE.format(release=tampered))
    result = invoke(config, tmp_path / "run")
    assert result.exit_code == 2
    message = result.output.strip()
    assert message.count("\n") == 0
    assert "study.yaml, line 4, field 'path'" in message
    assert "does not verify" in message and "sha256 mismatch" in message
    assert not (tmp_path / "run").exists()


def test_malformed_yaml_and_missing_file(tmp_path) -> None:
    config = tmp_path / "study.yaml"
    config.write_text("name: x\nmodels: [\n")
    result = invoke(config, tmp_path / "run")
    assert result.exit_code == 2 and "study.yaml, line" in result.output
    assert "malformed YAML" in result.output
    result = invoke(tmp_path / "absent.yaml", tmp_path / "run")
    assert result.exit_code == 2 and "absent.yaml: file not found" in result.output


def test_a_valid_study_resolves_models_and_overrides(write_study) -> None:
    text = None
    path = write_study(
        text,
        models=[
            ("oracle", "oracle", None, None),
            ("noisy", "noisy-oracle", 0.25, 9),
            ("guess", "ungrounded", None, None),
        ],
        replicates=3,
        transport="server",
    )
    study = load_study(path, "cardio")
    assert study.replicates == 3 and study.conditions == ("C1", "C2", "C3", "C4")
    assert [m.name for m in study.models] == ["oracle", "noisy", "guess"]
    noisy = study.model("noisy")
    assert noisy.spec == "openai:noisy-oracle-0.25" and noisy.via_study_server
    assert noisy.settings.seed == 9 and study.model("oracle").settings.seed == 100
    assert noisy.settings.replicates == 3 and noisy.settings.structured is True
    assert study.interaction_baseline == "C1" and study.holm_family == "study"
    assert study.release_version == "2.0.0" and len(study.sha256) == 64


def test_a_study_leaves_verify_conditions_out_by_default_and_says_so(write_study) -> None:
    text = write_study().read_text().replace("conditions: [C1, C2, C3, C4]\n", "")
    study = load_study(write_study(text), "cardio")
    assert study.conditions == ("C1", "C2", "C3", "C4") and study.excluded == ("C5",)
    listed = load_study(write_study(), "cardio")
    assert listed.excluded == ()


def test_the_bad_inputs_table_is_not_empty() -> None:
    assert len(CASES) >= 15


def test_a_study_runs_the_volume_matched_controls_only_when_it_lists_them(write_study) -> None:
    """Issue 27 item 6: C6 and C7 are optional, off by default, selectable by id."""
    text = write_study().read_text()
    default = load_study(write_study(text.replace("conditions: [C1, C2, C3, C4]\n", "")), "cardio")
    assert "C6" not in default.conditions and "C7" not in default.conditions
    listed = text.replace("conditions: [C1, C2, C3, C4]", "conditions: [C3, C4, C7]")
    assert load_study(write_study(listed), "cardio").conditions == ("C3", "C4", "C7")

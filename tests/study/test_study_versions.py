"""The study's documents name their version `format_version` (issue 32 item 3): study.json
(was `format`) and statistics.json (was `statistics_version`). An older one still reads; an
unknown major version is one located message naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.study.run import StudyPaths, claim
from kgbench import contract
from kgbench.contract import IncompatibleArtifact, StudyDescription, StudyStatistics
from kgbench.errors import UserError


def _claimed(tmp_path: Path, write_study) -> tuple[object, StudyPaths, dict]:
    from kgbench.cli.study import load_study

    config = load_study(write_study(), "cardio")
    paths = StudyPaths(tmp_path / "run")
    claim(config, paths)
    return config, paths, json.loads(paths.study_json.read_text())


def test_study_json_is_written_with_format_version(tmp_path, write_study) -> None:
    _, _, written = _claimed(tmp_path, write_study)
    assert written["format_version"] == StudyDescription.FORMAT and "format" not in written


def test_an_old_study_json_with_format_still_claims_its_folder(tmp_path, write_study) -> None:
    config, paths, written = _claimed(tmp_path, write_study)
    old = {"format": "1.0.0", **{k: v for k, v in written.items() if k != "format_version"}}
    paths.study_json.write_text(json.dumps(old))
    claim(config, paths)  # the same study, written by the kgbench before the rename


@pytest.mark.parametrize("version", [{"format_version": "9.0.0"}, {"format": "2.0.0"}, {}])
def test_a_study_json_of_an_unknown_version_is_one_located_error(
    tmp_path, write_study, version: dict
) -> None:
    config, paths, written = _claimed(tmp_path, write_study)
    body = {k: v for k, v in written.items() if k != "format_version"}
    paths.study_json.write_text(json.dumps({**version, **body}))
    with pytest.raises(UserError, match="incompatible kgbench") as caught:
        claim(config, paths)
    assert caught.value.location is not None and "study.json" in str(caught.value.location)


STATISTICS = {"settings": {"bootstrap": 10, "seed": 0}, "models": []}


def test_an_old_statistics_json_with_statistics_version_still_reads(tmp_path: Path) -> None:
    old = {"statistics_version": "1.0.0", **STATISTICS}
    read = contract.parse(StudyStatistics, old, tmp_path / "statistics.json")
    assert read.format_version == "1.0.0" and read.model_dump()["settings"]["seed"] == 0


@pytest.mark.parametrize(
    "version", [{"format_version": "3.0.0"}, {"statistics_version": "2.0.0"}, {}]
)
def test_a_statistics_json_of_an_unknown_version_is_one_located_error(
    tmp_path: Path, version: dict
) -> None:
    path = tmp_path / "statistics.json"
    with pytest.raises(IncompatibleArtifact, match="incompatible kgbench") as caught:
        contract.parse(StudyStatistics, {**version, **STATISTICS}, path, remedy="study again")
    assert "statistics.json" in str(caught.value.location)

"""`kgbench pilot --run-dir` replaces only a pilot's own folder, and deletes nothing before
the new pilot succeeded (issue 28 item 3: it used to `rmtree` whatever folder it was given,
a run folder holding paid model answers included)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgbench.cli import app
from kgbench.cli.pilot import PILOT_MARK, _set_aside
from kgbench.errors import UserError


def test_a_folder_no_pilot_made_is_refused_and_left_as_it_was(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    run = tmp_path / "paid-run"
    (run / "responses").mkdir(parents=True)
    (run / "responses" / "gpt.jsonl").write_text('{"answer": 1}\n')
    args = ["pilot", "--domain", "cardio", "--responder", "oracle", "--run-dir", str(run)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "holds files no pilot made" in errors[0]
    assert "-- compile" not in result.output  # refused before any step ran
    assert (run / "responses" / "gpt.jsonl").read_text() == '{"answer": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paid-run"]


def test_a_pilot_folder_is_set_aside_not_deleted(tmp_path: Path) -> None:
    run = tmp_path / "pilot"
    run.mkdir()
    (run / PILOT_MARK).write_text("")
    (run / "report.md").write_text("old")
    aside = _set_aside(run, tmp_path / "default")
    assert aside is not None and not run.exists()
    assert (aside / "report.md").read_text() == "old"  # kept until the new pilot succeeds
    # a pilot that failed left the new folder and the older one aside: the next pilot
    # replaces the older one with the failed one's
    run.mkdir()
    (run / PILOT_MARK).write_text("")
    assert _set_aside(run, tmp_path / "default") == aside and not (aside / "report.md").exists()


def test_the_default_folder_of_an_older_pilot_is_replaced_and_an_empty_one_is_used(
    tmp_path: Path,
) -> None:
    default = tmp_path / "pilot-cardio"
    default.mkdir()
    (default / "report.md").write_text("older pilot, no mark")
    assert _set_aside(default, default) is not None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _set_aside(empty, default) is not None and not empty.exists()
    assert _set_aside(tmp_path / "absent", default) is None


def test_a_run_dir_that_is_a_file_is_one_message(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(UserError, match="is a file"):
        _set_aside(path, tmp_path / "default")

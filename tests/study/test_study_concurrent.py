"""Two studies on one run folder at once (reliability review 2026-12, conc.study): the second
is refused at once by the study's lock, exit 2, with one message saying another study runs
there, and nothing changed. It used to fail later, on the first one's busy server port, with
a remedy (delete study/server.json and the reference models' answers) that would have
destroyed the running study's answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from kgbench.cli import app

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(120)
"""


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_conc_study_a_second_study_on_the_same_folder_is_refused(tmp_path, write_study) -> None:
    config = write_study()
    run_dir = tmp_path / "run"
    lock = run_dir / "study" / ".study.lock"
    lock.parent.mkdir(parents=True)
    # another process runs a study there: it holds the study's lock (a kernel flock)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        args = ["study", "--domain", "cardio", "--config", str(config), "--run-dir", str(run_dir)]
        result = CliRunner().invoke(app, args)
    finally:
        holder.kill()
        holder.wait(10)
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output
    assert f"another `kgbench study` is running on {run_dir}" in errors[0]
    assert "server.json" not in errors[0]  # no remedy that deletes answers
    assert _files(run_dir) == ["study/.study.lock"]  # nothing claimed, prepared or started


def test_a_folder_that_is_not_a_study_gets_no_lock_file(tmp_path, write_study) -> None:
    config = write_study()
    run_dir = tmp_path / "mine"
    run_dir.mkdir()
    (run_dir / "notes.txt").write_text("mine")
    args = ["study", "--domain", "cardio", "--config", str(config), "--run-dir", str(run_dir)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "holds no study" in result.output
    assert _files(run_dir) == ["notes.txt"] and not (run_dir / "study").exists()

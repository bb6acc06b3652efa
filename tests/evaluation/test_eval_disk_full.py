"""A run folder on a full or read-only disk (reliability review 2026-12: disk.score,
disk.run-resume, ro.run-folder): one `error:` naming the path and the cause, exit 2, the
previous files intact; a resume once space is back completes the run."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgbench.cli import app


def cli(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def _no_space(fd: int) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture
def answered(run_dir, mini_domain) -> Path:
    code, out = cli("prompts", "--run-dir", run_dir, "--domain", mini_domain.root)
    assert code == 0, out
    code, out = cli("run", "--run-dir", run_dir, "--model", "ref:oracle", "--no-cache")
    assert code == 0, out
    return run_dir


def test_disk_score_under_enospc_keeps_the_previous_panel(answered, monkeypatch) -> None:
    code, out = cli("score", "--run-dir", answered)
    assert code == 0, out
    panel = answered / "scores" / "ref-oracle" / "panel.json"
    before = panel.read_bytes()
    monkeypatch.setattr(os, "fsync", _no_space)
    code, out = cli("score", "--run-dir", answered, "--seed", "7")
    assert code == 2 and "Traceback" not in out, out
    assert "No space left on device (ENOSPC)" in out and "cannot write" in out
    assert panel.read_bytes() == before
    assert not [p for p in panel.parent.iterdir() if ".tmp" in p.name]


def test_disk_run_resume_a_full_disk_mid_run_then_a_resume(answered, monkeypatch) -> None:
    log = answered / "responses" / "ref-context-reader.jsonl"
    monkeypatch.setattr(os, "fsync", _no_space)
    code, out = cli("run", "--run-dir", answered, "--model", "ref:context-reader", "--no-cache")
    assert code == 2 and "Traceback" not in out, out
    assert "No space left on device" in out
    monkeypatch.undo()
    code, out = cli("run", "--run-dir", answered, "--model", "ref:context-reader", "--no-cache")
    assert code == 0, out
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) and all(r["status"] == "ok" for r in records)


def test_ro_run_folder_a_refused_write_is_one_message(answered, monkeypatch) -> None:
    """A read-only run folder (EROFS), injected: score, prompts and run each exit 2."""
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):  # every open for writing is refused
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    for args in (
        ["score", "--run-dir", answered],
        ["run", "--run-dir", answered, "--model", "ref:ungrounded", "--no-cache"],
    ):
        code, out = cli(*args)
        assert code == 2 and "Traceback" not in out, (args, out)
        assert "Read-only file system" in out, (args, out)

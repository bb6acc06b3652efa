"""Files others can read (issue 31, item 5): everything meant to be shared is written with the
mode the process umask gives an ordinary file; only secrets are 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console

from harness.evaluation.prompts import build_prompts
from harness.evaluation.run_scoring import score_run
from harness.neo4j.state import ensure_password
from harness.report import write_report
from harness.runner.api import RunConfig, run_model
from harness.server.app import start_server_in_thread
from kgbench.io import atomic_write_json, atomic_write_text, process_umask, replace_folder


@contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_run_folder_and_its_report_are_readable_by_others(run_dir: Path, mini_domain):
    with umask(0o022):
        build_prompts(run_dir, str(mini_domain.root))
        url, stop = start_server_in_thread(responder="context-reader", run_dir=run_dir)
        try:
            config = RunConfig(
                run_dir=run_dir, model="openai:context-reader", base_url=url, use_cache=False
            )
            run_model(config, Console(quiet=True))
        finally:
            stop()
        score_run(run_dir, bootstrap=100)
        md, html = write_report(run_dir)
    files = [p for p in run_dir.rglob("*") if p.is_file() and not p.name.startswith(".")]
    assert md in files and html in files and len(files) > 20
    wrong = {str(p.relative_to(run_dir)): oct(mode(p)) for p in files if mode(p) != 0o644}
    assert wrong == {}
    folders = [p for p in run_dir.rglob("*") if p.is_dir()]
    assert {oct(mode(p)) for p in folders} == {"0o755"}


def test_shared_writes_follow_the_umask_and_secrets_stay_0600(tmp_path: Path):
    with umask(0o027):
        assert process_umask() == 0o027
        atomic_write_text(tmp_path / "a.md", "x")
        atomic_write_json(tmp_path / "b.json", {"a": 1})
        replace_folder(tmp_path / "release", {"x/data.jsonl": b"{}\n"})
        assert mode(tmp_path / "a.md") == 0o640
        assert mode(tmp_path / "b.json") == 0o640
        assert mode(tmp_path / "release") == 0o750
        assert mode(tmp_path / "release" / "x" / "data.jsonl") == 0o640
    with umask(0o000):  # even the most permissive umask leaves a secret private
        password = ensure_password(tmp_path / "neo4j")
        assert mode(password) == 0o600
        atomic_write_text(tmp_path / "open.txt", "x")
        assert mode(tmp_path / "open.txt") == 0o666
        os.chmod(password, 0o644)
        assert mode(ensure_password(tmp_path / "neo4j")) == 0o600  # a loosened one is tightened

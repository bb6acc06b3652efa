"""The pilot's embedded Neo4j (about 1 GB): stopped when the pilot started it, unless kept;
left alone when it was already running; and the pilot says which (a real server, twice)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from harness.neo4j import status, stop
from kgbench.cli.pilot import embedded_neo4j
from kgbench.errors import UserError

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]
SHORT_LIVED = "-XX:TieredStopAtLevel=1"


def jvm_command(pid: int) -> list[str]:
    """The server JVM's command line (Linux)."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_the_pilot_stops_the_neo4j_it_started_unless_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGBENCH_NEO4J_HEAP", "256m")
    state = tmp_path / "neo4j"
    out = io.StringIO()
    console = Console(file=out, width=300)
    try:
        with embedded_neo4j(console, keep=True, state_dir=state) as info:
            assert not info.already_running and status(state).running
            # a kept server stays up for other work: it keeps the optimising JIT compiler
            assert SHORT_LIVED not in jvm_command(info.pid)
        assert status(state).running
        assert f"stays running at {info.uri}" in out.getvalue()

        with embedded_neo4j(console, state_dir=state) as again:
            assert again.already_running and again.pid == info.pid
        assert status(state).running, "one the pilot did not start is left alone"
        assert f"Neo4j was already running at {info.uri}; it stays running." in out.getvalue()

        stop(state)
        with pytest.raises(UserError), embedded_neo4j(console, state_dir=state) as short:
            assert status(state).running
            assert SHORT_LIVED in jvm_command(short.pid), "stopped after the run: C1 only"
            raise UserError("a step failed")
        assert not status(state).running, "stopped however the pilot ends"
        assert "Stopped the embedded Neo4j the pilot started" in out.getvalue()
    finally:
        stop(state)


def test_a_released_server_stops_while_the_block_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33, item 2: the pilot releases its server once the graph is read for the last
    time, and the stop runs beside the steps that follow (they read files only); the block's
    end waits for it. A kept server, or one already running, is never released."""
    import time

    monkeypatch.setenv("KGBENCH_NEO4J_HEAP", "256m")
    state = tmp_path / "neo4j"
    out = io.StringIO()
    console = Console(file=out, width=300)
    try:
        release: list = []
        with embedded_neo4j(console, state_dir=state, release=release) as info:
            assert status(state).running and len(release) == 1
            release[0]()
            release[0]()  # once is enough: a second call starts no second stop
            deadline = time.monotonic() + 60
            while status(state).running and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not status(state).running, "stopped before the block ended"
        assert "Stopped the embedded Neo4j the pilot started" in out.getvalue()

        kept: list = []
        with embedded_neo4j(console, keep=True, state_dir=state, release=kept) as info:
            assert kept == []
            again: list = []
            with embedded_neo4j(console, state_dir=state, release=again) as same:
                assert same.already_running and again == []
        assert status(state).running and status(state).pid == info.pid
    finally:
        stop(state)

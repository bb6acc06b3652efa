"""Reusable pytest fixtures for a real Neo4j (no mocks).

Register them once for the whole suite with `pytest_plugins = ["fixtures_neo4j"]` in
`tests/conftest.py`, or import the fixture functions into a folder's conftest.

- `neo4j_embedded`: one embedded server per test session, in a private state directory under
  pytest's tmp area, stopped at the end. It watches the pytest process, so even a killed run
  does not leave a JVM behind.
- `neo4j_driver`: a verified driver. With NEO4J_URI set it talks to that server (and starts
  nothing); otherwise to `neo4j_embedded`.
- `neo4j_env`: NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD set, for the test, to the server
  `neo4j_driver` talks to, so a CLI command run in the test reads the same graph.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import neo4j
import pytest

from harness.neo4j import ServerInfo, connection_settings, open_driver, start, stop


@pytest.fixture(scope="session")
def neo4j_embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerInfo]:
    """A running embedded Neo4j (auth on) private to this test session."""
    state_dir = tmp_path_factory.mktemp("neo4j-embedded")
    info = start(state_dir, watch_pid=os.getpid())
    try:
        yield info
    finally:
        stop(state_dir)


@pytest.fixture(scope="session")
def neo4j_driver(request: pytest.FixtureRequest) -> Iterator[neo4j.Driver]:
    """A driver that has answered `RETURN 1`: NEO4J_URI's server if set, else the embedded one."""
    if os.environ.get("NEO4J_URI"):
        settings = connection_settings()
    else:
        info: ServerInfo = request.getfixturevalue("neo4j_embedded")
        settings = connection_settings(info.state_dir)
    driver = open_driver(settings)
    try:
        yield driver
    finally:
        driver.close()


@pytest.fixture
def neo4j_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The connection variables a CLI command reads, pointing at `neo4j_driver`'s server."""
    if os.environ.get("NEO4J_URI"):
        settings = connection_settings()
    else:
        settings = connection_settings(request.getfixturevalue("neo4j_embedded").state_dir)
    monkeypatch.setenv("NEO4J_URI", settings.uri)
    monkeypatch.setenv("NEO4J_USER", settings.user or "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", settings.password or "")

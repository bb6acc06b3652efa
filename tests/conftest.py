"""Shared test fixtures."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "tests" / "fixtures" / "domains" / "mini"

pytest_plugins = ["fixtures_neo4j"]


@pytest.fixture
def mini_copy(tmp_path: Path) -> Path:
    """A writable copy of the mini domain, at the same depth so its imports resolve."""
    root = tmp_path / "t" / "fixtures" / "domains" / "mini"
    shutil.copytree(MINI, root)
    os.symlink(REPO / "spec", tmp_path / "spec")
    return root


NEO4J_FIXTURES = {"neo4j_embedded", "neo4j_driver"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that needs Neo4j is marked `neo4j`, so `pytest -m "not neo4j"` starts no JVM:
    a test using the Neo4j fixtures (directly or through another fixture) without the marker
    stops the collection, naming it."""
    unmarked = [
        item.nodeid
        for item in items
        if NEO4J_FIXTURES & set(getattr(item, "fixturenames", ()))
        and item.get_closest_marker("neo4j") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "tests using Neo4j must be marked neo4j (pytestmark = pytest.mark.neo4j): "
            + ", ".join(unmarked[:10])
        )


@pytest.fixture
def chromium(tmp_path: Path):
    """Headless Debian chromium, offline and with a private profile: `chromium(page, *args)`
    returns the finished process (e.g. args `--dump-dom` or `--screenshot=FILE`), at 800 px
    wide. Tests that need it skip where it is not installed (.ci/run installs it)."""
    import subprocess

    if shutil.which("chromium") is None:
        pytest.skip("needs Debian's chromium (.ci/run installs it)")
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=800,2000",
    ]  # fmt: skip

    def run(page: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["chromium", *flags, *args, page.as_uri()],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip

    return run

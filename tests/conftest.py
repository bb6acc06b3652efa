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

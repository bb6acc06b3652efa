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

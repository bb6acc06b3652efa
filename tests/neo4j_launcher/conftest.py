"""Make the shared Neo4j fixtures (tests/fixtures_neo4j.py) available to these tests.

tests/conftest.py may already register that module through `pytest_plugins` (under whatever
module name); registering it a second time would define the session fixtures twice, so this
only registers it when no plugin loaded from that file exists yet.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_TESTS_DIR = Path(__file__).resolve().parents[1]
_FIXTURES = _TESTS_DIR / "fixtures_neo4j.py"


def _already_registered(config: pytest.Config) -> bool:
    for plugin in config.pluginmanager.get_plugins():
        path = getattr(plugin, "__file__", None)
        if path and Path(path).resolve() == _FIXTURES:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    if not _already_registered(config):
        if str(_TESTS_DIR) not in sys.path:
            sys.path.insert(0, str(_TESTS_DIR))
        config.pluginmanager.import_plugin("fixtures_neo4j")

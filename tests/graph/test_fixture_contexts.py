"""The committed fixture contexts (tests/evaluation/fixtures/mini_run/contexts/) are what
extraction produces today: the evaluation tests run on them without Neo4j, so a change to the
extraction queries or the context format must not leave them stale unnoticed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import neo4j
import pytest

pytestmark = pytest.mark.neo4j

SCRIPT = Path(__file__).resolve().parents[1] / "evaluation" / "fixtures" / "make_mini_contexts.py"


def _generator():
    spec = importlib.util.spec_from_file_location("make_mini_contexts", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_fixture_contexts_are_fresh(neo4j_driver: neo4j.Driver) -> None:
    generator = _generator()
    fresh = generator.build(neo4j_driver)
    committed = {
        p.relative_to(generator.CONTEXTS).as_posix(): p.read_bytes()
        for p in sorted(generator.CONTEXTS.rglob("*.json"))
    }
    assert len(fresh) == 24
    stale = sorted(set(fresh) ^ set(committed)) + sorted(
        rel for rel in fresh if rel in committed and fresh[rel] != committed[rel]
    )
    assert not stale, (
        f"stale fixture contexts {stale[:5]}; regenerate them: "
        "python tests/evaluation/fixtures/make_mini_contexts.py (with `kgbench neo4j start`)"
    )

"""Fixtures of the verify-and-revise tests: the mini domain compiled and loaded into the
session's real Neo4j (a hand-made graph whose every assertion the tests know by id)."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.graph.load import load

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def mini_domain(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("generated-verify")
    compile_domain(REPO / "tests/fixtures/domains/mini", out_root=out, force=True)
    return CompiledDomain.open("mini", generated=out)


@pytest.fixture(scope="session")
def loaded_mini(neo4j_driver: neo4j.Driver, mini_domain: CompiledDomain) -> CompiledDomain:
    neo4j_driver.execute_query(f"MATCH (n:{mini_domain.label}) DETACH DELETE n")
    load(neo4j_driver, mini_domain)
    return mini_domain

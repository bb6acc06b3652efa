"""Fixtures of the evaluation tests: the mini domain compiled once, and a writable copy of the
hand-written run folder (tests/evaluation/fixtures/mini_run: 8 scenarios, contexts C2-C4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.evaluation.compiled_scorer import CompiledScorer, load_compiled_scorer

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "tests" / "fixtures" / "domains" / "mini"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINI_RUN = FIXTURES / "mini_run"


@pytest.fixture(scope="session")
def mini_domain(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    out = tmp_path_factory.mktemp("generated")
    result = compile_domain(str(MINI), out_root=out)
    return CompiledDomain("mini", result.out_dir)


@pytest.fixture(scope="session")
def mini_scorer(mini_domain: CompiledDomain) -> CompiledScorer:
    return load_compiled_scorer(mini_domain)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A writable copy of the fixture run folder."""
    target = tmp_path / "run"
    shutil.copytree(MINI_RUN, target)
    return target


@pytest.fixture(scope="session")
def mini_scenarios() -> list[dict[str, Any]]:
    lines = (MINI_RUN / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def fixture_context(scenario_id: str, condition: str) -> dict[str, Any] | None:
    """The fixture context of one (scenario, condition); None under C1."""
    path = MINI_RUN / "contexts" / scenario_id / f"{condition}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


@pytest.fixture(scope="session")
def load_context():
    return fixture_context

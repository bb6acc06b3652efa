"""Fixtures for the scenario generator and gold releases: compiled domains, generated sets,
a writable copy of a compiled domain, and the commands mounted as the top-level CLI mounts
them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import typer

from harness.compiled import CompiledDomain
from harness.scenarios.generator import Generator
from harness.scenarios.kg import KnowledgeGraph

REPO = Path(__file__).resolve().parents[2]
GENERATED = REPO / "generated"


@pytest.fixture(scope="session")
def cardio() -> CompiledDomain:
    return CompiledDomain.open("cardio")


@pytest.fixture(scope="session")
def cardio_kg(cardio: CompiledDomain) -> KnowledgeGraph:
    return KnowledgeGraph(cardio)


@pytest.fixture(scope="session")
def cardio_generator(cardio: CompiledDomain) -> Generator:
    return Generator(cardio)


@pytest.fixture(scope="session")
def cardio_scenarios(cardio_generator: Generator) -> list[dict]:
    return cardio_generator.generate()


@pytest.fixture(scope="session")
def afib_scenarios() -> list[dict]:
    return Generator(CompiledDomain.open("afib")).generate()


@pytest.fixture
def compiled_copy(tmp_path: Path):
    """A writable copy of generated/<domain>/ (without releases) and its CompiledDomain."""

    def make(domain: str = "cardio") -> CompiledDomain:
        root = tmp_path / "generated"
        shutil.copytree(
            GENERATED / domain, root / domain, ignore=shutil.ignore_patterns("gold", "scenarios")
        )
        return CompiledDomain.open(domain, generated=root)

    return make


@pytest.fixture(scope="session")
def cli() -> typer.Typer:
    """The kgbench command line (the scenario commands behind its one error boundary)."""
    from kgbench.cli import app

    return app

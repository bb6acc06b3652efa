"""Fixtures of the probe tests: the compiled cardio probe, its reference graph, probe runs."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from harness.probe.compiled import CompiledProbe
from harness.probe.reference import ReferenceGraph
from harness.probe.run import ProbeConfig, ProbeOutcome, run_probe
from harness.runner.stage import StageConfig


@pytest.fixture(scope="session")
def cardio_probe() -> CompiledProbe:
    return CompiledProbe.open("cardio")


@pytest.fixture(scope="session")
def cardio_reference(cardio_probe: CompiledProbe) -> ReferenceGraph:
    return cardio_probe.reference_graph()


def oracle_precision(limit_roots: int | None = None) -> float:
    """The oracle's mean precision over cardio's first `limit_roots` roots that are in scope:
    1.0, since it answers with reference edges only. Cardio's reference means "A causes B"
    (issue 27): three disease roots (essential hypertension, HFrEF, hypercholesterolemia) are
    linked to the graph only by the drugs that treat them, so the reference holds no edge at
    them; the scorer leaves such roots out of the means (harness.probe.scoring.in_scope)
    rather than scoring the oracle's empty answer there 0."""
    probe = CompiledProbe.open("cardio")
    reference = probe.reference_graph()
    roots = [r["id"] for r in probe.roots][:limit_roots]
    scored = [r for r in roots if reference.degree[r]]
    return sum(1.0 for _ in scored) / len(scored)


def quiet() -> Console:
    return Console(file=io.StringIO())


def probe_once(run_dir: Path, model: str, **options) -> ProbeOutcome:
    """One `kgbench probe` on cardio, in process, with a quiet console."""
    runner_options = {
        k: options.pop(k) for k in list(options) if k in StageConfig.__dataclass_fields__
    }
    runner = StageConfig(out_dir=run_dir, model=model, use_cache=False, **runner_options)
    config = ProbeConfig("cardio", run_dir, runner, bootstrap=200, **options)
    return run_probe(config, quiet())


@pytest.fixture
def probe_run(tmp_path: Path) -> Callable[..., ProbeOutcome]:
    def run(model: str, **options) -> ProbeOutcome:
        return probe_once(tmp_path / "run", model, **options)

    return run


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-CANARY-123456")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

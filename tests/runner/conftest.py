"""Fixtures for the runner tests: synthetic run folders and a live reference server."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.compiled import CompiledDomain
from harness.runfolder import RunFolder
from harness.server import start_server_in_thread
from kgbench.locations import GENERATED_DIR

CANDIDATES = ["Apixaban", "Warfarin", "Dabigatran", "Aspirin", "Metoprolol"]
DOMAIN = next(d for d in ("cardio", "afib") if (GENERATED_DIR / d).exists())


def prompt_text(i: int) -> str:
    """A prompt in the compiled frame's layout (what the reference responders read)."""
    options = "\n".join(f"- {CANDIDATES[(i + k) % len(CANDIDATES)]}" for k in range(3))
    return (
        "You are a clinical decision-support assistant.\n\n# Task\nChoose the preferred "
        f"intervention.\n\n# Scenario SCN_{i:04d}\nA {40 + i % 40}-year-old patient, case {i}.\n\n"
        "Decision: choose one.\nTarget outcome: Stroke\n\n# Candidate options\n"
        f"{options}\n\n# Answer format\nReply with a single JSON object and nothing else.\n"
    )


def make_run_folder(root: Path, n: int = 320) -> Path:
    """A run folder with run.json, n prompts and scenarios (for the oracle)."""
    (root / "prompts").mkdir(parents=True, exist_ok=True)
    RunFolder(root).describe(CompiledDomain.open(DOMAIN), conditions=["C1"])
    prompts, scenarios = [], []
    for i in range(n):
        sid = f"SCN_{i:04d}"
        prompts.append(
            {
                "prompt_id": f"{sid}/C1",
                "scenario_id": sid,
                "condition": "C1",
                "messages": [{"role": "user", "content": prompt_text(i)}],
            }
        )
        scenarios.append(
            {
                "scenario_id": sid,
                "candidates": [{"intervention_id": "DRG_0001", "label": CANDIDATES[i % 5]}],
                "gold": {
                    "preferred_intervention": "DRG_0001",
                    "causal_path_assertion_ids": [],
                    "adverse_effect_assertion_ids": [],
                    "contraindication_assertion_ids": [],
                    "evidence_source_ids": [],
                    "expects_uncertainty": False,
                },
            }
        )
    lines = "".join(json.dumps(p) + "\n" for p in prompts)
    (root / "prompts" / "prompts.jsonl").write_text(lines)
    (root / "scenarios.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scenarios))
    return root


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def runner_cmd(*args: str) -> list[str]:
    """`python -m kgbench run ...` (the `kgbench run` command, where no script is on PATH)."""
    return [sys.executable, "-m", "kgbench", "run", *args]


def fast_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-CANARY-123456", **extra}
    env.pop("OPENAI_BASE_URL", None)
    return env


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    return make_run_folder(tmp_path / "run", 320)


@pytest.fixture
def server() -> Iterator[Callable[..., tuple[str, Any]]]:
    """Start reference servers with given ServerConfig overrides; all stopped at teardown."""
    stops = []

    def start(**overrides: Any) -> tuple[str, Any]:
        url, stop = start_server_in_thread(**overrides)
        stops.append(stop)
        return url, stop.server

    yield start
    for stop in stops:
        stop()


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-CANARY-123456")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

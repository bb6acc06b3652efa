"""A published cardio release, a run folder answering it under C1, and `kgbench score`'s
items: what the harness adapters are compared against. The adapters run in `.venv-evals`
(inspect-ai and lm-eval conflict with kgbench's pins); without it these tests skip, unless
KGBENCH_REQUIRE_EVALS=1 (make test, CI) makes that a failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.compiled import CompiledDomain
from harness.evaluation.prompts import build_prompts
from harness.release.publish import publish_release
from harness.scenarios.generator import generate_file
from kgbench.locations import GENERATED_DIR

REPO = Path(__file__).resolve().parents[2]
EVALS_PYTHON = REPO / ".venv-evals" / "bin" / "python"
RESPONDER = "noisy-oracle-0.4"  # deterministic, right and wrong answers: scores vary


def evals_python() -> Path:
    if EVALS_PYTHON.exists():
        return EVALS_PYTHON
    if os.environ.get("KGBENCH_REQUIRE_EVALS"):
        pytest.fail(f"{EVALS_PYTHON} is missing: build it with `make evals-venv`")
    pytest.skip("needs .venv-evals (make evals-venv): inspect-ai and lm-eval")


def run_in_evals(args: list[str], timeout: int = 600) -> subprocess.CompletedProcess:
    """A script in the evals environment, importing this checkout's kgbench."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "INSPECT_DISPLAY": "none",
        "NO_COLOR": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [str(evals_python()), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO,
    )


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cardio's scenarios published as release 1.0.0 in a private generated/ copy."""
    root = tmp_path_factory.mktemp("generated")
    shutil.copytree(
        GENERATED_DIR / "cardio",
        root / "cardio",
        ignore=shutil.ignore_patterns("gold", "scenarios", "datasets"),
    )
    compiled = CompiledDomain.open("cardio", generated=root)
    generate_file(compiled)
    return publish_release(compiled, "1.0.0").path


def answered_run(release: Path, run_dir: Path, answer) -> dict[str, dict]:
    """A run folder holding the release's scenarios under C1, answered by `answer(run_dir)`,
    scored by `kgbench score`: prompt id -> its item in scores/<log>/items.jsonl."""
    from harness.evaluation.run_scoring import score_run

    run_dir.mkdir(parents=True)
    shutil.copy(release / "scenarios.jsonl", run_dir / "scenarios.jsonl")
    build_prompts(run_dir, str(release.parent.parent), conditions=["C1"])
    log_path = answer(run_dir)
    score_run(run_dir, log_path.stem, bootstrap=100)
    lines = (run_dir / "scores" / log_path.stem / "items.jsonl").read_text().splitlines()
    return {item["prompt_id"]: item for item in map(json.loads, lines)}

"""The inspect-ai task (issue 31, item 3) scores every item as `kgbench score` does: the same
80 cardio items under C1, answered with the same texts (by inspect's offline mock model)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from harness.runner.api import answer_with_reference

from .conftest import RESPONDER, answered_run, evals_python, run_in_evals

HERE = Path(__file__).resolve().parent


def test_the_inspect_task_scores_like_kgbench_score(release: Path, tmp_path: Path):
    evals_python()  # skip (or fail under KGBENCH_REQUIRE_EVALS) before any work
    run_dir = tmp_path / "run"
    items = answered_run(release, run_dir, lambda d: answer_with_reference(d, RESPONDER))
    prompts = {
        json.loads(line)["prompt_id"]: json.loads(line)["messages"][0]["content"]
        for line in (run_dir / "prompts" / "prompts.jsonl").read_text().splitlines()
    }
    log = run_dir / "responses" / f"ref-{RESPONDER}.jsonl"
    raw = {r["prompt_id"]: r["raw"] for r in map(json.loads, log.read_text().splitlines())}
    answers = {prompts[pid]: raw[pid] for pid in prompts}
    (tmp_path / "answers.json").write_text(json.dumps(answers))

    done = run_in_evals(
        [
            str(HERE / "inspect_run.py"),
            str(release),
            str(tmp_path / "answers.json"),
            str(tmp_path / "out.json"),
            str(tmp_path / "inspect-logs"),
        ]
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    samples = out["samples"]
    assert len(samples) == len(items) >= 20
    varied = set()
    for prompt_id, item in items.items():
        sample = samples[prompt_id]
        assert sample["completion"] == raw[prompt_id]  # the mock model sent the same answer
        assert sample["scores"] == item["scores"], prompt_id
        assert sample["parse_status"] == item["parse_status"]
        varied.add(item["scores"]["intervention_accuracy"])
    assert varied == {0.0, 1.0}  # right and wrong answers, not a constant
    # inspect's aggregate is kgbench's mean over the items where the metric is defined
    for name, value in out["metrics"]["intervention_accuracy"].items():
        assert name == "mean_where_defined"
        defined = [i["scores"]["intervention_accuracy"] for i in items.values()]
        assert math.isclose(value, sum(defined) / len(defined))

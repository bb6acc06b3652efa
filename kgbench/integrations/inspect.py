"""kgbench as an inspect-ai task: `inspect eval kgbench/integrations/inspect.py@kgbench
-T release=generated/<domain>/gold/<version> -T condition=C1 --model openai/gpt-4o-mini`.

Dataset: the items of a verified gold release under one condition (kgbench.integrations.core),
each a Sample whose input is the prompt kgbench renders (one user message) and whose id is
the prompt id (`SCN_0001/C1`). Solver: `generate()`. Scorer: the compiled domain's panel via
kgbench.scoring, one Score per item whose value maps every metric to its value (None where
the metric is undefined for that item); each metric's aggregate is the mean over the items
where it is defined, as `kgbench score` reports it.

inspect-ai lives in `.venv-evals` (make evals-venv), not in kgbench's own environment.
"""

from __future__ import annotations

import math
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from .core import KgbenchEval, defined_mean


@metric
def mean_where_defined() -> Metric:
    """The mean over samples whose value is defined (None is undefined, never zero)."""

    def compute(scores: list[SampleScore]) -> float:
        return defined_mean(s.score.value for s in scores)  # type: ignore[misc]

    return compute


@scorer(metrics={"*": [mean_where_defined()]})
def kgbench_scorer(evaluation: KgbenchEval):
    """Score an answer as `kgbench score` does; parse status and problems in the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        sid = str(state.metadata["scenario_id"])
        answer = state.output.completion
        details = evaluation.score(sid, answer)
        return Score(
            value=dict(details["scores"]),
            answer=answer,
            metadata={
                "prompt_id": state.sample_id,
                "parse_status": details["parse_status"],
                "problems": details["problems"],
                "unknown_ids": details["unknown_ids"],
            },
        )

    return score


def samples(evaluation: KgbenchEval) -> list[Sample]:
    return [
        Sample(
            id=item.prompt_id,
            input=item.prompt,
            metadata={
                "scenario_id": item.scenario_id,
                "condition": item.condition,
                "category": item.category,
                "domain_version": evaluation.release.manifest.get("domain_version"),
                "release_version": evaluation.release.version,
            },
        )
        for item in evaluation.items()
    ]


@task
def kgbench(
    release: str,
    condition: str = "C1",
    run_dir: str | None = None,
    compiled: str | None = None,
) -> Task:
    """The items of `release` (a gold release folder) under `condition`; grounded conditions
    (C2-C4) read their contexts from `run_dir` (a run folder after `kgbench extract`)."""
    evaluation = KgbenchEval(release, condition, run_dir, compiled)
    name = f"kgbench-{evaluation.domain.name}-{evaluation.release.version}-{condition}"
    return Task(
        dataset=MemoryDataset(samples(evaluation), name=name),
        solver=generate(),
        scorer=kgbench_scorer(evaluation),
        name=name,
    )


def score_values(value: Any) -> dict[str, float | None]:
    """A logged Score value back as metric -> value (NaN read as undefined)."""
    return {
        k: None if v is None or (isinstance(v, float) and math.isnan(v)) else v
        for k, v in dict(value).items()
    }

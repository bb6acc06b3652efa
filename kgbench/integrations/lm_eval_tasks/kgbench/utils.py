"""The lm-evaluation-harness side of the kgbench task (kgbench.yaml): the dataset, the prompt
and the scorer, all from kgbench.integrations.core, so an item scores as in `kgbench score`.

The release, condition and (for grounded conditions) run folder come from lm-eval's
`--metadata` JSON: {"release": ..., "condition": "C1", "run_dir": ..., "compiled": ...}.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kgbench.errors import UserError
from kgbench.integrations.core import KgbenchEval, defined_mean


@cache
def _evaluation(
    release: str, condition: str, run_dir: str | None, compiled: str | None
) -> KgbenchEval:
    return KgbenchEval(release, condition, run_dir, compiled)


def load_kgbench(
    release: str | None = None,
    condition: str = "C1",
    run_dir: str | None = None,
    compiled: str | None = None,
    **_: Any,
) -> dict[str, Any]:
    """{"test": Dataset}: one doc per item, in release order."""
    import datasets

    if not release:
        raise UserError(
            'the kgbench task needs a release: --metadata \'{"release": '
            '"generated/<domain>/gold/<version>", "condition": "C1"}\''
        )
    evaluation = _evaluation(release, condition, run_dir, compiled)
    docs = [
        {**item.as_doc(), "release": release, "run_dir": run_dir or "", "compiled": compiled or ""}
        for item in evaluation.items()
    ]
    return {"test": datasets.Dataset.from_list(docs)}


def doc_to_text(doc: dict[str, Any]) -> str:
    return doc["prompt"]


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float | None]:
    """The panel's scores of the answer; None where a metric is undefined for this item."""
    evaluation = _evaluation(
        doc["release"], doc["condition"], doc["run_dir"] or None, doc["compiled"] or None
    )
    return dict(evaluation.score(doc["scenario_id"], results[0])["scores"])


def mean_where_defined(values: list[float | None]) -> float:
    return defined_mean(values)

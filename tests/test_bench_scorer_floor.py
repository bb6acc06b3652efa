"""The scorer bench's floor (bench/scorer_floor.py) scores what the compiled scorer scores.

The scorer's bench figure is its time over this floor's; the ratio means something only while
the two compute the same values, so the bench refuses to print it otherwise. Yes: on the
bench's own workload they agree on every value. No: a scorer that reads the gold otherwise
(the paper's single gold path where the gold lists other equal chains) is caught.
"""

from __future__ import annotations

import pytest

from bench.scoring_bench import _domain, agreement, workload
from harness.evaluation.claims import claim_reader
from harness.evaluation.compiled_scorer import load_compiled_scorer, with_causal_reading


def _setup(n: int) -> tuple:
    domain = _domain()
    scorer = load_compiled_scorer(domain)
    (unsupported,) = (m for m in scorer.metrics if m.kind == "unsupported_claims")
    return scorer, workload(domain.graph, n), claim_reader(unsupported)


def test_the_floor_agrees_with_the_scorer_on_every_value_of_the_bench_workload() -> None:
    scorer, items, reader = _setup(400)
    assert agreement(scorer, items, scorer.lexicon, reader) == 400 * len(scorer.metrics)


def test_a_scorer_that_reads_the_gold_otherwise_is_caught() -> None:
    scorer, items, reader = _setup(40)
    # the gold lists another equal chain: the declared reading credits it, gold_path does not
    items = [
        ({**gold, "causal_paths": [list(ctx["assertions"])[4:8]]}, resp, ctx)
        for gold, resp, ctx in items
    ]
    agreement(scorer, items, scorer.lexicon, reader)  # the declared reading: the same values
    other = with_causal_reading(scorer, "gold_path")
    with pytest.raises(AssertionError, match="scorer floor disagrees"):
        agreement(other, items, other.lexicon, reader)

"""A link supports nothing when its assertion was rejected: decided by the ids only rejected
rows have (`crosstable._gone_ids`), the same verdict as a lookup among every kept row's id
for each link of a known assertion (a link of an unknown one is judged row by row)."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from compiler.crosstable import _gone_ids


def test_no_rejected_row_no_lookup() -> None:
    assert _gone_ids(pa.chunked_array([["a", "b"]]), set()) is None


def test_a_repeated_id_with_a_kept_row_is_not_gone() -> None:
    ids = pa.chunked_array([["a", "b", "a", "c"]])
    assert _gone_ids(ids, {2, 3}).to_pylist() == ["c"]  # "a" still has row 0


def test_same_verdict_as_the_kept_ids_lookup() -> None:
    rng = random.Random(5)
    for _ in range(50):
        ids = pa.chunked_array([[f"A{rng.randrange(40)}" for _ in range(60)]])
        rejected = {i for i in range(60) if rng.random() < 0.2}
        keep = np.ones(60, dtype=bool)
        keep[list(rejected)] = False
        kept = ids.filter(pa.array(keep))
        links = pa.chunked_array([rng.sample(sorted(set(ids.to_pylist())), 10)])  # known ids
        old = pc.is_in(links, value_set=kept).to_pylist()
        gone = _gone_ids(ids, rejected)
        new = [True] * 10 if gone is None else pc.invert(pc.is_in(links, value_set=gone))
        assert old == (new if isinstance(new, list) else new.to_pylist())

"""The column-wise row writer (`kgbench.jsoncolumns`) writes the C encoder's bytes.

The large outputs of a compile (kg.json, the Neo4j row files) are byte-identical whichever
writer makes them: here every type a row holds, with hostile values (quotes, backslashes,
control characters, line breaks, unicode, lone surrogates, empty strings, -0.0, nan, inf, big
ints, None, empty and non-empty tuples, lists, nested objects, str subclasses), in columns of
one type and mixed, with keys present in every row, in some, or in none, is compared with the
dict per row encoded by `kgbench.io.encode_row`.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgbench.io import RowTexts, _rows_chunks, encode_row
from kgbench.jsoncolumns import Col, Layout, json_cells, object_rows


class _Word(str):
    """A str subclass: the encoder writes it as a string; the fast path must not care."""


HOSTILE: list[Any] = [
    "",
    "plain",
    'say "hi"',
    "back\\slash",
    "line\nbreak",
    "carriage\rreturn",
    "tab\there",
    "nul\x00and\x1fesc",
    "del\x7f",
    "sep\u2028arator",
    "é ümlaut 漢字 🧬",
    "lone \ud83d surrogate",
    ",comma",
    "pipe|d",
    _Word("word"),
    0.0,
    -0.0,
    1e-05,
    1e300,
    0.1 + 0.2,
    float("nan"),
    float("inf"),
    float("-inf"),
    0,
    -7,
    10**30,
    True,
    False,
    None,
    (),
    ("a",),
    ("a", 'q"uote', "new\nline"),
    ("x", 1),
    [],
    ["l", None],
    {"k": "v"},
]


def _clean_row(layout: Layout, row: list[Any]) -> dict[str, Any]:
    """The dict a row-per-dict writer builds: optional keys dropped where None or ()."""
    out: dict[str, Any] = {}
    for key, item in layout.items():
        if isinstance(item, Col):
            value = row[item.index]
            if item.optional and (value is None or (value.__class__ is tuple and not value)):
                continue
            out[key] = value
        else:
            out[key] = _clean_row(item, row)
    return out


def _check(layout: Layout, rows: list[list[Any]]) -> None:
    columns = [list(c) for c in zip(*rows, strict=True)]
    expected = ",\n".join(encode_row(_clean_row(layout, r)) for r in rows)
    assert object_rows(layout, columns) == expected


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_each_value_alone_and_in_a_column_of_its_type(value: Any) -> None:
    texts, quote = json_cells([value, value])
    assert [quote + t + quote for t in texts] == [encode_row(value)] * 2
    layout = {"b": Col(0), "a": Col(1, optional=True), "c": {"z": Col(0), "id": Col(2)}}
    _check(layout, [[value, value, "x"], [value, None, "y"], [value, (), "z"]])


@pytest.mark.parametrize("seed", range(40))
def test_random_mixed_columns_and_layouts(seed: int) -> None:
    """Columns of one type or mixed, optional keys before and after the first key present in
    every row, nested objects, an object with no key present in every row."""
    rng = random.Random(seed)
    width = rng.randint(1, 6)
    pools = [
        rng.sample(HOSTILE, rng.randint(1, 4))
        if rng.random() < 0.5
        else [v for v in HOSTILE if type(v) is rng.choice([str, float, bool, tuple, int])]
        for _ in range(width)
    ]
    rows = [[rng.choice(pool) for pool in pools] for _ in range(rng.randint(1, 12))]
    keys = rng.sample(["id", "a", "zz", "props", "B", "é", 'q"k', "_", "m1", "m2"], width)
    layout: dict[str, Any] = {k: Col(i, optional=rng.random() < 0.5) for i, k in enumerate(keys)}
    if rng.random() < 0.5:
        layout["nested"] = {
            f"n{i}": Col(rng.randrange(width), optional=rng.random() < 0.7) for i in range(3)
        }
    _check(layout, rows)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.text(), st.tuples(st.text()), st.just(())),
            st.one_of(st.none(), st.floats(), st.booleans(), st.integers()),
            st.text(),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_any_text_and_number(rows: list[tuple[Any, Any, str]]) -> None:
    layout = {"x": Col(0, optional=True), "n": Col(1, optional=True), "s": Col(2)}
    _check(layout, [list(r) for r in rows])
    _check({"x": Col(0, optional=True), "n": Col(1, optional=True)}, [list(r) for r in rows])


def test_row_texts_are_written_as_rows() -> None:
    """Encoded batches in a rows file: the same array as the rows themselves."""
    rows = [{"a": 1}, {"a": "two"}, {"a": None}]
    texts = RowTexts(["", encode_row(rows[0]), ",\n".join(map(encode_row, rows[1:]))])
    assert "".join(_rows_chunks(texts)) == "".join(_rows_chunks(rows))
    assert "".join(_rows_chunks(RowTexts([]))) == "".join(_rows_chunks([])) == "[]"

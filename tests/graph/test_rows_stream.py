"""Rows streamed from the compiled files (issue 17, item 3): `kgbench load` parses a rows file
as it reads it, in batches, and gets exactly what reading it whole gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.graph.load import _batches, iter_rows
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]
ROWS = sorted((REPO / "generated").glob("*/neo4j/rows/*.json"))


@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 20])
def test_streamed_rows_are_the_rows_of_the_file(chunk: int) -> None:
    assert ROWS, "the committed compiles have rows files"
    for path in ROWS[::7]:
        assert list(iter_rows(path, chunk)) == json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("size", [1, 3, 2000])
def test_batches_cover_the_file_in_order_and_mark_the_last(size: int) -> None:
    path = max(ROWS, key=lambda p: p.stat().st_size)
    rows = json.loads(path.read_text(encoding="utf-8"))
    batches = list(_batches(path, size))
    assert [r for _, batch, _ in batches for r in batch] == rows
    assert [done for done, _, _ in batches] == list(range(0, len(rows), size))
    assert [last for _, _, last in batches] == [False] * (len(batches) - 1) + [True]
    assert all(len(batch) <= size for _, batch, _ in batches)


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ('{"id": 1}', "expected a JSON array"),
        ('[{"id": 1}, {"id": ', "not valid JSON"),
        ('[{"id": 1}, 2]', "not a JSON object"),
        ('[{"id": 1}', "not closed"),
        ("", "expected a JSON array"),
    ],
)
def test_a_damaged_rows_file_is_one_message(tmp_path: Path, text: str, what: str) -> None:
    path = tmp_path / "rows.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=what):
        list(iter_rows(path, 4))

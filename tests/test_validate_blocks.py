"""pyarrow reads a large table in 1 MiB blocks, parsed in parallel (issue 33, item 5): the
cells must be exactly what Python's csv module reads, also where a quoted value holds a line
break or a quote and straddles a block boundary."""

from __future__ import annotations

import csv
from pathlib import Path

from compiler.tables import _arrow_parse, _python_parse


def test_a_table_of_many_blocks_reads_as_pythons_csv_does(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    header = ["id", "text", "n"]
    with path.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        for i in range(100_000):  # over 3 MiB: several blocks
            text = f'line one\nline "two" of {i}, with a comma' if i % 7 == 0 else f"plain {i}"
            writer.writerow([f"ID_{i:06d}", text, str(i)])
    assert path.stat().st_size > 3 * (1 << 20)
    arrow = _arrow_parse(path, header)
    python = _python_parse(path.read_text(), len(header), str(path))
    assert arrow is not None
    for name in header:  # yes: every cell the same, in the same order
        assert arrow.columns[name].to_pylist() == python.columns[name].to_pylist()
    assert arrow.columns["text"][7].as_py() == 'line one\nline "two" of 7, with a comma'
    assert len(arrow.columns["id"]) == 100_000  # no: no record split at a quoted line break


def test_a_ragged_record_in_a_later_block_is_left_to_pythons_reader(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    rows = ["id,text", *(f"ID_{i:06d},plain {i}" for i in range(100_000)), "ID_X,a,extra"]
    path.write_text("\n".join(rows) + "\n")
    assert path.stat().st_size > 2 * (1 << 20)
    assert _arrow_parse(path, ["id", "text"]) is None  # Python's reader then words the problem

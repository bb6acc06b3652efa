"""The KGX TSV export read back as KGX reads it (pandas, default quoting): reliability review
2026-12 kgx.quote-pandas (a name starting with `"` swallowed rows) and kgx.u2028 (a line
separator split rows for line-based readers)."""

from __future__ import annotations

import io

import pytest

from compiler.export.kgx import NODE_COLUMNS, tsv_bytes

NAMES = ['"Lisinopril', 'Ramipril "Altace" mix', "Amlo\u2028dipine", "tab\there", "Plain"]


def _rows() -> list[dict]:
    return [
        {"id": f"kgbench.cardio:DRG_{i:04d}", "category": ["biolink:Drug"], "name": name}
        for i, name in enumerate(NAMES, start=1)
    ]


def test_kgx_quote_pandas_the_tsv_reads_back_row_for_row() -> None:
    pandas = pytest.importorskip("pandas")
    data = tsv_bytes(NODE_COLUMNS, _rows())
    frame = pandas.read_csv(io.BytesIO(data), sep="\t", dtype=str, keep_default_na=False)
    assert len(frame) == len(NAMES)
    assert list(frame["name"]) == [
        '"Lisinopril',
        'Ramipril "Altace" mix',
        "Amlo dipine",  # line separators become spaces, as tabs and line breaks do
        "tab here",
        "Plain",
    ]


def test_kgx_u2028_no_line_separator_reaches_the_tsv() -> None:
    text = tsv_bytes(NODE_COLUMNS, _rows()).decode("utf-8")
    assert len(text.splitlines()) == len(NAMES) + 1  # even str.splitlines sees one row each

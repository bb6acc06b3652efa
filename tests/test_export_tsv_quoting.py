"""The KGX TSV export read back as KGX reads it (pandas, default quoting): reliability review
2026-12 kgx.quote-pandas (a name starting with `"` swallowed rows) and kgx.u2028 (a line
separator split rows for line-based readers)."""

from __future__ import annotations

import io

import pytest

from compiler.backends.kgx import NODE_COLUMNS, tsv_bytes

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


def test_kgx_pipe_name_a_rewritten_name_is_reported(mini_copy, tmp_path) -> None:
    """Reliability review 2026-12, kgx.pipe-name: a name holding '|' (KGX's TSV list
    delimiter) is written with '/' in the TSV, kept in the JSON Lines, and `export` says so
    (it used to rewrite the name without a word); a domain without one gets no warning."""
    import json

    from typer.testing import CliRunner

    from kgbench.cli import app

    entities = mini_copy / "data" / "entities.csv"
    entities.write_text(entities.read_text(encoding="utf-8").replace(
        "Lisinopril,", "Lisinopril|Zestril mix,", 1), encoding="utf-8")  # fmt: skip
    out = tmp_path / "kgx"
    result = CliRunner().invoke(app, ["export", "--domain", str(mini_copy), "--out", str(out)])
    assert result.exit_code == 0, result.output
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1, result.stderr
    assert "name 'Lisinopril|Zestril mix' holds '|'" in warnings[0]
    assert "the TSV writes 'Lisinopril/Zestril mix'" in warnings[0]
    assert "\tLisinopril/Zestril mix\t" in (out / "mini_nodes.tsv").read_text(encoding="utf-8")
    names = [json.loads(ln)["name"] for ln in (out / "mini_nodes.jsonl").read_text().splitlines()]
    assert "Lisinopril|Zestril mix" in names
    entities.write_text(entities.read_text(encoding="utf-8").replace("|Zestril mix", ""))
    clean = CliRunner().invoke(app, ["export", "--domain", str(mini_copy), "--out", str(out)])
    assert clean.exit_code == 0 and "warning:" not in clean.stderr, clean.output

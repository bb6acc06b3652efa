"""PrimeKG scale on a tiny domain: 7-digit ids, and the compact streamed form of large outputs.

The 4,000,000-assertion figures live in bench/scale_bench.py (`make bench-scale`); here the
same code paths run on the mini domain, with the large-output threshold lowered so that every
rows file, every import CSV and kg.json take the streamed form.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from compiler.api import check_domain, compile_domain
from compiler.backends import base, graph
from kgbench.errors import UserErrors

ID = re.compile(r"\b([A-Z]{2,5})_([0-9]{3,4})\b")


def widen(domain: Path, digits: int) -> None:
    """Every local id of the domain's files rewritten with `digits` digits (DRG_0001 ->
    DRG_0000001 for 7), consistently, so references still resolve."""
    for path in domain.rglob("*"):
        if path.suffix in (".csv", ".yaml"):
            text = path.read_text(encoding="utf-8")
            path.write_text(
                ID.sub(lambda m: f"{m.group(1)}_{int(m.group(2)):0{digits}d}", text),
                encoding="utf-8",
            )


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_seven_digit_ids_validate_and_compile(mini_copy: Path, tmp_path: Path) -> None:
    widen(mini_copy, 7)
    assertions = (mini_copy / "data" / "assertions.csv").read_text()
    assert "ASR_0000001,DRG_0000001,TARGETS,PRT_0000001" in assertions
    summary = check_domain(mini_copy)
    assert summary.assertions > 0
    result = compile_domain(mini_copy, out_root=tmp_path / "gen", force=True)
    kg = json.loads((result.out_dir / "kg.json").read_text())
    assert kg["assertions"][0]["assertion_id"] == "ASR_0000001"
    assert {e["id"] for e in kg["entities"]} >= {"DRG_0000001", "PRT_0000001"}


def test_eight_digit_ids_are_refused_with_a_location(mini_copy: Path) -> None:
    widen(mini_copy, 8)
    with pytest.raises(UserErrors) as err:
        check_domain(mini_copy)
    first = str(err.value.problems[0])
    assert "entities.csv" in first and "line 2" in first and "'id'" in first


def test_large_outputs_are_compact_streamed_and_deterministic(
    mini_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = compile_domain(mini_copy, out_root=tmp_path / "held", force=True).out_dir
    monkeypatch.setattr(base, "COMPACT_ROWS", 0)
    monkeypatch.setattr(graph, "COMPACT_ROWS", 0)
    check_domain(mini_copy)  # validate makes (and hashes) the streamed artifacts too
    first = compile_domain(mini_copy, out_root=tmp_path / "a", force=True).out_dir
    second = compile_domain(mini_copy, out_root=tmp_path / "b", force=True).out_dir
    a, b = tree(first), tree(second)
    assert a == b  # the same bytes twice: a pure function of the spec

    # compact, one row per line, and the same data as the indented form of a small domain
    kg = a["kg.json"].decode()
    assert not re.search(r"^ ", kg, re.M)
    assert kg.count("\n") > len(json.loads(kg)["assertions"])
    assert json.loads(kg) == json.loads((held / "kg.json").read_text())
    rows = sorted(p for p in a if p.startswith("neo4j/rows/"))
    assert rows
    for rel in rows:
        text = a[rel].decode()
        assert not re.search(r"^ ", text, re.M), rel
        assert json.loads(text) == json.loads((held / rel).read_text()), rel
    # CSV files are the same bytes whether held or streamed
    for rel in (p for p in a if p.startswith("neo4j/import/") and p.endswith(".csv")):
        assert a[rel] == (held / rel).read_bytes(), rel

    # the manifest's hashes and sizes are those of the streamed files as written
    manifest = json.loads(a["manifest.json"])
    for out in manifest["outputs"]:
        data = a[out["path"]]
        assert out["sha256"] == hashlib.sha256(data).hexdigest(), out["path"]
        assert out["bytes"] == len(data), out["path"]


def test_scale_bench_reads_kg_json_without_its_rows(
    mini_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench/scale_bench.py extracts at 4M assertions without holding kg.json's rows: its
    line-by-line reader of the large layout gives the whole top level, the entities cut to
    what extraction reads, and the other row lists empty."""
    from bench.scale_bench import EntitiesOnly

    monkeypatch.setattr(base, "COMPACT_ROWS", 0)
    monkeypatch.setattr(graph, "COMPACT_ROWS", 0)
    out = compile_domain(mini_copy, out_root=tmp_path / "gen", force=True).out_dir
    full = json.loads((out / "kg.json").read_text())
    slim = EntitiesOnly(out.name, out).graph
    assert slim["entities"] == [
        {k: e[k] for k in ("id", "name", "category")} for e in full["entities"]
    ]
    rows = {"assertions", "evidence_sources", "supports", "entities"}
    assert {k: v for k, v in slim.items() if k not in rows} == {
        k: v for k, v in full.items() if k not in rows
    }
    assert all(slim[k] == [] for k in rows - {"entities"})
    assert EntitiesOnly(out.name, out).entities.keys() == {e["id"] for e in full["entities"]}


ROWS = [
    {"b": 1.5, "a": "é ümlaut", "c": [1, 2, None], "d": {"z": True, "y": 1e-05}},
    {"id": "ASR_0000001", "n": float("inf"), "quote": 'say "hi"\n\t\\', "empty": []},
    {},
]


def test_rows_are_encoded_as_the_json_encoder_encodes_them() -> None:
    """The row encoder made once (`kgbench.io._encode_row`) writes what `JSONEncoder.encode`
    with the same settings writes, and refuses what it refuses."""
    from kgbench import io

    assert "".join(io._rows_chunks(ROWS)) == (
        "[\n" + ",\n".join(map(io._COMPACT.encode, ROWS)) + "\n]"
    )
    assert "".join(io._rows_chunks([])) == "[]"
    with pytest.raises(TypeError, match="not JSON serializable"):
        io._encode_row({"a": object()})


@pytest.mark.parametrize(
    ("table", "field", "value", "expected"),
    [
        ("entities", "description", "two\nlines", True),
        ("entities", "synonyms", ("one", "carriage\rreturn"), True),
        ("assertions", "context", "line\r\nbreak", True),
        ("evidence_sources", "title", 'one line, "quoted" | piped', False),
    ],
)
def test_line_breaks_are_found_in_any_field_and_tuple(
    mini_copy: Path, table: str, field: str, value: object, expected: bool
) -> None:
    """`multiline_fields` is set by a line break in any text the import files carry, in a
    plain field or inside a multivalued one, and only then."""
    from dataclasses import replace

    from compiler.backends.neo4j import _has_line_breaks
    from compiler.frontend import load_domain

    domain = load_domain(mini_copy)
    assert not _has_line_breaks(domain)
    records = list(getattr(domain, table))
    records[-1] = records[-1]._replace(**{field: value})
    assert _has_line_breaks(replace(domain, **{table: tuple(records)})) is expected

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
    """The row encoder made once (`kgbench.io.encode_row`) writes what `JSONEncoder.encode`
    with the same settings writes, and refuses what it refuses."""
    from kgbench import io

    assert "".join(io._rows_chunks(ROWS)) == (
        "[\n" + ",\n".join(map(io._COMPACT.encode, ROWS)) + "\n]"
    )
    assert "".join(io._rows_chunks([])) == "[]"
    with pytest.raises(TypeError, match="not JSON serializable"):
        io.encode_row({"a": object()})


@pytest.mark.parametrize(
    ("table", "field", "value", "expected"),
    [
        ("entities", "description", "two\nlines", True),
        ("entities", "synonyms", ("one", "carriage\rreturn"), True),
        ("assertions", "context", "line\r\nbreak", True),
        ("evidence_sources", "title", 'one line, "quoted" | piped', False),
        ("evidence_sources", "title", "a title\non two lines", True),  # a field of str alone
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


# The column-wise writers of large outputs (KGX TSV, import CSV) against the per-cell ones
# they replaced, which stay as the reference: `tsv_field(_cell(...))` per cell and
# `csv.writer.writerows`.


class _Word(str):
    """A str subclass whose str() is not its value: the column-wise path must not take it."""

    def __str__(self) -> str:
        return f"_Word.{self.upper()}"


TRICKY = [
    "plain",
    "tab\there",
    "line\nbreak",
    "carriage\rreturn",
    'say "hi"',
    "pipe|d",
    "sep\u2028arator",
    "next\x85line",
    "",
    "é ümlaut",
    ",comma",
]


def _tsv_reference(columns: tuple[str, ...], rows: list[dict]) -> bytes:
    from compiler.backends.kgx import _cell
    from kgbench.untrusted import tsv_field

    lines = ["\t".join(columns)]
    lines += ["\t".join(tsv_field(_cell(c, r.get(c))) for c in columns) for r in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.mark.parametrize("batch", [1, 2, 3, 1000])
@pytest.mark.parametrize("tricky", [None, *TRICKY])
def test_tsv_columns_write_the_per_cell_bytes(batch: int, tricky: str | None) -> None:
    """Every kind of value KGX rows hold (str, str subclasses, lists, bools, the `negated`
    column, numbers, None, absent keys), with and without a text that `_text` or `tsv_field`
    rewrites, in any batch size: the same bytes as the per-cell writer."""
    from compiler.backends.kgx import tsv_chunks

    columns = ("id", "name", "negated", "validated", "score", "year", "xref", "kind", "gone")
    rows: list[dict] = [
        {"id": f"X:{i}", "name": f"name {i}", "negated": i % 2 == 0, "validated": i % 3 == 0}
        | {"score": i / 7, "year": 1990 + i, "xref": [f"A:{i}", f"B:{i}"][: i % 3]}
        | ({"kind": _Word("term")} if i == 4 else {})
        for i in range(7)
    ]
    rows[5]["score"] = float("nan")
    rows[6]["negated"] = None
    if tricky is not None:
        rows[2]["name"] = tricky
        rows[3]["xref"] = ["A:1", tricky]
    written = b"".join(tsv_chunks(columns, rows, batch=batch))
    assert written == _tsv_reference(columns, rows)
    assert b"".join(tsv_chunks(columns, [])) == _tsv_reference(columns, [])


def _csv_reference(header: list, rows: list) -> bytes:
    import csv
    import io as stdio

    buf = stdio.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


@pytest.mark.parametrize("tricky", [None, *TRICKY, 3, True, None])
def test_csv_columns_write_the_csv_writer_bytes(
    tricky: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Import-file batches joined column by column are the bytes `csv.writer` writes: plain
    text, floats (repr, nan and inf too), ints; a batch with anything the writer would quote,
    or with a value of another type, is the writer's own."""
    monkeypatch.setattr(base, "CSV_BATCH", 3)
    header = ["id:ID", "name", "confidence:double", "year:long"]
    rows = [[f"ASR_{i:07d}", f"name {i}", i / 3, 2000 + i] for i in range(8)]
    rows[1][2], rows[2][2] = float("nan"), float("-inf")
    if tricky is not None:
        rows[4][1] = tricky
    assert b"".join(base.csv_chunks(header, rows)) == _csv_reference(header, rows)
    single = [["a"], [""], ["b"]]  # one field: the writer quotes an empty one
    assert b"".join(base.csv_chunks(["x"], single)) == _csv_reference(["x"], single)
    ragged = [["a", "b"], ["c"], ["d", "e", "f"]]
    assert b"".join(base.csv_chunks(["x", "y"], ragged)) == _csv_reference(["x", "y"], ragged)
    # the same rows given as columns, a batch at a time (the import files' makers)
    batches = [list(zip(*rows[i : i + 3], strict=True)) for i in range(0, len(rows), 3)]
    assert b"".join(base.csv_column_chunks(header, batches)) == _csv_reference(header, rows)
    assert b"".join(base.csv_column_chunks(header, [])) == _csv_reference(header, [])


def test_facts_in_order_are_the_frontend_facts_or_looked_up(mini_copy: Path) -> None:
    """The frontend's facts, one per assertion in order, are taken as they are; in another
    order, or missing (a domain loaded without deriving), each assertion gets its own or None."""
    from dataclasses import replace

    from compiler.frontend import load_domain

    domain = load_domain(mini_copy)
    assert len(domain.facts) == len(domain.assertions) > 2
    assert base.facts_in_order(domain) is domain.facts
    shuffled = replace(domain, facts=tuple(reversed(domain.facts[1:])))
    got = base.facts_in_order(shuffled)
    assert got[0] is None
    assert [f.assertion_id for f in got[1:]] == [a.assertion_id for a in domain.assertions[1:]]
    assert base.facts_in_order(replace(domain, facts=())) == [None] * len(domain.assertions)


def _per_cell_writers(m: pytest.MonkeyPatch) -> None:
    """The per-cell CSV and TSV writers the column-wise ones replaced, in their place: the
    reference the column-wise bytes are held to."""
    from compiler.backends import kgx

    m.setattr(base, "_plain_csv_columns", lambda columns: None)
    m.setattr(kgx, "tsv_chunks", lambda columns, rows: [_tsv_reference(columns, list(rows))])
    m.setattr(kgx, "edge_tsv_chunks", lambda d: kgx.tsv_chunks(kgx.EDGE_COLUMNS, kgx.iter_edges(d)))
    m.setattr(kgx, "node_tsv_chunks", lambda d: kgx.tsv_chunks(kgx.NODE_COLUMNS, kgx.iter_nodes(d)))


def test_large_outputs_are_the_per_cell_writers_bytes(
    mini_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole compile in the streamed form, with the column-wise writers and with the
    per-cell ones they replaced: every file the same bytes."""

    monkeypatch.setattr(base, "COMPACT_ROWS", 0)
    monkeypatch.setattr(graph, "COMPACT_ROWS", 0)
    fast = tree(compile_domain(mini_copy, out_root=tmp_path / "fast", force=True).out_dir)
    assert any(p.startswith("kgx/") and p.endswith("_edges.tsv") for p in fast)
    with monkeypatch.context() as m:
        _per_cell_writers(m)
        slow = tree(compile_domain(mini_copy, out_root=tmp_path / "slow", force=True).out_dir)
    assert fast == slow


HOSTILE = [
    'say "hi", there',
    "back\\slash",
    "two\nlines",
    "carriage\rreturn",
    "tab\there",
    "",
    "é ümlaut 漢字 🧬",
    "control\x01char",
    "pipe|d",
    ",comma",
    "sep\u2028arator",
]


def _hostile(domain):
    """The domain with hostile cells in every free-text, optional, multivalued and number
    field the outputs carry: quotes, commas, backslashes, line breaks, tabs, control
    characters, unicode, empty strings and None, empty and non-empty tuples, -0.0 and floats."""
    from dataclasses import replace

    def text(i: int) -> str:
        return HOSTILE[i % len(HOSTILE)]

    entities = tuple(
        e._replace(
            name=f"{e.name} {text(i)}",
            description=(None, text(i), "")[i % 3],
            synonyms=((), (text(i),), (text(i), text(i + 1)))[i % 3],
            xrefs=((), ("X:1",), ("X:1", f"Y:{text(i)}", "Z:3"), ("W:0", "X:1"))[i % 4],
        )
        for i, e in enumerate(domain.entities)
    )
    # xrefs that are not exact (their own columns) and an entity's own Biolink category
    kinds = ("broad", "narrow", "close")
    inexact = tuple(
        (e.id, x, kinds[(i + j) % 3], "")
        for i, e in enumerate(entities[:9])
        for j, x in enumerate(e.xrefs)
        if j != 1
    )
    assertions = tuple(
        a._replace(
            context=(None, text(i), "")[i % 3],
            confidence=(-0.0, 1e-05, 0.1 + 0.2, 1.0, 0.0)[i % 5],
            source_databases=((), (text(i),), ("DrugBank", text(i + 2)))[i % 3],
            no_evidence_reason=(None, text(i))[i % 2],
            population_id=(None, "", a.population_id, a.subject_id)[i % 4],
        )
        for i, a in enumerate(domain.assertions)
    )
    sources = tuple(
        s._replace(title=f"{s.title} {text(i)}", citation=text(i + 3))
        for i, s in enumerate(domain.evidence_sources)
    )
    supports = [
        s._replace(recommendation_class=(None, "I", text(i))[i % 3])
        for i, s in enumerate(domain.supports)
    ]
    # several sources for some assertions, listed out of order (the KGX edges sort them)
    head = domain.evidence_sources[0].evidence_id
    supports += [s._replace(evidence_id=head) for s in domain.supports if s.evidence_id > head]
    # an inverse and a negated predicate, and readings whose qualifiers take columns the
    # assertion or its evidence also set (the later wins, as in `kgx.iter_edges`)
    first, second = domain.predicates[0].name, domain.predicates[1].name
    predicates = tuple(
        replace(p, biolink_inverse=p.name == first, biolink_negated=p.name == second)
        for p in domain.predicates
    )
    extra = (
        ("response_context_qualifier", 'a|b "q"'),
        ("population_context_qualifier", "X:1"),
        ("publications", "X:2"),
        ("knowledge_level", "prediction"),
    )
    readings = tuple(
        (
            name,
            tuple(
                replace(r, qualifiers=r.qualifiers + extra[: 1 + (j + k) % 4])
                for j, r in enumerate(rs)
            ),
        )
        for k, (name, rs) in enumerate(domain.biolink_readings)
    )
    return replace(
        domain,
        entities=entities,
        assertions=assertions,
        evidence_sources=sources,
        supports=tuple(supports),
        predicates=predicates,
        biolink_readings=readings,
        inexact_xrefs=inexact,
        entity_biolink=((entities[1].id, "biolink:Gene"),),
    )


def test_hostile_cells_are_the_per_row_writers_bytes(
    mini_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every artifact of a compile in the streamed form, made by the column-wise writers and by
    the dict-per-row and per-cell writers they replaced, over hostile cells: the same bytes
    (the contract of every faster writer: a compile's outputs never change)."""
    from compiler.api import iter_artifacts
    from compiler.backends import kgx, neo4j
    from compiler.frontend import load_domain

    monkeypatch.setattr(base, "COMPACT_ROWS", 0)
    monkeypatch.setattr(graph, "COMPACT_ROWS", 0)
    domain = _hostile(load_domain(mini_copy))
    assert any(f.member_ids for f in domain.facts) and any(f.provenance for f in domain.facts)

    def made() -> dict[str, bytes]:
        return {a.path: a.content for a in iter_artifacts(domain)}

    fast = made()
    large = base.Backend.large_document
    rows = neo4j.rows_artifact
    with monkeypatch.context() as m:
        _per_cell_writers(m)
        m.setattr(
            base.Backend,
            "large_document",
            staticmethod(
                lambda model, data, lists, ctx, texts=None: large(model, data, lists, ctx)
            ),
        )
        m.setattr(neo4j, "rows_artifact", lambda path, n, make, texts=None: rows(path, n, make))
        slow = made()
    assert fast.keys() == slow.keys()
    for path in fast:
        assert fast[path] == slow[path], path
    kg = fast["kg.json"].decode()
    assert '"say \\"hi\\", there"' in kg and '"confidence":-0.0' in kg
    edges = fast[f"kgx/{domain.name}_edges.tsv"].decode()
    assert "\tTrue\t" in edges and '"a/b ""q"""' in edges and "|" in edges
    nodes = fast[f"kgx/{domain.name}_nodes.tsv"].decode()
    assert "biolink:Gene" in nodes and "\tW:0|X:1\t" in nodes
    for batch in (1, 2, 5, 1000):
        assert b"".join(kgx.edge_tsv_chunks(domain, batch)) == slow[f"kgx/{domain.name}_edges.tsv"]
        assert b"".join(kgx.node_tsv_chunks(domain, batch)) == slow[f"kgx/{domain.name}_nodes.tsv"]


@pytest.mark.parametrize(
    "column",
    [
        ["a", "b|c", ""],
        [0.5, -0.0, float("nan")],
        [1, 2],
        [True, False],
        [None, None],
        ["a", None, ""],
        [(), ("a",), ("a", "b|c"), ("a",)],
        [(), None, "x", 1.5, True, ("y",)],
    ],
    ids=repr,
)
def test_import_cells_by_column_are_the_per_cell_ones(column: list) -> None:
    """The import files' cells made a column at a time are `_cell`'s, whatever the column holds."""
    from compiler.backends.neo4j import _cell, _cells

    assert list(_cells(column)) == list(map(_cell, column))
    assert [type(c) for c in _cells(column)] == [type(_cell(v)) for v in column]

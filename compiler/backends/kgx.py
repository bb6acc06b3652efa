"""KGX: the domain graph as Biolink nodes and edges (TSV and JSON Lines); the `kgx/` backend
and the `kgbench export -f kgx` format.

Nodes are the entities and the evidence sources; edges are the reified assertions (each
with its assertion id as the edge id) and the MEMBER_OF links. Everything is written as
Biolink and KGX expect it:

- ids are CURIEs: the domain's own under its declared prefix (kgbench.<domain>:DRG_0001), with
  the entity's exact standard-vocabulary matches in `xref`, and the terms the xrefs table
  declares broader, narrower or close (SSSOM match types) in `kgbench_broad_match`,
  `kgbench_narrow_match` and `kgbench_close_match`, never as equivalent ids;
- `category` is the class's Biolink class (evidence sources: their source type's category);
- `predicate` is the predicate's Biolink `meaning`; a predicate declared `biolink_inverse`
  has subject and object swapped (its Biolink predicate is the canonical inverse), one
  declared `biolink_negated` is written with `negated: true` (a null result);
- the predicate's declared qualifiers, the assertion's population as
  `population_context_qualifier`, its `knowledge_level` and `agent_type`, its confidence as
  `has_confidence_score`, and its evidence sources as `publications` and `has_evidence`;
- kgbench's own fields ride along under their own names (`kgbench_predicate`,
  `causal_status`, ...), which KGX carries through and does not validate.

`prefixes.json` maps every prefix the files use to its IRI (the domain's prefix and the
declared vocabularies), for consumers and for the offline `kgx validate` (tools/kgx/).

Two callers, one writer: the `kgx` backend below compiles the TSV files and the prefix map
into `generated/<domain>/kgx/` with every domain (`compiled`), so the graph a release was
generated from exists beside it as exact bytes hashed by the compiled manifest (`kgbench
publish` copies them into the release, harness/release/graph.py); `kgbench export -f kgx`
(compiler.export) writes the same rows plus JSON Lines (`emit`). It lives with the backends,
not in compiler/export/, so that the backends import nothing above them (compiler.export
imports compiler.backends, never the reverse). Compiling needs neither KGX nor its
environment.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from kgbench.io import json_bytes, jsonl_bytes
from kgbench.textscan import contains_any
from kgbench.untrusted import tsv_field

from ..biolink_entities import category, reader
from ..ir import Assertion, Domain
from . import base
from .base import CSV_BATCH, Artifact, Backend, EmitContext

FOLDER = "kgx"
LIST_DELIMITER = "|"
NODE_COLUMNS = (
    "id",
    "category",
    "name",
    "description",
    "synonym",
    "xref",
    "kgbench_broad_match",
    "kgbench_narrow_match",
    "kgbench_close_match",
    "publication_type",
    "kgbench_class",
    "kgbench_source_type",
    "year",
)
EDGE_COLUMNS = (
    "id",
    "subject",
    "predicate",
    "object",
    "primary_knowledge_source",
    "knowledge_level",
    "agent_type",
    "negated",
    "qualified_predicate",
    "object_aspect_qualifier",
    "object_direction_qualifier",
    "response_context_qualifier",
    "population_context_qualifier",
    "has_confidence_score",
    "publications",
    "has_evidence",
    "kgbench_predicate",
    "relation_class",
    "direction",
    "causal_status",
    "evidence_level",
    "validated",
    "temporality",
)
MEMBER_OF = "biolink:member_of"
# The SSSOM match types other than exact (spec/kg.yaml XrefMatch): such a term is not an
# equivalent identifier, so it is written in its own column, never in Biolink's `xref`.
INEXACT = ("broad", "narrow", "close")
# The expansion of `infores:` CURIEs (the Biolink Information Resource Registry).
INFORES = "https://w3id.org/biolink/infores/"


def nodes(domain: Domain) -> list[dict[str, Any]]:
    return list(iter_nodes(domain))


def edges(domain: Domain) -> list[dict[str, Any]]:
    return list(iter_edges(domain))


def iter_nodes(domain: Domain) -> Iterator[dict[str, Any]]:
    """The node records, entities then evidence sources, in the spec's order."""
    classes = domain.class_by_name
    matches = domain.xref_matches
    for e in domain.entities:
        rec: dict[str, Any] = {
            "id": domain.curie(e.id),
            "category": [category(domain, e.id, classes[e.category])],
            "name": e.name,
            "kgbench_class": e.category,
        }
        if e.description:
            rec["description"] = e.description
        if e.synonyms:
            rec["synonym"] = list(e.synonyms)
        exact = [x for x in e.xrefs if (e.id, x) not in matches]
        if exact:
            rec["xref"] = exact
        for kind in INEXACT:
            terms = [x for x in e.xrefs if matches.get((e.id, x)) == kind]
            if terms:
                rec[f"kgbench_{kind}_match"] = terms
        yield rec
    yield from source_nodes(domain)


def source_nodes(domain: Domain) -> Iterator[dict[str, Any]]:
    """The evidence sources' node records (after the entities' in `iter_nodes`)."""
    categories = dict(domain.source_type_categories)
    meanings = dict(domain.source_type_meanings)
    for ev in domain.evidence_sources:
        rec = {
            "id": domain.curie(ev.evidence_id),
            "category": [categories.get(ev.source_type, domain.evidence_class_uri)],
            "name": ev.title,
            "description": ev.citation,
            "kgbench_class": "EvidenceSource",
            "kgbench_source_type": ev.source_type,
            "year": ev.year,
        }
        if ev.source_type in meanings:
            rec["publication_type"] = [meanings[ev.source_type]]
        yield rec


def evidence_ids(domain: Domain) -> dict[str, str | list[str]]:
    """Each assertion's evidence ids, as the IR's own str objects (CURIEs are made per row):
    one id alone, a list only for several, in the supports' order. New CURIE strings and a
    list per assertion, held while the file is written, cost most of a GB at 4M assertions."""
    supports = domain.supports
    evidence: dict[str, str | list[str]] = dict(
        zip(map(itemgetter(0), supports), map(itemgetter(1), supports), strict=True)
    )
    if len(evidence) == len(supports):  # one source each (in C)
        return evidence
    evidence = {}
    for s in supports:
        held = evidence.get(s.assertion_id)
        if held is None:
            evidence[s.assertion_id] = s.evidence_id
        elif held.__class__ is str:
            evidence[s.assertion_id] = [held, s.evidence_id]
        else:
            held.append(s.evidence_id)
    return evidence


def iter_edges(domain: Domain) -> Iterator[dict[str, Any]]:
    """The edge records: each assertion (its id the edge id), then the MEMBER_OF links."""
    preds = domain.predicate_by_name
    # `domain.curie` spelled inline (prefix + ":" + id): millions of calls at scale
    pre = f"{domain.curie_prefix}:"
    evidence = evidence_ids(domain)
    read = reader(domain)
    knowledge_source = domain.knowledge_source
    for a in domain.assertions:
        p = preds[a.predicate]
        reading = read(a)
        subject, obj = pre + a.subject_id, pre + a.object_id
        if p.biolink_inverse:
            subject, obj = obj, subject
        rec: dict[str, Any] = {
            "id": pre + a.assertion_id,
            "subject": subject,
            "predicate": reading.predicate,
            "object": obj,
            "primary_knowledge_source": knowledge_source,
            "knowledge_level": a.knowledge_level,
            "agent_type": a.agent_type,
            "has_confidence_score": a.confidence,
            "kgbench_predicate": a.predicate,
            "relation_class": a.relation_class,
            "direction": a.direction,
            "causal_status": a.causal_status,
            "evidence_level": a.evidence_level,
            "validated": a.validated,
            "temporality": a.temporality,
        }
        if p.biolink_negated:
            rec["negated"] = True
        for slot, value in reading.qualifiers:
            rec[slot] = value
        if a.population_id:
            rec["population_context_qualifier"] = pre + a.population_id
        ids = evidence.get(a.assertion_id)
        sources = [pre + i for i in ([ids] if ids.__class__ is str else sorted(ids or ()))]
        if sources:
            rec["publications"] = sources
            rec["has_evidence"] = sources
        yield rec
    yield from member_edges(domain)


def member_edges(domain: Domain) -> Iterator[dict[str, Any]]:
    """The MEMBER_OF edge records (after the assertions' in `iter_edges`)."""
    for cls in domain.intervention_classes:
        for member in cls.member_ids:
            edge_id = domain.curie(f"MEMBER_OF.{cls.class_id}.{member}")
            yield {
                "id": edge_id,
                "subject": domain.curie(member),
                "predicate": MEMBER_OF,
                "object": domain.curie(cls.class_id),
                "primary_knowledge_source": domain.knowledge_source,
                "knowledge_level": "knowledge_assertion",
                "agent_type": "manual_agent",
                "kgbench_predicate": "MEMBER_OF",
            }


_MISSING = object()
_FIELD = {name: i for i, name in enumerate(Assertion._fields)}
# The edge columns that are an assertion's own field, under another name or its own.
_EDGE_FIELDS = {
    "knowledge_level": "knowledge_level",
    "agent_type": "agent_type",
    "has_confidence_score": "confidence",
    "kgbench_predicate": "predicate",
    "relation_class": "relation_class",
    "direction": "direction",
    "causal_status": "causal_status",
    "evidence_level": "evidence_level",
    "validated": "validated",
    "temporality": "temporality",
}


def node_tsv_chunks(domain: Domain, batch: int = CSV_BATCH) -> Iterator[bytes]:
    """`tsv_chunks(NODE_COLUMNS, iter_nodes(domain))`, the same bytes, with the entities'
    nodes made column by column (each column's values for a batch as `iter_nodes` sets them,
    None where it sets nothing), without a dict per node; the evidence sources (few) are
    `source_nodes`' records."""
    return _tsv_stream(NODE_COLUMNS, _node_cells(domain, batch), source_nodes(domain), batch)


def _node_cells(domain: Domain, batch: int) -> Iterator[list[list[str]]]:
    """Per batch of entities, each node column's cells, as `iter_nodes` sets them."""
    entities = domain.entities
    pre = f"{domain.curie_prefix}:"
    biolink = {c.name: c.biolink for c in domain.entity_classes}
    declared = dict(domain.entity_biolink)  # `category`: an entity's own, else its class's
    matches = domain.xref_matches
    for start in range(0, len(entities), batch):
        rows = entities[start : start + batch]
        ids, classes, names, synonyms, descriptions, xrefs = zip(*rows, strict=True)
        values: dict[str, Sequence[Any]] = {c: [None] * len(rows) for c in NODE_COLUMNS}
        values["id"] = list(map(pre.__add__, ids))
        values["category"] = [  # a list of one: its item's cell
            declared.get(i, biolink[c]) for i, c in zip(ids, classes, strict=True)
        ]
        values["name"] = names
        values["kgbench_class"] = classes
        values["description"] = descriptions  # an empty one is left out: the same empty cell
        values["synonym"] = [list(s) if s else None for s in synonyms]
        if matches:  # some xrefs are not exact: each in its own column
            pairs = list(zip(ids, xrefs, strict=True))
            values["xref"] = [[x for x in xs if (i, x) not in matches] or None for i, xs in pairs]
            for kind in INEXACT:
                values[f"kgbench_{kind}_match"] = [
                    [x for x in xs if matches.get((i, x)) == kind] or None for i, xs in pairs
                ]
        else:
            values["xref"] = [list(x) if x else None for x in xrefs]
        yield [_column_cells(c, values[c]) for c in NODE_COLUMNS]


def edge_tsv_chunks(domain: Domain, batch: int = CSV_BATCH) -> Iterator[bytes]:
    """`tsv_chunks(EDGE_COLUMNS, iter_edges(domain))`, the same bytes, with the assertions'
    edges made column by column: each column's values for a batch of assertions as
    `iter_edges` sets them (in its order: the assertion's fields, `negated`, the reading's
    qualifiers, the population, the evidence), without a dict per edge. The MEMBER_OF edges
    (few) are `member_edges`' records."""
    return _tsv_stream(EDGE_COLUMNS, _edge_cells(domain, batch), member_edges(domain), batch)


def _edge_cells(domain: Domain, batch: int) -> Iterator[list[list[str]]]:
    """Per batch of assertions, each edge column's cells, as `iter_edges` sets them; a list
    of values two columns share (the evidence) is formatted once."""
    assertions = domain.assertions
    values = _edge_values(domain)
    for start in range(0, len(assertions), batch):
        columns = values(assertions[start : start + batch])
        made: dict[int, list[str]] = {}
        yield [
            made.get(id(columns[c]))
            or made.setdefault(id(columns[c]), _column_cells(c, columns[c]))
            for c in EDGE_COLUMNS
        ]


def _tsv_stream(
    columns: tuple[str, ...],
    batches: Iterator[list[list[str]]],
    records: Iterable[dict[str, Any]],
    batch: int,
) -> Iterator[bytes]:
    """The TSV bytes of the column-wise `batches` (per batch, each column's cells), then of
    the few `records` through `tsv_chunks`, with one header: what `tsv_chunks` gives for the
    batches' rows followed by the records."""
    header = "\t".join(columns) + "\n"
    written = False
    for cells in batches:
        lines = "\n".join(map("\t".join, zip(*cells, strict=True))) + "\n"
        yield ((header if not written else "") + lines).encode("utf-8")
        written = True
    for i, chunk in enumerate(tsv_chunks(columns, records, batch)):
        if i == 0 and written:  # the header is written
            chunk = chunk[len(header) :]
        if chunk:
            yield chunk


def _edge_values(domain: Domain):
    """batch of assertions -> {edge column: its values}, as `iter_edges` sets them (None where
    it sets nothing), made with the lookups `iter_edges` builds, once."""
    pre = f"{domain.curie_prefix}:"
    inverse = {p.name: p.biolink_inverse for p in domain.predicates}
    negated = {p.name: True if p.biolink_negated else None for p in domain.predicates}
    evidence = evidence_ids(domain)
    read = reader(domain)
    knowledge_source = domain.knowledge_source
    wanted = set(EDGE_COLUMNS)

    def values(batch: Sequence[Assertion]) -> dict[str, Sequence[Any]]:
        n = len(batch)
        fields = list(zip(*batch, strict=True))
        ids = fields[_FIELD["assertion_id"]]
        preds = fields[_FIELD["predicate"]]
        subjects = list(map(pre.__add__, fields[_FIELD["subject_id"]]))
        objects = list(map(pre.__add__, fields[_FIELD["object_id"]]))
        flipped = list(map(inverse.__getitem__, preds))
        readings = list(map(read, batch))
        out: dict[str, Sequence[Any]] = {c: [None] * n for c in EDGE_COLUMNS}
        unset = dict(out)
        out["id"] = list(map(pre.__add__, ids))
        out["subject"] = [o if f else s for s, o, f in zip(subjects, objects, flipped, strict=True)]
        out["object"] = [s if f else o for s, o, f in zip(subjects, objects, flipped, strict=True)]
        out["predicate"] = [r.predicate for r in readings]
        out["primary_knowledge_source"] = [knowledge_source] * n
        for column, field in _EDGE_FIELDS.items():
            out[column] = fields[_FIELD[field]]
        out["negated"] = list(map(negated.__getitem__, preds))
        distinct = {id(r): r for r in readings}
        slots = {s for r in distinct.values() for s, _ in r.qualifiers if s in wanted}
        keys = list(map(id, readings))
        for slot in sorted(slots):  # a reading without the slot leaves the column as it was
            given = {k: dict(r.qualifiers).get(slot, _MISSING) for k, r in distinct.items()}
            out[slot] = [
                v if (q := given[k]) is _MISSING else q
                for v, k in zip(out[slot], keys, strict=True)
            ]
        column = "population_context_qualifier"
        out[column] = [
            pre + p if p else v
            for p, v in zip(fields[_FIELD["population_id"]], out[column], strict=True)
        ]
        # one source is its CURIE (the cell of a list of one is its item's), several a list
        sources = [
            pre + x if x.__class__ is str else None if x is None else [pre + i for i in sorted(x)]
            for x in map(evidence.get, ids)
        ]
        for column in ("publications", "has_evidence"):  # one list for both: cells made once
            given = out[column]
            out[column] = (
                sources
                if given is unset[column]
                else [v if s is None else s for s, v in zip(sources, given, strict=True)]
            )
        return out

    return values


def _cell(column: str, value: Any) -> str:
    """One TSV cell as KGX reads it: lists joined by '|', no tabs, newlines or stray '|'."""
    if value is None:
        return ""
    if column == "negated":  # KGX casts any non-empty string in this column to True
        return "True" if value else ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return LIST_DELIMITER.join(_text(v) for v in value)
    return _text(value)


def _text(value: Any) -> str:
    text = str(value)
    for breaking in ("\t", "\r", "\n", "\u2028", "\u2029", "\x85"):  # line-based readers split
        text = text.replace(breaking, " ")
    return text.replace("|", "/")


def tsv_rewrites(kind: str, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> list[str]:
    """What the TSV writes otherwise than the domain holds it: a value holding `|` (KGX's
    list delimiter, which would split it) is written with `/`. The JSON Lines files keep the
    value, so the two exports differ there, and `kgbench export` says so (reliability review
    2026-12, kgx.pipe-name: a name was rewritten without a word)."""
    out = []
    for row in rows:
        for column in columns:
            value = row.get(column)
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str) and LIST_DELIMITER in text:
                    out.append(
                        f"{kind} {row.get('id')}: {column} {text!r} holds '{LIST_DELIMITER}', "
                        f"KGX's TSV list delimiter; the TSV writes {_text(text)!r} (the JSON "
                        "Lines files keep it as it is)"
                    )
    return out


def warnings(domain: Domain) -> list[str]:
    """`tsv_rewrites` of the nodes and edges `emit` writes."""
    return [
        *tsv_rewrites("node", NODE_COLUMNS, nodes(domain)),
        *tsv_rewrites("edge", EDGE_COLUMNS, edges(domain)),
    ]


def tsv_bytes(columns: tuple[str, ...], rows: Iterable[dict[str, Any]]) -> bytes:
    """The TSV KGX reads with pandas' default quoting: a cell holding a double quote is
    quoted (`tsv_field`), else a name starting with `"` opened a quoted field and swallowed
    the rows after it."""
    return b"".join(tsv_chunks(columns, rows))


def tsv_chunks(
    columns: tuple[str, ...], rows: Iterable[dict[str, Any]], batch: int = CSV_BATCH
) -> Iterator[bytes]:
    """The same bytes as `tsv_bytes`, `batch` rows at a time (a large graph is never held).

    Built column by column: a batch's cells of one column are formatted together, and a
    column whose texts hold nothing `_text` or `tsv_field` would rewrite (the usual case)
    takes them as they are, instead of three scans and a quote check per cell (the per-cell
    path was a seventh of a 250,000-assertion compile's CPU time)."""
    head = "\t".join(columns) + "\n"
    it = iter(rows)
    while chunk := list(itertools.islice(it, batch)):
        cells = [_column_cells(c, [r.get(c) for r in chunk]) for c in columns]
        yield (head + "\n".join(map("\t".join, zip(*cells, strict=True))) + "\n").encode("utf-8")
        head = ""
    if head:  # no rows: the header alone
        yield head.encode("utf-8")


_BOOLS = ("false", "true")
_NEGATED = ("", "True")
# What `_text` or `tsv_field` rewrites in a text; a column without any of them is written as is.
_REWRITTEN = '\t\r\n\u2028\u2029\x85|"'


def _column_cells(column: str, values: list[Any]) -> list[str]:
    """`tsv_field(_cell(column, v))` of each value, the same text, by a fast path for the
    plain types (str, int, float, bool, None, lists of str) when no text of the column holds
    a character that would be rewritten; anything else takes the per-cell path."""
    if column == "negated":  # its own casing (`_cell`): "True" or empty, nothing to quote
        return list(map(_NEGATED.__getitem__, map(bool, values)))
    kinds = set(map(type, values))
    if kinds == {str}:  # most columns: ids, names, enumerations
        if not contains_any("\x00".join(values), _REWRITTEN):
            return values
        return [tsv_field(_cell(column, v)) for v in values]
    texts = [v for v in values if v.__class__ is str]
    if list in kinds:
        for v in values:
            if v.__class__ is list:
                texts.extend(v)
    if set(map(type, texts)) - {str} or contains_any("\x00".join(texts), _REWRITTEN):
        return [tsv_field(_cell(column, v)) for v in values]
    # `_plain_cell` of each value, by the column's type where it has one
    if kinds == {float}:
        return list(map(float.__repr__, values))  # str(float): digits, 'inf', 'nan'
    if kinds == {bool}:
        return list(map(_BOOLS.__getitem__, values))
    if kinds == {list}:
        return list(map(LIST_DELIMITER.join, values))
    if kinds == {str, type(None)}:
        return ["" if v is None else v for v in values]
    return [_plain_cell(column, v) for v in values]


def _plain_cell(column: str, value: Any) -> str:
    """`tsv_field(_cell(column, value))` for a value whose texts need no rewriting."""
    cls = value.__class__
    if cls is str:
        return value
    if value is None:
        return ""
    if cls is bool:
        return "true" if value else "false"
    if cls is int or cls is float:
        return str(value)  # digits, sign, '.', 'e', 'inf', 'nan': nothing to rewrite
    if cls is list:
        return LIST_DELIMITER.join(value)
    return tsv_field(_cell(column, value))


def prefix_context(domain: Domain) -> dict[str, str]:
    """Every prefix the export uses, with its IRI (biolink, the domain's, the vocabularies)."""
    context = {"biolink": "https://w3id.org/biolink/vocab/", "infores": INFORES}
    context[domain.curie_prefix] = domain.curie_expansion
    context.update(dict(domain.xref_prefixes))
    return dict(sorted(context.items()))


def compiled(domain: Domain, folder: str = FOLDER) -> list[Artifact]:
    """The export as compile artifacts under `folder`/: the TSV node and edge files KGX
    reads and the prefix map, written by every compile so that a release can ship the graph
    it was generated from (`kgbench publish` copies them; see harness/release/graph.py).
    Streamed, like the other large outputs, beyond `COMPACT_ROWS` rows."""
    stem = f"{folder}/{domain.name}"
    n_nodes = len(domain.entities) + len(domain.evidence_sources)
    n_edges = len(domain.assertions) + sum(len(c.member_ids) for c in domain.intervention_classes)
    out = []
    for path, columns, n, make in (
        (f"{stem}_nodes.tsv", NODE_COLUMNS, n_nodes, iter_nodes),
        (f"{stem}_edges.tsv", EDGE_COLUMNS, n_edges, iter_edges),
    ):
        if n > base.COMPACT_ROWS:  # read when called: a test lowers it
            columnwise = edge_tsv_chunks if make is iter_edges else node_tsv_chunks
            out.append(Artifact.streamed(path, lambda c=columnwise: c(domain)))
        else:
            out.append(Artifact(path, tsv_bytes(columns, make(domain))))
    out.append(Artifact(f"{folder}/prefixes.json", json_bytes(prefix_context(domain))))
    return out


def emit(domain: Domain) -> list[Artifact]:
    node_rows, edge_rows = nodes(domain), edges(domain)
    stem = domain.name
    return [
        Artifact(f"{stem}_nodes.tsv", tsv_bytes(NODE_COLUMNS, node_rows)),
        Artifact(f"{stem}_edges.tsv", tsv_bytes(EDGE_COLUMNS, edge_rows)),
        Artifact(f"{stem}_nodes.jsonl", jsonl_bytes(node_rows)),
        Artifact(f"{stem}_edges.jsonl", jsonl_bytes(edge_rows)),
        Artifact("prefixes.json", json_bytes(prefix_context(domain))),
    ]


class KgxBackend(Backend):
    name = "kgx"
    format_version = "1.0.0"
    outputs = (f"{FOLDER}/*_nodes.tsv", f"{FOLDER}/*_edges.tsv", f"{FOLDER}/prefixes.json")

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        return compiled(domain, FOLDER)


BACKEND = KgxBackend()

"""The pairing checks of a bulk load answered from the import files, on the client, while
the server imports and starts (issue 33, item 4).

The three pairing checks (`direct_edges_paired`, `assertions_paired`, `assertions_evidenced`)
test the rows the compiler wrote: each direct edge and its assertion node agree on id,
predicate and ends, each assertion has one subject and one object, each assertion has
evidence or a reason. `neo4j-admin database import` copies those rows without reading them:
one node per node row (its id, labels and properties as the row spells them; a repeated id
fails the import), one relationship per relationship row between the nodes its start and end
ids name (a missing one fails the import). So the checks have the same answer on the rows as
on the imported graph, and the rows are on disk before the import starts. Run as written on
the server after the import, the checks cost 7.6 s at 1M records (cold JVM, three scans with
an index seek per edge), more than the stop, start and import's own margin; read here, in a
thread beside the import, they cost nothing on the critical path.

What this module answers, it answers exactly, on its own reading of the files, and only when
that reading is the importer's beyond doubt; anything else is left to the server
(`pairing_values` returns None, or leaves a check out):

- the plan's check must be, word for word, the compiled Cypher `TEMPLATES` spells, so a
  changed check is never answered by an old reading of it (a test compiles a domain and checks
  every template matches);
- the import plan must use the plain form (one file per entry, header in the file, string
  ids, ids in the `id` property, one id space) and each column read must be a string column;
- every id, label, type, predicate and assertion id read must be a plain token
  (`_TOKEN`: letters, digits, `_ . : -`), so every CSV reader splits it alike; an empty one
  is null to the importer and matches nothing here either;
- a stated reason counts only when non-empty (a quoted empty one, "" to the importer, reads
  as absent here: the check then fails here and runs on the server, which decides);
- ids must be unique and every relationship's ends must exist (else the import fails anyway).

A check whose answer here is not its expected value is not answered here either: the server
runs it as written, so a failed load reports the graph's own value, as a transactional one
does.
"""

from __future__ import annotations

import csv
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ..compiled import CompiledDomain

PAIRING = ("direct_edges_paired", "assertions_paired", "assertions_evidenced")
_TOKEN = r"^[A-Za-z0-9_.:\-]+$"
_DIRECT = re.compile(r"MATCH \(s:(\w+)\)-\[r:(\w+(?:\|\w+)*)\]->\(o:\1\) WHERE NOT EXISTS")
_NAMED = (
    "MATCH (s)<-[:HAS_SUBJECT]-(a:{label}:Assertion {{id: r.assertion_id}})-[:HAS_OBJECT]->(o) "
    "USING INDEX SEEK a:{label}(id) WHERE a.predicate = type(r)"
)
TEMPLATES = {
    "direct_edges_paired": (
        "MATCH (s:{label})-[r:{types}]->(o:{label}) WHERE NOT EXISTS {{ " + _NAMED + " }} "
        "RETURN count(r) AS value"
    ),
    "assertions_paired": (
        "MATCH (n:{label}:Assertion) WITH count(n) AS total "
        "OPTIONAL MATCH (s:{label})-[r:{types}]->(o:{label}) WHERE EXISTS {{ " + _NAMED + " "
        "AND COUNT {{ (a)-[:HAS_SUBJECT]->() }} = 1 AND COUNT {{ (a)-[:HAS_OBJECT]->() }} = 1 }} "
        "WITH total, count(DISTINCT r.assertion_id) AS paired RETURN total - paired AS value"
    ),
    "assertions_evidenced": (
        "MATCH (a:{label}:Assertion) WHERE NOT EXISTS {{ (:EvidenceSource)-[:SUPPORTS]->(a) }} "
        "AND a.no_evidence_reason IS NULL RETURN count(a) AS value"
    ),
}


class _Unread(Exception):
    """The files are not in a form this module reads as the importer does."""


def recognised(domain: CompiledDomain) -> tuple[str, tuple[str, ...], list[str]] | None:
    """(domain label, direct edge types, the pairing checks whose Cypher is `TEMPLATES`')."""
    cyphers = {ch.name: " ".join(ch.cypher.split()) for ch in domain.plan.checks}
    found = _DIRECT.match(cyphers.get("direct_edges_paired", ""))
    if not found:
        return None
    label, types = found.group(1), found.group(2)
    if label != domain.plan.label:
        return None
    names = [
        name
        for name in PAIRING
        if cyphers.get(name) == TEMPLATES[name].format(label=label, types=types)
    ]
    return label, tuple(types.split("|")), names


@dataclass
class _Nodes:
    ids: pa.Array
    labels: pa.Array  # the raw :LABEL cell
    predicate: pa.Array
    reason: np.ndarray  # a non-empty no_evidence_reason


@dataclass
class _Rels:
    start: pa.Array
    end: pa.Array
    type: pa.Array
    assertion_id: pa.Array


def _header(path: Path) -> list[tuple[str, str]]:
    """(name, type) of each column of the file's header row (`name:type`, type may be '')."""
    with open(path, encoding="utf-8", newline="") as fh:
        row = next(csv.reader(fh), None)
    if not row:
        raise _Unread(f"{path}: no header")
    return [(cell.split(":", 1)[0], cell.split(":", 1)[1] if ":" in cell else "") for cell in row]


def _column(columns: list[tuple[str, str]], name: str, types: tuple[str, ...]) -> str | None:
    """The header cell of property/field `name` when its type is one of `types`; None if the
    file lacks it; _Unread if it is there with another type or twice."""
    cells = [f"{n}:{t}" if t else n for n, t in columns if n == name]
    if not cells:
        return None
    if len(cells) > 1 or next(t for n, t in columns if n == name) not in types:
        raise _Unread(f"column {cells[0]}")
    return cells[0]


def _special(columns: list[tuple[str, str]], kind: str) -> str:
    """The one header cell of type `kind` (ID, START_ID, ...), its group being the id space."""
    cells = [(n, t) for n, t in columns if re.fullmatch(rf"{kind}(\(\w+\))?", t)]
    if len(cells) != 1:
        raise _Unread(f"{len(cells)} {kind} columns")
    name, kind_text = cells[0]
    return f"{name}:{kind_text}"


def _read(path: Path, cells: list[str], multiline: bool) -> pa.Table:
    table = pcsv.read_csv(
        path,
        parse_options=pcsv.ParseOptions(
            delimiter=",", quote_char='"', double_quote=True, escape_char=False,
            newlines_in_values=multiline,
        ),
        convert_options=pcsv.ConvertOptions(
            include_columns=cells, column_types={c: pa.string() for c in cells},
            strings_can_be_null=False, quoted_strings_can_be_null=False,
        ),
    )  # fmt: skip
    return table


def _tokens(array: pa.Array, *, empty_ok: bool) -> None:
    """_Unread unless every value is a plain token (or empty, where allowed)."""
    plain = pc.match_substring_regex(array, _TOKEN)
    if empty_ok:
        plain = pc.or_(plain, pc.equal(array, ""))
    if not pc.all(plain).as_py():
        raise _Unread("a value that is not a plain token")


def _empty(n: int) -> pa.Array:
    return pa.array([""] * n, pa.string())


def _chunks(parts: list[pa.Array]) -> pa.Array:
    return (
        pa.concat_arrays(
            [p.combine_chunks() if isinstance(p, pa.ChunkedArray) else p for p in parts]
        )
        if parts
        else pa.array([], pa.string())
    )


def _nodes(folder: Path, files: list[str], multiline: bool, space: list[str]) -> _Nodes:
    ids, labels, predicate, reason = [], [], [], []
    for name in files:
        path = folder / name
        columns = _header(path)
        id_cell = _special(columns, "ID")
        if not id_cell.startswith("id:"):
            raise _Unread(f"{name}: ids not in the id property")
        space.append(id_cell.split(":", 1)[1])
        label_cell = _special(columns, "LABEL") if any(t == "LABEL" for _, t in columns) else None
        pred_cell = _column(columns, "predicate", ("", "string"))
        reason_cell = _column(columns, "no_evidence_reason", ("", "string"))
        cells = [c for c in (id_cell, label_cell, pred_cell, reason_cell) if c]
        table = _read(path, cells, multiline)
        n = table.num_rows
        ids.append(table[id_cell])
        labels.append(table[label_cell] if label_cell else _empty(n))
        predicate.append(table[pred_cell] if pred_cell else _empty(n))
        reason.append(
            pc.not_equal(table[reason_cell], "").to_numpy(zero_copy_only=False)
            if reason_cell
            else np.zeros(n, bool)
        )
    return _Nodes(
        _chunks(ids),
        _chunks(labels),
        _chunks(predicate),
        np.concatenate(reason or [np.zeros(0, bool)]),
    )


def _rels(folder: Path, files: list[str], multiline: bool, space: list[str]) -> _Rels:
    start, end, kind, named = [], [], [], []
    for name in files:
        path = folder / name
        columns = _header(path)
        start_cell, end_cell = _special(columns, "START_ID"), _special(columns, "END_ID")
        type_cell = _special(columns, "TYPE")
        space += [
            start_cell.split(":", 1)[1].replace("START_", ""),
            end_cell.split(":", 1)[1].replace("END_", ""),
        ]
        named_cell = _column(columns, "assertion_id", ("", "string"))
        cells = [c for c in (start_cell, end_cell, type_cell, named_cell) if c]
        table = _read(path, cells, multiline)
        start.append(table[start_cell])
        end.append(table[end_cell])
        kind.append(table[type_cell])
        named.append(table[named_cell] if named_cell else _empty(table.num_rows))
    return _Rels(_chunks(start), _chunks(end), _chunks(kind), _chunks(named))


def _label_sets(labels: pa.Array, delimiter: str) -> tuple[np.ndarray, list[set[str]]]:
    """The dictionary code of each raw :LABEL cell and each distinct cell's label set."""
    encoded = pc.dictionary_encode(labels)
    sets = [set(filter(None, v.split(delimiter))) for v in encoded.dictionary.to_pylist()]
    if any(not re.fullmatch(_TOKEN, x) for labels_of in sets for x in labels_of):
        raise _Unread("a label that is not a plain token")
    return _codes(encoded), sets


def _codes(encoded: pa.Array | pa.ChunkedArray) -> np.ndarray:
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _encode(parts: list[pa.Array]) -> tuple[list[np.ndarray], pa.Array]:
    """One code per distinct value across `parts` (equal values, equal codes; the first
    part's values numbered first, in order), as one array per part, and the values by code.
    _Unread unless every distinct value is a plain token or empty."""
    encoded = pc.dictionary_encode(pa.chunked_array(parts, pa.string())).combine_chunks()
    values = encoded.dictionary
    plain = pc.or_(pc.match_substring_regex(values, _TOKEN), pc.equal(values, ""))
    if not pc.all(plain).as_py():
        raise _Unread("a value that is not a plain token")
    codes = _codes(encoded)
    bounds = np.cumsum([0, *(len(p) for p in parts)])
    return [codes[a:b] for a, b in itertools.pairwise(bounds)], values


def _code(values: pa.Array, value: str) -> int:
    """`value`'s code in `_encode`'s `values`, -1 if absent."""
    return int(pc.index(values, value).as_py())


def _where(codes: np.ndarray, sets: list[set[str]], need: set[str]) -> np.ndarray:
    return np.array([need <= s for s in sets] or [False], bool)[codes]


def _values(
    nodes: _Nodes, rels: _Rels, label: str, types: tuple[str, ...], delimiter: str
) -> dict[str, int]:
    """The three checks' values, computed as the compiled Cypher counts them in the graph
    the importer makes of these rows."""
    n = len(nodes.ids)
    # node ids are numbered 0..n-1 in file order exactly when none repeats; an end or a
    # named assertion with a code >= n names no node
    (ids, start, end, named), id_values = _encode(
        [nodes.ids, rels.start, rels.end, rels.assertion_id]
    )
    if not (ids == np.arange(n)).all() or 0 <= _code(id_values, "") < n:
        raise _Unread("a repeated or empty node id (the import fails on it)")
    if (start >= n).any() or (end >= n).any():
        raise _Unread("a relationship to a missing node (the import fails on it)")
    (kind, predicate), kind_values = _encode([rels.type, nodes.predicate])
    labels, sets = _label_sets(nodes.labels, delimiter)
    in_domain = _where(labels, sets, {label})
    assertion = _where(labels, sets, {label, "Assertion"})
    source = _where(labels, sets, {"EvidenceSource"})

    def role(name: str) -> tuple[pa.Array, np.ndarray]:
        """(assertion, node) keys of the `name` relationships, and each node's count of
        them going out."""
        mask = kind == _code(kind_values, name)
        return pa.array(start[mask] * n + end[mask]), np.bincount(start[mask], minlength=n)

    subject_keys, subjects = role("HAS_SUBJECT")
    object_keys, objects = role("HAS_OBJECT")
    direct_codes = [_code(kind_values, t) for t in types]
    direct = np.isin(kind, direct_codes) & in_domain[start] & in_domain[end]
    s, o, a, t = start[direct], end[direct], named[direct], kind[direct]
    a = np.where(a < n, a, 0)
    known = named[direct] < n

    def has(keys: np.ndarray, key_set: pa.Array) -> np.ndarray:
        return pc.is_in(pa.array(keys), value_set=key_set).to_numpy(zero_copy_only=False)

    paired = (
        known
        & assertion[a]
        & (predicate[a] == t)
        & has(a * n + s, subject_keys)
        & has(a * n + o, object_keys)
    )
    single = paired & (subjects[a] == 1) & (objects[a] == 1)
    supports = (kind == _code(kind_values, "SUPPORTS")) & source[start]
    supported = np.bincount(end[supports], minlength=n) > 0
    return {
        "direct_edges_paired": int((~paired).sum()),
        "assertions_paired": int(assertion.sum())
        - int(np.count_nonzero(np.bincount(a[single], minlength=n))),
        "assertions_evidenced": int((assertion & ~supported & ~nodes.reason).sum()),
    }


def file_values(domain: CompiledDomain, plan: dict) -> dict[str, int] | None:
    """Each pairing check's value read from `domain`'s import files (`plan`: import.json),
    for the checks `recognised` finds; None when the files or checks are not in the form
    this module reads (module doc)."""
    found = recognised(domain)
    if found is None or not found[2]:
        return None
    label, types, names = found
    entries = [*plan["nodes"], *plan["relationships"]]
    if plan.get("id_type") != "string" or any("=" in e or "," in e for e in entries):
        return None
    folder = domain.import_dir
    multiline = bool(plan.get("multiline_fields"))
    space: list[str] = []
    try:
        nodes = _nodes(folder, list(plan["nodes"]), multiline, space)
        rels = _rels(folder, list(plan["relationships"]), multiline, space)
        if len(set(space)) != 1:
            raise _Unread("more than one id space")
        got = _values(nodes, rels, label, types, plan["array_delimiter"])
    except (_Unread, pa.ArrowInvalid, OSError, UnicodeDecodeError):
        return None
    return {name: got[name] for name in names}


def pairing_values(domain: CompiledDomain, plan: dict) -> dict[str, int]:
    """The pairing checks `file_values` answers with their expected value; the others (and
    all of them when the files cannot be read here) are the server's to run."""
    got = file_values(domain, plan) or {}
    expect = {ch.name: int(ch.expect) for ch in domain.plan.checks}
    return {name: value for name, value in got.items() if value == expect[name]}

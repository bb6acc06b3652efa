"""The graph a release was generated from, shipped inside the release as its KGX export.

Every compile writes the domain's graph as KGX files under generated/<domain>/kgx/ (the
compiler's `kgx` backend, compiler/backends/kgx.py), hashed by the compiled manifest. Publishing
copies exactly those bytes into the release folder (release/kgx/...), where the release
manifest hashes them like every other file and its `graph` section says what they are:

    "graph": {"format": "kgx", "nodes": "kgx/<d>_nodes.tsv", "edges": "kgx/<d>_edges.tsv",
              "prefixes": "kgx/prefixes.json", "id_prefix": "kgbench.<d>", "node_count": N,
              "edge_count": M, "compiled_manifest_sha256": ..., "biolink_model_version": ...}

so a user can join the benchmark's graph to another KG (PrimeKG, RTX-KG2, SPOKE) by the
release digest. Publishing refuses an export that is not the compile's own (a file edited
or left from another compile: its sha256 differs from the compiled manifest's).

`graph_problems` is what `verify-release` adds: the section is present (release format
1.1.0 on), names files the manifest lists, the files parse as KGX TSV with unique node and
edge ids and no edge to a missing node, the counts agree, and every assertion, evidence
source and intervention the gold cites is an edge or node of the shipped graph, so the graph
is the one the gold was built from, not merely a graph. Like the rest of harness.release it
needs only the release folder.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgbench import untrusted
from kgbench.errors import UserError
from kgbench.io import sha256_bytes

from ..gold_layout import GRAPH_DIR

GRAPH_FORMAT = "kgx"
# The release format from which a release must ship its graph (1.0.0 releases predate it).
GRAPH_SINCE = (1, 1, 0)
NODE_FIELDS = ("id", "category")
EDGE_FIELDS = ("id", "subject", "predicate", "object")
SHOWN = 5  # ids named in one problem; the rest are counted


def graph_files(root: Path, compiled_manifest: dict[str, Any], domain: str) -> dict[str, bytes]:
    """The compiled KGX export of a domain (release path -> bytes), checked against the
    hashes the compile recorded: what is shipped is the graph the compile wrote."""
    entries = [
        e for e in compiled_manifest.get("outputs") or [] if e["path"].startswith(f"{GRAPH_DIR}/")
    ]
    if not entries:
        raise UserError(
            f"{root}: the compiled domain has no KGX export ({GRAPH_DIR}/ is not among its "
            f"outputs; it was compiled by an older kgbench): recompile it with "
            f"`kgbench compile --domain {domain}`, regenerate, and publish again"
        )
    files: dict[str, bytes] = {}
    for e in entries:
        path = root / e["path"]
        if not path.is_file():
            raise UserError(
                f"{path}: missing, but the compiled manifest lists it; recompile with "
                f"`kgbench compile --domain {domain}`"
            )
        data = path.read_bytes()
        if sha256_bytes(data) != e["sha256"]:
            raise UserError(
                f"{path}: not the file the compile wrote (sha256 {sha256_bytes(data)}, the "
                f"compiled manifest says {e['sha256']}): a release ships only the compiled "
                f"graph; recompile with `kgbench compile --domain {domain}`"
            )
        files[e["path"]] = data
    return files


def graph_record(
    files: dict[str, bytes], compiled_manifest_bytes: bytes, compiled_manifest: dict[str, Any]
) -> dict[str, Any]:
    """The release manifest's `graph` section for the files `graph_files` returned."""
    nodes = _one(files, "_nodes.tsv")
    edges = _one(files, "_edges.tsv")
    node_ids = [row["id"] for _, row in _rows(files[nodes], nodes, NODE_FIELDS)]
    edge_count = sum(1 for _ in _rows(files[edges], edges, EDGE_FIELDS))
    prefixes = {i.split(":", 1)[0] for i in node_ids}
    if len(prefixes) != 1:  # pragma: no cover - the compiler writes every node id in one prefix
        raise UserError(f"{nodes}: node ids under {len(prefixes)} prefixes; expected one")
    return {
        "format": GRAPH_FORMAT,
        "nodes": nodes,
        "edges": edges,
        "prefixes": f"{GRAPH_DIR}/prefixes.json",
        "id_prefix": prefixes.pop(),
        "node_count": len(node_ids),
        "edge_count": edge_count,
        "compiled_manifest_sha256": sha256_bytes(compiled_manifest_bytes),
        "biolink_model_version": compiled_manifest.get("biolink_model_version"),
    }


def _one(files: dict[str, bytes], suffix: str) -> str:
    found = sorted(p for p in files if p.endswith(suffix))
    if len(found) != 1:  # pragma: no cover - the kgx backend writes exactly one of each
        raise UserError(f"the compiled KGX export holds {len(found)} '*{suffix}' files")
    return found[0]


def _rows(data: bytes, where: str, required: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    """(line, row) of a KGX TSV (pandas' default quoting, as the exporter writes it); a
    missing column or a malformed row is a UserError naming the file and line."""
    text = untrusted.decode(data, where)
    if "\x00" in text:
        raise UserError(f"{where}: a NUL character; expected KGX TSV text")
    if csv.field_size_limit() < untrusted.CSV_FIELD_LIMIT:
        csv.field_size_limit(untrusted.CSV_FIELD_LIMIT)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    try:
        header = next(reader, None)
        missing = [f for f in required if f not in (header or [])]
        if missing:
            raise UserError(f"{where}, line 1: no column {', '.join(missing)} in the header")
        assert header is not None
        for row in reader:
            if len(row) != len(header):
                raise UserError(
                    f"{where}, line {reader.line_num}: {len(row)} cells, the header has "
                    f"{len(header)}"
                )
            yield reader.line_num, dict(zip(header, row, strict=True))
    except csv.Error as exc:
        raise UserError(f"{where}, line {reader.line_num + 1}: not valid TSV: {exc}") from None


def graph_problems(root: Path, manifest: dict[str, Any], gold: dict[str, dict]) -> list[str]:
    """What is wrong with the graph a release ships (empty when it is whole and is the
    graph its gold cites). Hash and size are checked with every other listed file."""
    graph = manifest.get("graph")
    if graph is None:
        if _format(manifest) >= GRAPH_SINCE:
            return [
                f"manifest.json: no 'graph' section; a release of format "
                f"{manifest.get('release_format')} ships the KGX export of its graph"
            ]
        return []  # released before releases carried their graph
    if not isinstance(graph, dict) or graph.get("format") != GRAPH_FORMAT:
        return [f"manifest.json: 'graph' is not a {GRAPH_FORMAT} section"]
    listed = {e.get("path") for e in manifest.get("files") or [] if isinstance(e, dict)}
    problems: list[str] = []
    for key in ("nodes", "edges", "prefixes"):
        rel = graph.get(key)
        if not isinstance(rel, str) or not rel.startswith(f"{GRAPH_DIR}/") or rel not in listed:
            problems.append(
                f"manifest.json: graph.{key} ({untrusted.shown(rel)}) is not a {GRAPH_DIR}/ "
                "file the manifest lists"
            )
    if problems or not all((root / graph[k]).is_file() for k in ("nodes", "edges", "prefixes")):
        return problems  # a missing listed file is already reported
    try:
        return _content_problems(root, graph, gold)
    except UserError as exc:
        return [str(exc)]


def _content_problems(root: Path, graph: dict[str, Any], gold: dict[str, dict]) -> list[str]:
    problems: list[str] = []
    prefix = graph.get("id_prefix")
    context = untrusted.load_json_object(root / graph["prefixes"], "KGX prefix map")
    if not isinstance(prefix, str) or prefix not in context:
        problems.append(
            f"{graph['prefixes']}: does not declare the graph's id prefix {untrusted.shown(prefix)}"
        )
    nodes: set[str] = set()
    for line, row in _rows((root / graph["nodes"]).read_bytes(), graph["nodes"], NODE_FIELDS):
        if row["id"] in nodes:
            problems.append(f"{graph['nodes']}, line {line}: duplicate node id {row['id']}")
        nodes.add(row["id"])
    edges: set[str] = set()
    dangling: list[str] = []
    for line, row in _rows((root / graph["edges"]).read_bytes(), graph["edges"], EDGE_FIELDS):
        if row["id"] in edges:
            problems.append(f"{graph['edges']}, line {line}: duplicate edge id {row['id']}")
        edges.add(row["id"])
        dangling += [n for n in (row["subject"], row["object"]) if n not in nodes]
    if dangling:
        problems.append(f"{graph['edges']}: edges to nodes it lacks: {_some(dangling)}")
    for key, found in (("node_count", len(nodes)), ("edge_count", len(edges))):
        recorded = graph.get(key)
        if recorded != found or isinstance(recorded, bool):
            said = recorded if isinstance(recorded, int) else untrusted.shown(recorded)
            problems.append(f"manifest.json: graph.{key} is {said}, the graph holds {found}")
    cited_edges, cited_nodes = cited_ids(gold)
    absent_edges = [i for i in sorted(cited_edges) if f"{prefix}:{i}" not in edges]
    absent_nodes = [i for i in sorted(cited_nodes) if f"{prefix}:{i}" not in nodes]
    if absent_edges:
        problems.append(
            f"{graph['edges']}: the gold cites {len(absent_edges)} assertion(s) the shipped "
            f"graph lacks ({_some(absent_edges)}): it is not the graph the gold was built from"
        )
    if absent_nodes:
        problems.append(
            f"{graph['nodes']}: the gold cites {len(absent_nodes)} entity or source id(s) the "
            f"shipped graph lacks ({_some(absent_nodes)}): it is not the graph the gold was "
            "built from"
        )
    return problems


def cited_ids(gold: dict[str, dict]) -> tuple[set[str], set[str]]:
    """The assertion ids (edges) and the entity and evidence-source ids (nodes) the gold
    records cite: every `*assertion_ids` list and `causal_paths`; every `*evidence_source_ids`
    list, `acceptable_interventions` and a candidate's `intervention_id`."""
    edges: set[str] = set()
    nodes: set[str] = set()
    stack: list[Any] = [rec.get("gold") for rec in gold.values()]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(value)
            continue
        if not isinstance(value, dict):
            continue
        for key, item in value.items():
            if key.endswith("assertion_ids") or key == "causal_paths":
                edges.update(_strings(item))
            elif key.endswith("evidence_source_ids") or key == "acceptable_interventions":
                nodes.update(_strings(item))
            elif key == "intervention_id" and isinstance(item, str):
                nodes.add(item)
            else:
                stack.append(item)
    return edges, nodes


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _some(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN])
    return shown + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def _format(manifest: dict[str, Any]) -> tuple[int, ...]:
    text = manifest.get("release_format")
    parts = text.split(".") if isinstance(text, str) else []
    if len(parts) != 3 or not all(p.isdigit() and len(p) < 10 for p in parts):
        return (0, 0, 0)
    return tuple(int(p) for p in parts)

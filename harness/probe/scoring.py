"""Scores of generated graphs against the reference: the seed's path rule, exact edges, the
curve over k, graph statistics, and intervals over roots.

Definitions (m maps a generated node to its entity; unmapped nodes have none):

* E_g: the generated edges (distinct directed pairs of generated nodes, self-loops dropped
  before they enter the graph). An edge whose endpoints map to one entity is `collapsed`.
* hit_k(u, v): m(u) and m(v) exist and the reference has a path from m(u) to m(v) of at
  most k edges (ignoring directions in `undirected` mode); a collapsed edge has length 0 and
  is a hit, as in the seed, and is counted apart.
* precision@k = sum of hit_k / |E_g|; 0 when E_g is empty (the seed's convention).
* E_rel: reference edges with at least one endpoint in M = {m(u)}: the seed's recall
  denominator ("BIOS edges connected to any node in the generated graph", generated nodes
  being mapped nodes). recall@k = sum of hit_k / |E_rel|; 0 when E_rel is empty. It is the
  seed's ratio exactly, so it is not a proportion: hits through long paths can exceed |E_rel|.
* exact precision = edges whose mapped pair is a reference edge (either direction in
  undirected mode) / |E_g|; exact recall = distinct reference edges so matched / |E_rel|
  (a proportion).
* The headline k is the declared `path_bound`, in edges: 6, the seed's "at most five
  intermediary nodes" (its "length <= 7" counts nodes; it warns the bound overestimates);
  the curve reports k = 1..curve_max_k, 7 included.

A root the reference holds no edge at (no cause and no effect of it: in the shipped
cardiology domain, essential hypertension, HFrEF and hypercholesterolemia, which the graph
links only to the drugs that treat them and to populations associated with them, neither a
cause) is out of scope: the
reference cannot tell a right answer about it from a wrong one, and the seed's convention
would score any answer there 0 (the oracle's own, empty, graph included). Such a root is
still run and listed with `out_of_scope` saying why, and left out of the means, the pooled
ratios and the curve (`overall.out_of_scope_roots` names it).

Per root, then over roots: the mean (each root weighs the same) with a percentile bootstrap
interval over roots (harness.evaluation.stats.bootstrap_ci, seeded per metric), and the pooled ratio
(sums over roots). All pair distances of all roots come from one batched query of the
distance index, built once per reference graph.
"""

from __future__ import annotations

import itertools
from typing import Any

from harness.evaluation.stats import bootstrap_ci, mean

from .distances import DistanceIndex
from .graph import GeneratedGraph
from .mapping import Decision
from .reference import ReferenceGraph

OUT_OF_SCOPE = (
    "the reference graph holds no edge at this root (no cause and no effect of it under the "
    "declared reference predicates and directions), so it cannot judge answers about it; "
    "left out of the means, pooled ratios and curve"
)
CYCLE_CAP = 1000
HEADLINE = (
    "precision",
    "recall",
    "exact_precision",
    "exact_recall",
    "mapped_share",
)


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def graph_stats(graph: GeneratedGraph) -> dict[str, Any]:
    """Nodes, edges, density, reciprocity and directed cycles (counted up to CYCLE_CAP)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(graph.nodes)
    g.add_edges_from(graph.edges)
    cycles = sum(1 for _ in itertools.islice(nx.simple_cycles(g), CYCLE_CAP))
    return {
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "density": nx.density(g) if g.number_of_nodes() > 1 else 0.0,
        "reciprocity": nx.reciprocity(g) if g.number_of_edges() else None,
        "cycles": cycles,
        "cycles_capped": cycles >= CYCLE_CAP,
        "acyclic": nx.is_directed_acyclic_graph(g),
    }


def score_graphs(
    graphs: list[GeneratedGraph],
    decisions: dict[str, Decision],
    reference: ReferenceGraph,
    index: DistanceIndex,
    k: int,
    curve_max_k: int,
    bootstrap: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Per-root scores, the overall means with intervals, and the curve (see module doc)."""
    top_k = max(k, curve_max_k)
    undirected = not index.directed
    per_root_pairs: list[list[tuple[str, str] | None]] = []
    queries: list[tuple[str, str]] = []
    for graph in graphs:
        mapped = []
        for s, t in graph.edges:
            ms, mt = _entity(decisions, s), _entity(decisions, t)
            mapped.append((ms, mt) if ms is not None and mt is not None else None)
            if ms is not None and mt is not None:
                queries.append((ms, mt))
        per_root_pairs.append(mapped)
    unique = sorted(set(queries))
    found = dict(zip(unique, index.distances(unique, top_k), strict=True))

    roots = []
    for graph, pairs in zip(graphs, per_root_pairs, strict=True):
        root = _score_root(graph, pairs, found, decisions, reference, k, top_k, undirected)
        if not in_scope(reference, graph.root_id):
            root["out_of_scope"] = OUT_OF_SCOPE
        roots.append(root)
    scored = [r for r in roots if "out_of_scope" not in r]
    overall = _overall(scored, bootstrap, seed, roots)
    overall["out_of_scope_roots"] = [r["root_id"] for r in roots if "out_of_scope" in r]
    return {"roots": roots, "overall": overall, "curve": _curve(scored, top_k)}


def in_scope(reference: ReferenceGraph, root_id: str) -> bool:
    """Whether the reference holds at least one edge at the root (see the module doc)."""
    return bool(reference.degree.get(root_id))


def _entity(decisions: dict[str, Decision], key: str) -> str | None:
    decision = decisions.get(key)
    return decision.entity_id if decision is not None else None


def _score_root(
    graph: GeneratedGraph,
    pairs: list[tuple[str, str] | None],
    found: dict[tuple[str, str], int | None],
    decisions: dict[str, Decision],
    reference: ReferenceGraph,
    k: int,
    top_k: int,
    undirected: bool,
) -> dict[str, Any]:
    n_edges = len(pairs)
    mapped_nodes = {key: _entity(decisions, key) for key in graph.nodes}
    mapped_set = {e for e in mapped_nodes.values() if e is not None}
    relevant = reference.relevant_edges(mapped_set)
    hits = [0] * (top_k + 1)
    exact_hits = 0
    matched: set[tuple[str, str]] = set()
    collapsed = 0
    for pair in pairs:
        if pair is None:
            continue
        d = found.get(pair)
        if d == 0:
            collapsed += 1
        if d is not None:  # a collapsed edge (d = 0) is a hit at every k >= 1
            for kk in range(max(d, 1), top_k + 1):
                hits[kk] += 1
        a, b = pair
        direct = [(a, b)] if (a, b) in reference.edges else []
        if undirected and (b, a) in reference.edges:
            direct.append((b, a))
        if direct:
            exact_hits += 1
            matched.update(direct)
    curve = [
        {
            "k": kk,
            "hits": hits[kk],
            "precision": _ratio(hits[kk], n_edges),
            "recall": _ratio(hits[kk], relevant),
        }
        for kk in range(1, top_k + 1)
    ]
    unmapped = sum(1 for e in mapped_nodes.values() if e is None)
    return {
        "root_id": graph.root_id,
        "root_name": graph.root_name,
        "edges": n_edges,
        "edges_with_mapped_endpoints": sum(1 for p in pairs if p is not None),
        "collapsed_edges": collapsed,
        "hits": hits[k],
        "precision": _ratio(hits[k], n_edges),
        "recall": _ratio(hits[k], relevant),
        "exact_hits": exact_hits,
        "exact_precision": _ratio(exact_hits, n_edges),
        "exact_recall": _ratio(len(matched), relevant),
        "relevant_reference_edges": relevant,
        "mapped_nodes": len(mapped_nodes) - unmapped,
        "unmapped_nodes": unmapped,
        "mapped_share": _ratio(len(mapped_nodes) - unmapped, len(mapped_nodes)),
        "stats": graph_stats(graph),
        "failures": len(graph.failures),
        "dropped_names": dict(sorted(graph.dropped.items())),
        "curve": curve,
    }


def _overall(
    roots: list[dict[str, Any]], bootstrap: int, seed: int, run: list[dict[str, Any]]
) -> dict[str, Any]:
    """Means and pooled ratios over the scored `roots`; the counts (edges, nodes, failures)
    over every root `run`, out-of-scope ones included: they describe what was asked."""
    out: dict[str, Any] = {}
    pooled = {
        "precision": ("hits", "edges"),
        "recall": ("hits", "relevant_reference_edges"),
        "exact_precision": ("exact_hits", "edges"),
        "mapped_share": ("mapped_nodes", None),
    }
    for metric in HEADLINE:
        values = [float(r[metric]) for r in roots]
        ci = bootstrap_ci(values, bootstrap, seed, f"probe:{metric}") if bootstrap > 0 else None
        entry: dict[str, Any] = {
            "mean": mean(values),
            "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None,
            "n": len(values),
        }
        num, den = pooled.get(metric, (None, None))
        if num is not None:
            total_num = sum(r[num] for r in roots)
            if den is None:
                total_den = sum(r["mapped_nodes"] + r["unmapped_nodes"] for r in roots)
            else:
                total_den = sum(r[den] for r in roots)
            entry["pooled"] = _ratio(total_num, total_den)
        out[metric] = entry
    out["roots"] = len(roots)
    out["roots_run"] = len(run)
    out["edges"] = sum(r["edges"] for r in run)
    out["failures"] = sum(r["failures"] for r in run)
    out["unmapped_nodes"] = sum(r["unmapped_nodes"] for r in run)
    out["nodes"] = sum(r["mapped_nodes"] + r["unmapped_nodes"] for r in run)
    out["collapsed_edges"] = sum(r["collapsed_edges"] for r in run)
    return out


def _curve(roots: list[dict[str, Any]], top_k: int) -> list[dict[str, Any]]:
    if not roots:
        return []
    out = []
    edges = sum(r["edges"] for r in roots)
    relevant = sum(r["relevant_reference_edges"] for r in roots)
    for i in range(top_k):
        hits = sum(r["curve"][i]["hits"] for r in roots)
        out.append(
            {
                "k": i + 1,
                "precision": mean([r["curve"][i]["precision"] for r in roots]),
                "recall": mean([r["curve"][i]["recall"] for r in roots]),
                "precision_pooled": _ratio(hits, edges),
                "recall_pooled": _ratio(hits, relevant),
            }
        )
    return out

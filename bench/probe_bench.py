"""Probe scoring benchmark (issue 13): 20 generated graphs scored against the reference
graph of the 100,000-assertion synthetic domain, target under 2 s, with the seed's recipe as
the baseline in the same run.

Workload: `bench.synth.make_domain(100_000)` (25,000 entities); the reference graph is every
assertion of the probe's default roles (one edge per distinct pair). Twenty roots (drugs,
targets, processes) each get a generated graph shaped like a probe's: up to 3 effects and 3
causes per node over 2 rounds, a third of the concepts replaced by random entities (wrong
edges), plus 20 edge-check edges between random pairs of its nodes.

* ours: everything after the reference is loaded: node mapping (Mapper), the distance index
  (built once per reference graph), and `score_graphs` (path rule at k = 7, the curve
  k = 1..7, exact edges, graph statistics, bootstrap intervals over roots, 2,000 resamples).
* baseline: the seed's recipe as written: one networkx `shortest_path_length` per generated
  edge (k = 7 only) and a scan of every reference edge per root for the recall denominator.

Both direction modes are measured; the hits at k = 7 must agree root by root.
"""

from __future__ import annotations

import csv
import random
import statistics
import tempfile
import time
from pathlib import Path

from harness.probe.distances import DistanceIndex
from harness.probe.graph import GeneratedGraph
from harness.probe.mapping import Mapper
from harness.probe.reference import Entity, ReferenceGraph
from harness.probe.scoring import score_graphs

from .synth import make_domain
from .timing import figure

ASSERTIONS = 100_000
TARGET_S = 2.0
ROLES_PREDICATES = {
    "TARGETS", "PARTICIPATES_IN", "CAUSES_INCREASE_IN", "CAUSES_DECREASE_IN",
    "MAY_CAUSE_ADVERSE_EFFECT", "INDICATED_FOR",
}  # fmt: skip


def load_reference(domain: Path) -> ReferenceGraph:
    with (domain / "data" / "entities.csv").open(newline="") as fh:
        entities = {
            r["id"]: Entity(
                r["id"], r["name"], r["category"], tuple(filter(None, r["synonyms"].split("|")))
            )
            for r in csv.DictReader(fh)
        }
    with (domain / "data" / "assertions.csv").open(newline="") as fh:
        edges = {
            (r["subject_id"], r["object_id"])
            for r in csv.DictReader(fh)
            if r["predicate"] in ROLES_PREDICATES and r["subject_id"] != r["object_id"]
        }
    return ReferenceGraph(entities, edges)


def make_graphs(ref: ReferenceGraph, rng: random.Random, n_roots: int = 20) -> list[GeneratedGraph]:
    pool = [e for e in ref.node_ids if ref.degree[e] > 0]
    roots = [e for e in pool if e.startswith(("DRG", "PRT", "BPR"))][:: max(1, len(pool) // 400)][
        :n_roots
    ]
    graphs = []
    for root in roots:
        graph = GeneratedGraph.start(root, ref.entities[root].name)
        frontier = [root]
        for depth in range(2):
            nxt = []
            for node in frontier:
                key = graph.add_node(ref.entities[node].name, depth, "bench")
                for side, forward in ((ref.successors, True), (ref.predecessors, False)):
                    for other in side[node][:3]:
                        if rng.random() < 1 / 3:
                            other = rng.choice(pool)
                        if other == node:
                            continue
                        okey = graph.add_node(ref.entities[other].name, depth + 1, "bench")
                        graph.add_edge(*((key, okey) if forward else (okey, key)), "bench")
                        nxt.append(other)
            frontier = nxt
        keys = list(graph.nodes)
        for _ in range(20):
            a, b = rng.sample(keys, 2)
            if not graph.adjacent(a, b):
                graph.add_edge(a, b, "bench-edge")
        graphs.append(graph)
    return graphs


def ours(
    ref: ReferenceGraph, graphs: list[GeneratedGraph], directed: bool
) -> tuple[dict, list[float]]:
    """Scores, and the seconds of mapping, index building and scoring."""
    t0 = time.perf_counter()
    names = [n.name for g in graphs for n in g.nodes.values()]
    decisions = Mapper(ref, 90.0).map_names(names)
    t1 = time.perf_counter()
    index = DistanceIndex(ref.node_ids, ref.edges, directed)
    t2 = time.perf_counter()
    scores = score_graphs(graphs, decisions, ref, index, 7, 7, bootstrap=2000, seed=0)
    return scores, [t1 - t0, t2 - t1, time.perf_counter() - t2]


def baseline(ref: ReferenceGraph, graphs: list[GeneratedGraph], graph_nx) -> list[int]:
    """The seed's score_graph, literally: per edge a shortest-path query, per root a scan."""
    import networkx as nx

    by_name = {e.name.lower(): e.id for e in ref.entities.values()}
    hits_per_root = []
    for graph in graphs:
        ids = {k: by_name.get(n.name.lower()) for k, n in graph.nodes.items()}
        hits = 0
        for u, v in graph.edges:
            a, b = ids[u], ids[v]
            if a is None or b is None:
                continue
            try:
                if nx.shortest_path_length(graph_nx, a, b) <= 7:
                    hits += 1
            except nx.NetworkXNoPath:
                pass
        nodes = {i for i in ids.values() if i}
        relevant = [e for e in graph_nx.edges if e[0] in nodes or e[1] in nodes]
        _ = hits / len(graph.edges), hits / max(1, len(relevant))
        hits_per_root.append(hits)
    return hits_per_root


def main(quick: bool = False) -> list[str]:
    runs = 3 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        domain, _ = make_domain(Path(tmp), ASSERTIONS)
        ref = load_reference(domain)
    graphs = make_graphs(ref, random.Random(20241213))
    n_edges = sum(len(g.edges) for g in graphs)
    lines = [
        f"## Probe scoring (synthetic domain: {len(ref.entities):,} entities, {ASSERTIONS:,} "
        f"assertions -> {len(ref.edges):,} reference edges; {len(graphs)} roots, {n_edges} "
        "generated edges)"
    ]
    digraph = ref.nx_graph()
    for mode, directed in (("directed", True), ("undirected", False)):
        ours(ref, graphs, directed)  # warm-up
        walls, builds = [], []
        for _ in range(runs):
            start = time.perf_counter()
            scores, parts = ours(ref, graphs, directed)
            walls.append(time.perf_counter() - start)
            builds.append(parts)
        graph_nx = digraph if directed else digraph.to_undirected(as_view=True)
        base_runs = 1 if not directed else (1 if quick else 3)
        base_walls = []
        for _ in range(base_runs):
            start = time.perf_counter()
            base_hits = baseline(ref, graphs, graph_nx)
            base_walls.append(time.perf_counter() - start)
        same = sum(r["hits"] == h for r, h in zip(scores["roots"], base_hits, strict=True))
        med, base = statistics.median(walls), statistics.median(base_walls)
        state = "warm: in this process after a warm-up, baseline on the same graph"
        lines += [
            figure(f"ours ({mode}): map + index + score 20 roots", walls, unit="s",
                   target=TARGET_S, higher_is_better=False, state=state, digits=3),
            f"  of which mapping {statistics.median(b[0] for b in builds):.3f} s, index "
            f"{statistics.median(b[1] for b in builds):.3f} s, scoring (k=1..7, exact, stats, "
            f"bootstrap) {statistics.median(b[2] for b in builds):.3f} s",
            figure(f"  baseline ({mode}): networkx per edge, k=7", base_walls, unit="s",
                   target=None, higher_is_better=False, state=state, digits=3),
            f"  speed-up x{base / med:.1f}; same hits at k=7 on {same}/{len(graphs)} roots",
        ]  # fmt: skip
    return lines


if __name__ == "__main__":
    import sys

    print("\n".join(main(quick="--quick" in sys.argv)))

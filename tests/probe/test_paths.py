"""The path rule on small hand-made graphs with known answers, and the distance index."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from harness.probe.distances import DistanceIndex
from harness.probe.graph import GeneratedGraph
from harness.probe.mapping import Decision
from harness.probe.names import name_key
from harness.probe.reference import Entity, ReferenceGraph
from harness.probe.scoring import score_graphs

# Reference: A -> B -> C -> D, E -> A, F isolated from the chain except F -> G.
REF_EDGES = {("A", "B"), ("B", "C"), ("C", "D"), ("E", "A"), ("F", "G")}


def reference() -> ReferenceGraph:
    ids = "ABCDEFGH"
    return ReferenceGraph({i: Entity(i, f"Concept {i}", "Thing") for i in ids}, set(REF_EDGES))


def generated(edges: list[tuple[str, str]], extra_nodes: tuple[str, ...] = ()) -> GeneratedGraph:
    """A generated graph whose node names are 'Concept X' (X may be unmapped, e.g. 'Z')."""
    graph = GeneratedGraph.start("ROOT", f"Concept {edges[0][0] if edges else 'A'}")
    for s, t in edges:
        a = graph.add_node(f"Concept {s}", 1, "test")
        b = graph.add_node(f"Concept {t}", 1, "test")
        graph.add_edge(a, b, "test")
    for n in extra_nodes:
        graph.add_node(f"Concept {n}", 1, "test")
    return graph


def decisions(ref: ReferenceGraph, graph: GeneratedGraph, collapse: dict[str, str] | None = None):
    """Map 'Concept X' to X when X is a reference node (or as `collapse` says)."""
    out = {}
    for key, node in graph.nodes.items():
        letter = node.name.split()[-1]
        entity = (collapse or {}).get(letter, letter if letter in ref.entities else None)
        out[key] = Decision(node.name, key, entity, "exact_name" if entity else "unmapped")
    return out


def score(graph: GeneratedGraph, k: int = 7, directed: bool = True, collapse=None) -> dict:
    ref = reference()
    index = DistanceIndex(ref.node_ids, sorted(ref.edges), directed)
    result = score_graphs([graph], decisions(ref, graph, collapse), ref, index, k, 7, bootstrap=0)
    return result["roots"][0]


def test_directed_path_rule_known_answer():
    # A->D: path of 3 (hit at k>=3); D->A: no directed path (miss); A->B exact; Z unmapped.
    graph = generated([("A", "D"), ("D", "A"), ("A", "B"), ("A", "Z")])
    root = score(graph, k=3)
    assert root["edges"] == 4
    assert root["hits"] == 2  # A->D and A->B
    assert root["precision"] == pytest.approx(2 / 4)
    # E_rel: reference edges touching the mapped nodes {A, B, D}: A->B, B->C, C->D, E->A = 4
    assert root["relevant_reference_edges"] == 4
    assert root["recall"] == pytest.approx(2 / 4)
    assert root["exact_hits"] == 1 and root["exact_precision"] == pytest.approx(1 / 4)
    assert root["exact_recall"] == pytest.approx(1 / 4)
    curve = {c["k"]: c["hits"] for c in root["curve"]}
    assert curve == {1: 1, 2: 1, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2}
    assert root["unmapped_nodes"] == 1 and root["mapped_share"] == pytest.approx(3 / 4)


def test_k_below_the_path_length_misses():
    root = score(generated([("A", "D")]), k=2)
    assert root["hits"] == 0 and root["precision"] == 0.0


def test_undirected_mode_ignores_directions():
    graph = generated([("D", "A"), ("B", "A")])
    directed = score(graph, k=3, directed=True)
    undirected = score(graph, k=3, directed=False)
    assert directed["hits"] == 0
    assert undirected["hits"] == 2
    # exact edges follow the mode: B->A matches the reference A->B only when undirected
    assert directed["exact_hits"] == 0 and undirected["exact_hits"] == 1


def test_recall_denominator_counts_edges_touching_mapped_nodes_once():
    # Mapped nodes {F, G, E}: reference edges touching them: F->G (both ends inside, once)
    # and E->A = 2. Unmapped nodes add nothing.
    graph = generated([("F", "G"), ("E", "Q")])
    root = score(graph)
    assert root["relevant_reference_edges"] == 2
    assert root["hits"] == 1 and root["recall"] == pytest.approx(1 / 2)


def test_recall_is_the_seeds_ratio_and_can_exceed_one():
    # Three generated edges into the chain, all hits within 7; E_rel for {A, B, C, D} is 4.
    # The seed divides hits by E_rel; with more hits than relevant edges it exceeds 1.
    graph = generated([("A", "B"), ("A", "C"), ("A", "D"), ("B", "D"), ("B", "C"), ("C", "D")])
    root = score(graph)
    assert root["hits"] == 6 and root["relevant_reference_edges"] == 4
    assert root["recall"] == pytest.approx(6 / 4)
    assert root["exact_recall"] == pytest.approx(3 / 4)  # a proportion: 3 distinct ref edges


def test_collapsed_edges_are_hits_at_distance_zero_and_counted_apart():
    # 'Concept X' and 'Concept Y' both map to A: the seed's distance is 0, a hit.
    graph = generated([("X", "Y")])
    root = score(graph, k=1, collapse={"X": "A", "Y": "A"})
    assert root["hits"] == 1 and root["collapsed_edges"] == 1
    assert root["exact_hits"] == 0


def test_no_generated_edges_scores_zero_as_the_seed_does():
    graph = GeneratedGraph.start("ROOT", "Concept H")
    root = score(graph)
    assert root["edges"] == 0 and root["precision"] == 0.0 and root["recall"] == 0.0


def test_graph_statistics():
    graph = generated([("A", "B"), ("B", "A"), ("B", "C")])
    stats = score(graph)["stats"]
    assert stats["nodes"] == 3 and stats["edges"] == 3
    assert stats["reciprocity"] == pytest.approx(2 / 3)
    assert stats["cycles"] == 1 and stats["acyclic"] is False
    assert stats["density"] == pytest.approx(3 / 6)


@pytest.mark.parametrize("directed", [True, False])
def test_distance_index_agrees_with_networkx(directed):
    for trial in range(25):
        rng = random.Random(trial)
        nodes = [f"n{i}" for i in range(rng.randint(2, 40))]
        edges = {(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randint(0, 90))}
        edges = {e for e in edges if e[0] != e[1]}
        graph = nx.DiGraph() if directed else nx.Graph()
        graph.add_nodes_from(nodes)
        graph.add_edges_from(edges)
        index = DistanceIndex(nodes, sorted(edges), directed)
        pairs = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(80)] + [("n0", "zz")]
        for k in (1, 2, 7):
            for (a, b), got in zip(pairs, index.distances(pairs, k), strict=True):
                try:
                    d = nx.shortest_path_length(graph, a, b)
                except (nx.NetworkXNoPath, nx.NodeNotFound):
                    d = None
                assert got == (d if d is not None and d <= k else None), (trial, a, b, k)


def test_distance_index_more_sources_than_one_pass():
    # 1,500 sources: two passes of the bit-parallel search; a path graph has known answers.
    nodes = [f"p{i}" for i in range(1600)]
    edges = [(nodes[i], nodes[i + 1]) for i in range(1599)]
    index = DistanceIndex(nodes, edges, True)
    pairs = [(nodes[i], nodes[i + 3]) for i in range(1500)] + [(nodes[5], nodes[1])]
    got = index.distances(pairs, 3)
    assert got[:1500] == [3] * 1500 and got[-1] is None


def test_name_key_is_the_node_identity():
    assert name_key("LDL-Cholesterol ") == name_key("ldl cholesterol") == "ldl cholesterol"
    assert name_key("Ｈｙｐｅｒｔｅｎｓｉｏｎ") == "hypertension"  # full-width folded


def _oracle_graph(ref: ReferenceGraph, root: str, depth: int = 2, n: int = 3) -> GeneratedGraph:
    """The oracle's graph by its rule (harness.probe.responders): from the root, the first `n`
    effects and causes of each concept by entity id, to `depth`; every edge a reference edge."""
    graph = GeneratedGraph.start(root, f"Concept {root}")
    keys = {root: name_key(f"Concept {root}")}
    frontier = [root]
    for level in range(1, depth + 1):
        nxt = []
        for concept in frontier:
            for other, edge in [
                *((t, (concept, t)) for t in ref.successors[concept][:n]),
                *((s, (s, concept)) for s in ref.predecessors[concept][:n]),
            ]:
                if other not in keys:
                    keys[other] = graph.add_node(f"Concept {other}", level, "oracle")
                    nxt.append(other)
                graph.add_edge(keys[edge[0]], keys[edge[1]], "oracle")
        frontier = nxt
    return graph


def test_the_oracle_scores_one_on_its_own_reference_and_unjudgeable_roots_are_out_of_scope():
    """Issue 27: a root the reference holds no edge at (Z: in the domain only a drug treating
    it, which is no cause) is out of scope, not a 0 that drags the oracle below 1.0; the
    oracle's precision and recall are then 1.0 on its own reference, at every k."""
    ids = ["R", "C1", "C2", "C3", "E1", "Z", "D"]
    edges = {("C1", "R"), ("C2", "R"), ("R", "E1"), ("C3", "C1")}  # D treats Z: not an edge
    ref = ReferenceGraph({i: Entity(i, f"Concept {i}", "Thing") for i in ids}, edges)
    index = DistanceIndex(ref.node_ids, sorted(ref.edges), True)
    graphs = [_oracle_graph(ref, "R"), _oracle_graph(ref, "Z")]
    decided = {}
    for graph in graphs:
        decided |= {
            key: Decision(node.name, key, node.name.split()[-1], "exact_name")
            for key, node in graph.nodes.items()
        }
    result = score_graphs(graphs, decided, ref, index, 6, 7, bootstrap=0)
    r, z = result["roots"]
    assert r["edges"] == 4 and r["relevant_reference_edges"] == 4
    assert (r["precision"], r["recall"], r["exact_precision"], r["exact_recall"]) == (1, 1, 1, 1)
    assert "out_of_scope" not in r
    assert z["edges"] == 0 and "no edge at this root" in z["out_of_scope"]
    overall = result["overall"]
    assert overall["out_of_scope_roots"] == ["Z"] and overall["roots"] == 1
    for metric in ("precision", "recall", "exact_precision", "exact_recall"):
        assert overall[metric]["mean"] == 1.0, metric
    assert all(c["precision"] == c["recall"] == 1.0 for c in result["curve"])
    # "no": a root the reference can judge stays in the means however poorly it is answered
    silent = GeneratedGraph.start("R", "Concept R")
    result = score_graphs([graphs[0], silent], decided, ref, index, 6, 7, bootstrap=0)
    assert result["overall"]["out_of_scope_roots"] == []
    assert result["overall"]["precision"]["mean"] == 0.5

"""The probe's steps as requests, and how their answers grow a generated graph.

Per root, round d (0-based, d < max_depth) asks two questions about every node first seen at
depth d, in discovery order: what it causes (edges node -> concept) and what causes it
(edges concept -> node); new concepts join at depth d + 1. Each prompt shows the concepts the
graph already holds, so the model can reuse their names. After the last round, up to
`edge_checks_per_root` unordered pairs of nodes that share no edge are asked about (pairs of
shallower nodes first); the answer adds a -> b, b -> a, both or neither.

Everything is a pure function of the compiled probe and the answers so far, so the requests
of round d + 1 can be re-derived from the logged answers of round d after a crash: request
ids name what they ask about (root, step, node index), never a counter of sends.
"""

from __future__ import annotations

from typing import Any

from ..runner.stage import StageRequest
from .compiled import CompiledProbe
from .graph import GeneratedGraph, Node
from .names import screen_concepts

EXPAND = (("effects", "expand_effects"), ("causes", "expand_causes"))


class GraphBuilder:
    """Grows one root's graph from the answers of each stage."""

    def __init__(self, probe: CompiledProbe, root_id: str, root_name: str) -> None:
        self.probe = probe
        self.graph = GeneratedGraph.start(root_id, root_name)
        self.n = int(probe.settings["concepts_per_answer"])
        self.max_length = int(probe.settings["max_name_length"])

    def _frontier(self, depth: int) -> list[Node]:
        return sorted(
            (n for n in self.graph.nodes.values() if n.depth == depth), key=lambda n: n.index
        )

    def _known(self) -> str:
        names = [n.name for n in sorted(self.graph.nodes.values(), key=lambda n: n.index)]
        return "\n".join(f"- {name}" for name in names) or "(none yet)"

    def _rid(self, kind: str, *nodes: Node) -> str:
        return f"{self.graph.root_id}/{kind}/" + "-".join(f"n{n.index:03d}" for n in nodes)

    def expansion_requests(self, depth: int) -> list[StageRequest]:
        known = self._known()
        out = []
        for node in self._frontier(depth):
            for kind, step in EXPAND:
                messages = self.probe.messages(
                    step, root=self.graph.root_name, concept=node.name, n=self.n,
                    known_concepts=known,
                )  # fmt: skip
                out.append(
                    StageRequest(
                        self._rid(kind, node),
                        messages,
                        self.probe.schema(step),
                        self.probe.schema_name(step),
                    )
                )
        return out

    def absorb_expansion(self, depth: int, stage: str, records: dict[str, dict[str, Any]]) -> None:
        for node in self._frontier(depth):
            for kind, step in EXPAND:
                rid = self._rid(kind, node)
                info = {"stage": stage, "step": step, "concept": node.key}
                outcome = self.graph.record_answer(rid, info, records.get(rid))
                if outcome != "ok":
                    continue
                names, dropped = screen_concepts(
                    records[rid]["parsed"]["concepts"], node.name, self.max_length
                )
                self.graph.dropped.update(dropped)
                for name in names:
                    key = self.graph.add_node(name, depth + 1, rid)
                    if key == node.key:  # a different spelling of the asked concept
                        self.graph.dropped["self_loop"] += 1
                        continue
                    if kind == "effects":
                        self.graph.add_edge(node.key, key, rid)
                    else:
                        self.graph.add_edge(key, node.key, rid)

    def candidate_pairs(self) -> list[tuple[Node, Node]]:
        nodes = sorted(self.graph.nodes.values(), key=lambda n: n.index)
        pairs = [
            (a, b)
            for i, a in enumerate(nodes)
            for b in nodes[i + 1 :]
            if not self.graph.adjacent(a.key, b.key)
        ]
        pairs.sort(key=lambda p: (p[0].depth + p[1].depth, p[0].index, p[1].index))
        return pairs[: int(self.probe.settings["edge_checks_per_root"])]

    def edge_check_requests(self) -> list[StageRequest]:
        self._pairs = self.candidate_pairs()
        out = []
        for a, b in self._pairs:
            messages = self.probe.messages(
                "edge_check", root=self.graph.root_name, concept_a=a.name, concept_b=b.name
            )
            out.append(
                StageRequest(
                    self._rid("edge", a, b),
                    messages,
                    self.probe.schema("edge_check"),
                    self.probe.schema_name("edge_check"),
                )
            )
        return out

    def absorb_edge_checks(self, stage: str, records: dict[str, dict[str, Any]]) -> None:
        for a, b in self._pairs:
            rid = self._rid("edge", a, b)
            info = {"stage": stage, "step": "edge_check", "concept_a": a.key, "concept_b": b.key}
            if self.graph.record_answer(rid, info, records.get(rid)) != "ok":
                continue
            relation = records[rid]["parsed"]["relation"]
            if relation in ("a_causes_b", "both"):
                self.graph.add_edge(a.key, b.key, rid)
            if relation in ("b_causes_a", "both"):
                self.graph.add_edge(b.key, a.key, rid)

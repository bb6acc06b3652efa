"""A generated graph: nodes, directed edges, and the prompt and answer behind each.

Nodes are identified by `name_key` (so "LDL-cholesterol" and "LDL cholesterol" are one node);
each keeps the first spelling, the depth at which it appeared and the request that introduced
it. Each edge lists the request ids that produced it (`produced_by`); `answers` holds, per
request id, the stage, step, asked concept(s) and the answer (parsed, or the raw text cut to
a few kB when it did not parse), so every edge can be traced to its prompt and answer.
Failures (failed requests, answers that are not JSON or not the schema) are recorded, never
scored as edges; dropped names are counted by reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kgbench.contract import ProbeGraph

from .names import name_key

RAW_KEEP = 4000  # characters of an unparseable answer kept for the reader


@dataclass
class Node:
    key: str
    name: str
    depth: int
    index: int
    origin: str  # request id that introduced it, or "root"


@dataclass
class Edge:
    source: str
    target: str
    produced_by: list[str] = field(default_factory=list)


@dataclass
class GeneratedGraph:
    root_id: str
    root_name: str
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: dict[tuple[str, str], Edge] = field(default_factory=dict)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)

    @classmethod
    def start(cls, root_id: str, root_name: str) -> GeneratedGraph:
        graph = cls(root_id, root_name)
        graph.add_node(root_name, 0, "root")
        return graph

    @property
    def root_key(self) -> str:
        return name_key(self.root_name)

    def add_node(self, name: str, depth: int, origin: str) -> str:
        key = name_key(name)
        if key not in self.nodes:
            self.nodes[key] = Node(key, name, depth, len(self.nodes), origin)
        return key

    def add_edge(self, source: str, target: str, request_id: str) -> None:
        if source == target:  # screened before; a broken invariant if it happens
            raise AssertionError(f"self-loop on {source!r}")
        edge = self.edges.setdefault((source, target), Edge(source, target))
        if request_id not in edge.produced_by:
            edge.produced_by.append(request_id)

    def adjacent(self, a: str, b: str) -> bool:
        return (a, b) in self.edges or (b, a) in self.edges

    def record_answer(self, request_id: str, info: dict[str, Any], record: dict | None) -> str:
        """Keep the answer of one request; return its outcome: ok, missing, failed, not_json,
        schema (an answer that is JSON but not the step's schema)."""
        entry = dict(info)
        if record is None:
            outcome = "missing"
        elif record["status"] != "ok":
            outcome = "failed"
            entry["error"] = record.get("error")
        elif not record["parse_ok"]:
            outcome = "not_json"
            entry["raw"] = (record.get("raw") or "")[:RAW_KEEP]
        elif not record["schema_ok"]:
            outcome = "schema"
            entry["raw"] = (record.get("raw") or "")[:RAW_KEEP]
            entry["schema_errors"] = record.get("schema_errors") or []
        else:
            outcome = "ok"
            entry["answer"] = record["parsed"]
        if record is not None:
            entry["key"] = record["key"]
        entry["outcome"] = outcome
        self.answers[request_id] = entry
        if outcome != "ok":
            self.failures.append({"request_id": request_id, "reason": outcome})
        return outcome

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": ProbeGraph.FORMAT,
            "root_id": self.root_id,
            "root_name": self.root_name,
            "nodes": [
                {"key": n.key, "name": n.name, "depth": n.depth, "origin": n.origin}
                for n in sorted(self.nodes.values(), key=lambda n: n.index)
            ],
            "edges": [
                {"source": e.source, "target": e.target, "produced_by": e.produced_by}
                for e in self.edges.values()
            ],
            "answers": self.answers,
            "failures": self.failures,
            "dropped": dict(sorted(self.dropped.items())),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GeneratedGraph:
        graph = cls(data["root_id"], data["root_name"])
        for i, n in enumerate(data["nodes"]):
            graph.nodes[n["key"]] = Node(n["key"], n["name"], n["depth"], i, n["origin"])
        for e in data["edges"]:
            graph.edges[(e["source"], e["target"])] = Edge(
                e["source"], e["target"], list(e["produced_by"])
            )
        graph.answers = dict(data.get("answers") or {})
        graph.failures = list(data.get("failures") or [])
        graph.dropped = Counter(data.get("dropped") or {})
        return graph

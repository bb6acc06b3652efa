"""The reference graph: the compiled domain's entities and the edges of the declared roles.

One directed edge per distinct (subject, object) pair of the assertions whose predicate the
probe declares (probe.json `reference.predicates`) and whose direction it does not exclude
(`reference.excluded_directions`: a decrease is "A prevents B", not "A causes B"); several
assertions between the same pair are one edge. Built once per domain and shared by the mapper, the distance index, the
reference responders and the scorer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Entity:
    id: str
    name: str
    category: str
    synonyms: tuple[str, ...] = ()
    xrefs: tuple[str, ...] = ()


@dataclass
class ReferenceGraph:
    entities: dict[str, Entity]
    edges: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def from_kg(
        cls, kg: dict[str, Any], predicates: Iterable[str], excluded_directions: Iterable[str] = ()
    ) -> ReferenceGraph:
        keep = set(predicates)
        drop = set(excluded_directions)
        entities = {
            e["id"]: Entity(
                e["id"],
                e["name"],
                e["category"],
                tuple(e.get("synonyms") or ()),
                tuple(e.get("xrefs") or ()),
            )
            for e in kg["entities"]
        }
        edges = {
            (a["subject_id"], a["object_id"])
            for a in kg["assertions"]
            if a["predicate"] in keep
            and a["subject_id"] != a["object_id"]
            and a.get("direction") not in drop
        }
        return cls(entities, edges)

    @cached_property
    def node_ids(self) -> list[str]:
        return sorted(self.entities)

    @cached_property
    def successors(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n: [] for n in self.entities}
        for s, t in sorted(self.edges):
            out[s].append(t)
        return out

    @cached_property
    def predecessors(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n: [] for n in self.entities}
        for s, t in sorted(self.edges):
            out[t].append(s)
        return out

    @cached_property
    def degree(self) -> dict[str, int]:
        return {n: len(self.successors[n]) + len(self.predecessors[n]) for n in self.entities}

    def relevant_edges(self, mapped: set[str]) -> int:
        """|E_rel|: reference edges with at least one endpoint in `mapped` (the seed's recall
        denominator), counted without scanning every edge: the degrees of the mapped nodes,
        less the edges counted from both ends."""
        total = sum(self.degree.get(x, 0) for x in mapped)
        inside = sum(1 for x in mapped for y in self.successors.get(x, ()) if y in mapped)
        return total - inside

    def nx_graph(self):
        """The reference as a networkx DiGraph (statistics, cross-checks, the bench baseline)."""
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(self.node_ids)
        graph.add_edges_from(sorted(self.edges))
        return graph

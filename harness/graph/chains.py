"""Canonical causal chains computed from kg.json, mirroring the compiled extraction queries.

The scenario generator needs "the" causal path from an intervention to an outcome before any
database exists; it must be the same chain the C3/C4 queries return, or gold and context
would disagree. Both follow the section's declared `path_shapes`: sequences of predicate
roles, tried in order, and the chains of the first shape that matches are the answer.
A test checks this function against the Cypher on a real Neo4j.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any


class ChainIndex:
    """Adjacency by (subject, role) over a compiled graph, for fixed-shape chain search."""

    def __init__(self, graph: dict[str, Any]) -> None:
        role_of = {p["name"]: p["role"] for p in graph["predicates"]}
        self.out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for a in graph["assertions"]:
            self.out[(a["subject_id"], role_of[a["predicate"]])].append(a)
        for edges in self.out.values():
            edges.sort(key=lambda a: a["assertion_id"])

    def chains(
        self,
        start: str,
        target: str,
        shapes: list[list[str]],
        validated_only: bool,
    ) -> list[list[str]]:
        """Assertion-id chains of the first matching shape, sorted by ids."""
        for shape in shapes:
            found = self._walk(start, target, shape, validated_only)
            if found:
                return sorted(found)
        return []

    def _walk(
        self, node: str, target: str, shape: list[str], validated_only: bool
    ) -> list[list[str]]:
        paths: list[tuple[str, list[str]]] = [(node, [])]
        for role in shape:
            nxt = []
            for at, ids in paths:
                for a in self.out.get((at, role), ()):
                    if validated_only and not a["validated"]:
                        continue
                    if a["assertion_id"] in ids:
                        continue
                    nxt.append((a["object_id"], [*ids, a["assertion_id"]]))
            paths = nxt
            if not paths:
                return []
        return [ids for at, ids in paths if at == target]

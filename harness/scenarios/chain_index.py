"""Causal chains computed from kg.json, mirroring the compiled extraction queries.

A causal_chain section of a grounded condition shows, per candidate, every chain over its
relationship types from the candidate to the target outcome: at most `max_length` steps, no
node visited twice, a class-level claim that applies to the candidate (`member_ids`) allowed
as the first step; ranked by the declared `chain_order` (assertion ids break the remaining
ties) and cut at `max_chains`. Where unvalidated chains are shown (C4) they form a second
group with its own bound, after the validated one. `section_chains` computes exactly that
from the compiled graph, so the scenario generator (and the tests) know what a context shows
before any database exists; a test checks it against the Cypher on a real Neo4j.

`chains` keeps the older rule a domain may still declare for its gold paths
(`gold_path_shapes` in scenarios.yaml): sequences of predicate roles, tried in order, the
chains of the first shape that matches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgbench.contract import Section


def chain_rank_key(
    ids: Sequence[str],
    assertions: Mapping[str, Mapping[str, Any]],
    order: Iterable[str],
    evidence_rank: Mapping[str, int],
) -> tuple:
    """Sort key of a chain under a declared chain order (smaller sorts first), the same as
    the extraction query's ORDER BY: weakest step's evidence rank, hop count, then ids."""
    parts: list[Any] = []
    for key in order:
        if key == "strongest_evidence":
            parts.append(-min(evidence_rank[assertions[i]["evidence_level"]] for i in ids))
        elif key == "fewest_hops":
            parts.append(len(ids))
        elif key == "most_hops":
            parts.append(-len(ids))
        else:  # pragma: no cover - the compiler accepts only the keys above
            raise ValueError(f"unknown chain order key {key!r}")
    parts.append(tuple(ids))
    return tuple(parts)


class ChainIndex:
    """Adjacency by (subject, role) over a compiled graph, for chain search."""

    def __init__(self, graph: dict[str, Any], evidence_rank: Mapping[str, int] | None = None):
        role_of = {p["name"]: p["role"] for p in graph["predicates"]}
        self.role_of = role_of
        self.assertions = {a["assertion_id"]: a for a in graph["assertions"]}
        self.out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        # class-level claims by the member they apply to: a member's possible first steps
        self.inherited: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        kinds = {c["name"] for c in graph["entity_classes"] if c.get("is_group")}
        groups = {e["id"] for e in graph["entities"] if e["category"] in kinds}
        for a in graph["assertions"]:
            role = role_of[a["predicate"]]
            self.out[(a["subject_id"], role)].append(a)
            if a["subject_id"] not in groups:
                continue  # a modifier of a class is no step from its members
            for member in a.get("member_ids") or ():
                self.inherited[(member, role)].append(a)
        for edges in (*self.out.values(), *self.inherited.values()):
            edges.sort(key=lambda a: a["assertion_id"])
        self.evidence_rank = dict(evidence_rank or {})

    # the rule of the extraction queries -------------------------------------------------------

    def section_chains(self, start: str, target: str, section: Section) -> list[list[str]]:
        """The chains a causal_chain section shows for one candidate, in the order shown:
        validated chains (at most `max_chains`), then, where the section shows them,
        unvalidated ones (at most `max_chains` more)."""
        groups = [True] if section.validated_only else [True, False]
        out: list[list[str]] = []
        for validated in groups:
            out += self.all_chains(
                start,
                target,
                tuple(section.roles),
                int(section.max_length or 0),
                validated,
                int(section.max_chains or 0),
                tuple(section.chain_order or ()),
            )
        return out

    def all_chains(
        self,
        start: str,
        target: str,
        roles: tuple[str, ...],
        max_length: int,
        validated: bool,
        max_chains: int,
        order: tuple[str, ...],
    ) -> list[list[str]]:
        """Every simple chain of `roles` from start to target of at most max_length steps whose
        steps are all validated (validated=True) or not all validated (False), ranked by
        `order` and cut at max_chains."""
        found: list[list[str]] = []

        def walk(node: str, ids: list[str], seen: set[str], first: bool) -> None:
            if node == target and ids:
                if all(self.assertions[i]["validated"] for i in ids) is validated:
                    found.append(list(ids))
                return
            if len(ids) >= max_length:
                return
            for role in roles:
                steps = list(self.out.get((node, role), ()))
                if first:
                    steps += self.inherited.get((node, role), ())
                for a in steps:
                    if validated and not a["validated"]:
                        continue  # pruned, as the query prunes while it expands
                    nxt = a["object_id"]
                    if nxt in seen:
                        continue
                    walk(nxt, [*ids, a["assertion_id"]], seen | {nxt}, False)

        walk(start, [], {start}, True)
        if "strongest_evidence" in order and not self.evidence_rank:
            raise ValueError("ranking by evidence needs the evidence-level ranks")
        unique = {tuple(c): c for c in found}
        ranked = sorted(
            unique.values(),
            key=lambda ids: chain_rank_key(ids, self.assertions, order, self.evidence_rank),
        )
        return ranked[:max_chains]

    # gold-path shapes (scenarios.yaml `gold_path_shapes`) -------------------------------------

    def chains(
        self,
        start: str,
        target: str,
        shapes: Sequence[Sequence[str]],
        validated_only: bool,
    ) -> list[list[str]]:
        """Assertion-id chains of the first matching shape, sorted by ids."""
        for shape in shapes:
            found = self._walk(start, target, shape, validated_only)
            if found:
                return sorted(found)
        return []

    def _walk(
        self, node: str, target: str, shape: Sequence[str], validated_only: bool
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

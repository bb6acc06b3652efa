"""Causal chains through the graph: finding, filtering and ranking them.

A chain is a sequence of assertions in which each one's object is the next one's subject. A
rule that names a condition (e.g. C3) takes its chains from what that condition's causal_chain
section shows, through `chain_index.ChainIndex`, the mirror the extraction queries
are tested against, so a gold path is one the grounded context shows; where the domain
declares `gold_path_shapes`, only the chains of the first shape that matches count. A rule
without a condition walks every simple chain over its roles (used for the stricter checks:
"has this distractor any validated chain to the target at all?").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from .chain_index import ChainIndex
from .kg import KnowledgeGraph
from .rules import ChainRule


@dataclass(frozen=True)
class Chain:
    """Assertion ids in order, and the entity ids they pass through (len(ids) + 1)."""

    ids: tuple[str, ...]
    nodes: tuple[str, ...]

    @property
    def start(self) -> str:
        return self.nodes[0]

    @property
    def end(self) -> str:
        return self.nodes[-1]

    @property
    def hops(self) -> int:
        return len(self.ids)

    @property
    def intermediates(self) -> tuple[str, ...]:
        return self.nodes[1:-1]


class ChainFinder:
    """Chain queries over one graph, memoised (the graph is small, the questions repeat)."""

    def __init__(self, kg: KnowledgeGraph, shapes: tuple[tuple[str, ...], ...] = ()) -> None:
        self.kg = kg
        self.shapes = shapes  # scenarios.yaml gold_path_shapes (first match wins), if any
        self._cache: dict[tuple, tuple[Chain, ...]] = {}

    @cached_property
    def _index(self) -> ChainIndex:
        return ChainIndex(self.kg.graph, self.kg.domain.evidence_rank)

    def chain_of(self, ids: Iterable[str]) -> Chain:
        ids = tuple(ids)
        asr = [self.kg.assertions[i] for i in ids]
        return Chain(ids, (asr[0]["subject_id"], *(a["object_id"] for a in asr)))

    def chains(self, start: str, end: str, rule: ChainRule) -> tuple[Chain, ...]:
        """Chains from `start` to `end` that satisfy `rule`, in a deterministic order."""
        key = ("to", start, end, rule)
        if key not in self._cache:
            if rule.condition:
                section = self.kg.condition_section(rule.condition)
                if section is None:
                    found = []
                elif self.shapes:
                    found = self._index.chains(start, end, self.shapes, section.validated_only)
                else:
                    found = self._index.section_chains(start, end, section)
                raw = [self.chain_of(ids) for ids in found]
            else:
                raw = [c for c in self.walk(start, rule) if c.end == end]
            self._cache[key] = tuple(c for c in raw if self.satisfies(c, rule))
        return self._cache[key]

    def walk(self, start: str, rule: ChainRule) -> tuple[Chain, ...]:
        """Every simple chain from `start` whose every step passes the rule's step filters."""
        key = ("walk", start, rule)
        if key in self._cache:
            return self._cache[key]
        out: list[Chain] = []

        def dfs(node: str, ids: list[str], nodes: list[str]) -> None:
            if len(ids) >= rule.max_hops:
                return
            for a in self.kg.out_role(node, rule.roles):
                if not self.step_ok(a, rule) or a["object_id"] in nodes:
                    continue
                chain_ids, chain_nodes = [*ids, a["assertion_id"]], [*nodes, a["object_id"]]
                out.append(Chain(tuple(chain_ids), tuple(chain_nodes)))
                dfs(a["object_id"], chain_ids, chain_nodes)

        dfs(start, [], [start])
        self._cache[key] = tuple(out)
        return self._cache[key]

    def reaches(self, start: str, end: str, rule: ChainRule) -> bool:
        return bool(self.chains(start, end, rule))

    def step_ok(self, assertion: dict, rule: ChainRule) -> bool:
        return (
            self.kg.role(assertion) in rule.roles
            and (not rule.validated_only or assertion["validated"])
            and (not rule.evidence_levels or assertion["evidence_level"] in rule.evidence_levels)
            and (not rule.causal_status or assertion["causal_status"] in rule.causal_status)
        )

    def satisfies(self, chain: Chain, rule: ChainRule) -> bool:
        if not rule.min_hops <= chain.hops <= rule.max_hops:
            return False
        if not all(self.step_ok(self.kg.assertions[i], rule) for i in chain.ids):
            return False
        kinds = {self.kg.category(n) for n in chain.intermediates}
        if rule.via_classes and not kinds & set(rule.via_classes):
            return False
        if kinds & set(rule.avoid_classes):
            return False
        return not rule.effect or self.effect(chain) == rule.effect

    def effect(self, chain: Chain) -> str:
        """Net direction of the chain on its end node: each decreasing step flips the sign."""
        sign = 1
        for i in chain.ids:
            if self.kg.assertions[i]["direction"] == "decrease":
                sign = -sign
        return "increase" if sign > 0 else "decrease"

    def weakest(self, chain: Chain) -> int:
        """Evidence rank of the chain's weakest step (higher is stronger)."""
        return min(
            self.kg.evidence_rank(self.kg.assertions[i]["evidence_level"]) for i in chain.ids
        )

    def populations(self, chain: Chain) -> tuple[str, ...]:
        """Populations the chain's steps are restricted to (most chains name none)."""
        pops = {self.kg.assertions[i]["population_id"] for i in chain.ids}
        return tuple(sorted(p for p in pops if p))

    def rank_key(self, chain: Chain, ranking: tuple[str, ...]) -> tuple:
        """Sort key implementing the declared path ranking (smaller sorts first)."""
        first_role = self.kg.role(self.kg.assertions[chain.ids[0]])
        parts: list = []
        for key in ranking:
            if key == "mechanism_first":
                parts.append(0 if first_role == "mechanistic" else 1)
            elif key == "strongest_evidence":
                parts.append(-self.weakest(chain))
            elif key == "fewest_hops":
                parts.append(chain.hops)
            elif key == "most_hops":
                parts.append(-chain.hops)
            elif key == "assertion_ids":
                parts.append(chain.ids)
            # outcome_claim_first is applied by the caller, which knows the qualifying claim
        parts.append(chain.ids)
        return tuple(parts)

    def best(self, chains: Iterable[Chain], ranking: tuple[str, ...]) -> Chain | None:
        ordered = sorted(chains, key=lambda c: self.rank_key(c, ranking))
        return ordered[0] if ordered else None

"""Bounded shortest-path lengths in the reference graph, for many pairs at once.

The seed scores a generated edge by `shortest_path_length(u, v) <= 7` in the reference. One
networkx query per edge repeats the same breadth-first searches again and again (every edge
from a node starts one), and on a large graph (the 100,000-assertion synthetic domain) a
query costs milliseconds. Here the reference is compiled once into arrays (CSR by target),
and the distances of all the pairs of all the roots come from one bit-parallel breadth-first
search per 1,024 distinct sources: each node holds a bitset of the sources that reached it,
and one level is one gather plus one `bitwise_or.reduceat` over the edges. A search stops at
the largest k asked for, or earlier when no source reaches anything new.

`directed=False` measures paths ignoring edge directions. The distance of a node to itself
is 0 (the seed's rule; the scorer counts such collapsed edges apart). Tests check every
answer against networkx on small hand-made and random graphs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

WORD = 64
MAX_WORDS = 16  # sources per pass: 16 * 64 = 1,024


class DistanceIndex:
    """Built once per reference graph and direction mode; answers batches of pair queries."""

    def __init__(
        self, node_ids: Sequence[str], edges: Iterable[tuple[str, str]], directed: bool = True
    ) -> None:
        self.directed = directed
        self.index = {n: i for i, n in enumerate(node_ids)}
        self.n = len(self.index)
        self._edges = list(edges)
        pairs = [(self.index[s], self.index[t]) for s, t in self._edges]
        src = np.fromiter((s for s, _ in pairs), dtype=np.int64, count=len(pairs))
        dst = np.fromiter((t for _, t in pairs), dtype=np.int64, count=len(pairs))
        if not directed:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        order = np.argsort(dst, kind="stable")
        self._src = src[order]
        targets, starts = np.unique(dst[order], return_index=True)
        self._targets = targets
        self._starts = starts

    def distances(self, pairs: Sequence[tuple[str, str]], max_k: int) -> list[int | None]:
        """Length of the shortest path from a to b per pair, or None when it is longer than
        max_k, there is none, or a node is not in the graph."""
        result: list[int | None] = [None] * len(pairs)
        by_source: dict[int, list[int]] = defaultdict(list)
        for i, (a, b) in enumerate(pairs):
            ia, ib = self.index.get(a), self.index.get(b)
            if ia is None or ib is None:
                continue
            if ia == ib:
                result[i] = 0
            else:
                by_source[ia].append(i)
        sources = sorted(by_source)
        chunk = WORD * MAX_WORDS
        for start in range(0, len(sources), chunk):
            batch = sources[start : start + chunk]
            queries = [(slot, i) for slot, s in enumerate(batch) for i in by_source[s]]
            found = self._search(
                batch, [(slot, self.index[pairs[i][1]]) for slot, i in queries], max_k
            )
            for (_, i), level in zip(queries, found, strict=True):
                if level:
                    result[i] = level
        return result

    def _search(self, sources: list[int], queries: list[tuple[int, int]], max_k: int) -> list[int]:
        """Per query (source slot, target node): the level at which the target was reached,
        or 0 when not within max_k."""
        words = (len(sources) + WORD - 1) // WORD
        frontier = np.zeros((self.n, words), dtype=np.uint64)
        slots = np.arange(len(sources))
        frontier[np.asarray(sources), slots // WORD] |= np.left_shift(
            np.uint64(1), (slots % WORD).astype(np.uint64)
        )
        reached = frontier.copy()
        q_slot = np.fromiter((q[0] for q in queries), dtype=np.int64, count=len(queries))
        q_node = np.fromiter((q[1] for q in queries), dtype=np.int64, count=len(queries))
        q_word = q_slot // WORD
        q_bit = np.left_shift(np.uint64(1), (q_slot % WORD).astype(np.uint64))
        level_of = np.zeros(len(queries), dtype=np.int64)
        if len(self._src) == 0:
            return level_of.tolist()
        for level in range(1, max_k + 1):
            gathered = frontier[self._src]
            nxt = np.zeros_like(frontier)
            nxt[self._targets] = np.bitwise_or.reduceat(gathered, self._starts, axis=0)
            nxt &= ~reached
            if not nxt.any():
                break
            reached |= nxt
            hit = (nxt[q_node, q_word] & q_bit) != 0
            level_of[hit & (level_of == 0)] = level
            frontier = nxt
        return level_of.tolist()

    def within(self, source: str, max_k: int, reverse: bool = False) -> set[str]:
        """Nodes at most max_k steps from `source` (to it, with reverse=True), itself included.
        One breadth-first search with networkx; the reference responders use it per prompt."""
        import networkx as nx

        graph = self._nx(reverse)
        if source not in graph:
            return set()
        return set(nx.single_source_shortest_path_length(graph, source, cutoff=max_k))

    def _nx(self, reverse: bool):
        import networkx as nx

        cache = self.__dict__.setdefault("_nx_cache", {})
        if reverse not in cache:
            graph = nx.DiGraph() if self.directed else nx.Graph()
            graph.add_nodes_from(self.index)
            flip = reverse and self.directed
            graph.add_edges_from((t, s) if flip else (s, t) for s, t in self._edges)
            cache[reverse] = graph
        return cache[reverse]

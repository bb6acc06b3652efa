"""Node mapping: generated concept names -> domain entities, every decision recorded.

Methods, in order, the first that decides wins:

1. `exact_name`, `synonym`, `xref`: the name's normal form (names.name_key) equals an
   entity's name, one of its synonyms, or one of its cross-references (score 100);
2. `fuzzy`: rapidfuzz `token_sort_ratio` against every name and synonym, best score at or
   above the declared `fuzzy_threshold` (0-100);
3. `embedding` (only with a model): cosine similarity of the name's embedding to every name
   and synonym, best at or above `embedding_threshold`;
4. otherwise `unmapped`.

A tie between different entities at any tier is `ambiguous` and maps to nothing: unmapped
nodes are counted, never guessed. An optional model verification (through the runner, see
run.py) can then reject fuzzy or embedding matches; a rejected match is unmapped with
`verified: false` and the rejected candidate kept for the reader.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from .embeddings import EmbeddingModel
from .names import name_key
from .reference import ReferenceGraph

EXACT_METHODS = ("exact_name", "synonym", "xref")
SOFT_METHODS = ("fuzzy", "embedding")


@dataclass
class Decision:
    name: str
    key: str
    entity_id: str | None
    method: str  # exact_name | synonym | xref | fuzzy | embedding | ambiguous | unmapped
    score: float | None = None
    candidates: list[str] = field(default_factory=list)
    verified: bool | None = None
    rejected_entity_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        return cls(**data)


class LabelIndex:
    """Normal forms of every entity's name, synonyms and xrefs."""

    def __init__(self, reference: ReferenceGraph) -> None:
        self.by_tier: dict[str, dict[str, set[str]]] = {m: defaultdict(set) for m in EXACT_METHODS}
        labels: dict[str, set[str]] = defaultdict(set)  # fuzzy/embedding choices: names, synonyms
        for e in reference.entities.values():
            self.by_tier["exact_name"][name_key(e.name)].add(e.id)
            labels[name_key(e.name)].add(e.id)
            for s in e.synonyms:
                self.by_tier["synonym"][name_key(s)].add(e.id)
                labels[name_key(s)].add(e.id)
            for x in e.xrefs:
                self.by_tier["xref"][name_key(x)].add(e.id)
        self.labels = sorted(k for k in labels if k)
        self.label_entities = [sorted(labels[k]) for k in self.labels]

    def exact(self, key: str) -> tuple[str, list[str]] | None:
        for method in EXACT_METHODS:
            ids = self.by_tier[method].get(key)
            if ids:
                return method, sorted(ids)
        return None


class Mapper:
    def __init__(
        self,
        reference: ReferenceGraph,
        fuzzy_threshold: float,
        embedding: EmbeddingModel | None = None,
        embedding_threshold: float = 1.0,
    ) -> None:
        self.index = LabelIndex(reference)
        self.fuzzy_threshold = fuzzy_threshold
        self.embedding = embedding
        self.embedding_threshold = embedding_threshold
        self._label_vectors = None

    def map_names(self, names: list[str]) -> dict[str, Decision]:
        """One decision per distinct name key (the first spelling is kept)."""
        out: dict[str, Decision] = {}
        pending: list[Decision] = []
        for name in names:
            key = name_key(name)
            if key in out:
                continue
            decision = self._lexical(name, key)
            out[key] = decision
            if decision.method == "unmapped":
                pending.append(decision)
        if self.embedding is not None and pending:
            self._embed(pending)
        return out

    def _lexical(self, name: str, key: str) -> Decision:
        found = self.index.exact(key)
        if found is not None:
            method, ids = found
            if len(ids) == 1:
                return Decision(name, key, ids[0], method, 100.0, ids)
            return Decision(name, key, None, "ambiguous", 100.0, ids)
        from rapidfuzz import fuzz, process

        hits = process.extract(
            key,
            self.index.labels,
            scorer=fuzz.token_sort_ratio,
            score_cutoff=self.fuzzy_threshold,
            limit=None,
        )
        if hits:
            best = max(score for _, score, _ in hits)
            ids = sorted({e for _, s, i in hits if s == best for e in self.index.label_entities[i]})
            if len(ids) == 1:
                return Decision(name, key, ids[0], "fuzzy", round(best, 2), ids)
            return Decision(name, key, None, "ambiguous", round(best, 2), ids)
        return Decision(name, key, None, "unmapped")

    def _embed(self, pending: list[Decision]) -> None:
        assert self.embedding is not None
        if self._label_vectors is None:
            self._label_vectors = self.embedding.encode(self.index.labels)
        vectors = self.embedding.encode([d.name for d in pending])
        sims = vectors @ self._label_vectors.T
        for decision, row in zip(pending, sims, strict=True):
            best = float(row.max()) if row.size else -1.0
            if best < self.embedding_threshold:
                decision.score = round(best, 4) if row.size else None
                continue
            tied = [i for i, s in enumerate(row) if s >= best - 1e-6]
            ids = sorted({e for i in tied for e in self.index.label_entities[i]})
            decision.score = round(best, 4)
            decision.candidates = ids
            if len(ids) == 1:
                decision.entity_id, decision.method = ids[0], "embedding"
            else:
                decision.method = "ambiguous"

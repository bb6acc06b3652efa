"""The lexicon: a domain's entity names, synonyms and classes, and free text resolved to ids.

How the scorer reads names in an answer (a recommendation, a claim's subject or object):
deterministic string matching on normalised names, memoised and bounded so that hostile
answers stay cheap; no model is involved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from harness.evaluation.id_sets import as_set

# Longer text is not a name; bounding it keeps hostile multi-megabyte strings cheap.
MAX_NAME_TEXT = 4096
# Short names ("ACE", "BP") are matched only as the whole text, never inside a sentence.
MIN_CONTAINED_NAME = 4
# Name resolution is memoised per lexicon (a run repeats the same few hundred claim texts
# thousands of times). Only texts up to MEMO_TEXT characters are kept, and at most MEMO_SIZE
# of them (the memo is emptied when full), so hostile answers with ever-new multi-kilobyte
# texts cost what they cost without it and cannot grow memory.
MEMO_TEXT = 256
MEMO_SIZE = 16_384

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def norm(text: str) -> str:
    return " ".join(_NON_ALNUM.sub(" ", text.lower()).split())


@lru_cache(maxsize=4096)
def norm_short(text: str) -> str:
    """`norm` of a short, often repeated text (an assertion's predicate), memoised."""
    return norm(text)


def norm_any(text: str) -> str:
    return norm_short(text) if len(text) <= MEMO_TEXT else norm(text)


# Words that, just before a name, reject it ("avoid lisinopril", "do not use lisinopril",
# "never lisinopril"), and phrases that, just after it, do ("lisinopril should be avoided",
# "lisinopril is not recommended"). A recommendation that rejects the one intervention it
# names picks nothing (reliability review 2026-12, sc.negated-alone: it scored as a pick).
REJECTING_BEFORE = frozenset(
    [
        "not",
        "no",
        "avoid",
        "avoiding",
        "never",
        "stop",
        "stopping",
        "discontinue",
        "withhold",
        "against",
        "without",
    ]
)
REJECTING_AFTER = ("avoided", "not recommended", "not advised", "not indicated", "should not")
REJECT_WINDOW = 3  # tokens


def _rejects(key: str, spans: list[tuple[int, int]]) -> bool:
    """Whether a rejecting word stands within REJECT_WINDOW tokens before a name, or a
    rejecting phrase right after one, outside every name (a name may hold such a word)."""
    tokens = key.split(" ")
    inside = {i for start, n in spans for i in range(start, start + n)}
    for start, n in spans:
        before = [tokens[i] for i in range(max(0, start - REJECT_WINDOW), start) if i not in inside]
        if REJECTING_BEFORE.intersection(before):
            return True
        after = " ".join(tokens[start + n : start + n + REJECT_WINDOW + 1])
        if any(f" {p} " in f" {after} " for p in REJECTING_AFTER):
            return True
    return False


@dataclass
class Lexicon:
    """Names, synonyms and class memberships of a domain's entities (from kg.json).

    Matching is deterministic string matching on normalised names; no model is involved.
    `interventions` (entity ids of intervention classes, plus intervention-class ids) lets a
    recommendation be read as a choice among interventions; None means "not known", and then
    every entity counts.
    """

    names: dict[str, set[str]] = field(default_factory=dict)  # normalised name -> ids
    class_members: dict[str, set[str]] = field(default_factory=dict)  # class id -> member ids
    member_classes: dict[str, set[str]] = field(default_factory=dict)  # member id -> class ids
    assertions: dict[str, dict[str, Any]] = field(default_factory=dict)
    supports: dict[str, set[str]] = field(default_factory=dict)  # evidence id -> assertion ids
    evidence_ids: set[str] = field(default_factory=set)
    interventions: set[str] | None = None
    # predicate name -> its declared role (kg.json's predicates); empty where unknown (a
    # lexicon built from a context or a hand-made graph: ClaimReader.role then reads the
    # predicate's own words)
    predicate_roles: dict[str, str] = field(default_factory=dict)
    max_name_tokens: int = 0
    first_tokens: set[str] = field(default_factory=set)  # first word of every name
    # first word -> the token counts of the names (of at least MIN_CONTAINED_NAME chars) that
    # start with it: the only n-gram lengths worth looking up at a position with that word
    gram_lengths: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # memoised resolutions, one dict per kind: "resolve", "equivalents", "choice" (see
    # MEMO_TEXT); emptied whenever a name is added
    _memo: dict[str, dict[str, frozenset[str]]] = field(
        default_factory=lambda: {"resolve": {}, "equivalents": {}, "choice": {}},
        repr=False,
        compare=False,
    )

    def add_name(self, label: str, entity_id: str) -> None:
        key = norm(label)
        if key:
            self.names.setdefault(key, set()).add(entity_id)
            length = key.count(" ") + 1
            self.max_name_tokens = max(self.max_name_tokens, length)
            first = key.split(" ", 1)[0]
            self.first_tokens.add(first)
            if len(key) >= MIN_CONTAINED_NAME:
                known = self.gram_lengths.get(first, ())
                if length not in known:
                    self.gram_lengths[first] = tuple(sorted((*known, length)))
            for memo in self._memo.values():
                memo.clear()

    def _memoised(self, kind: str, text: str, compute: Callable[[str], set[str]]) -> frozenset[str]:
        """compute(text), remembered for short texts (bounded: see MEMO_TEXT, MEMO_SIZE).

        Only `add_name` empties the memo: the lexicon is built once and then only read, so
        class memberships set while building are in place before the first resolution."""
        memo = self._memo[kind]
        hit = memo.get(text)
        if hit is not None:
            return hit
        hit = frozenset(compute(text))
        if len(text) <= MEMO_TEXT:
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            memo[text] = hit
        return hit

    @classmethod
    def from_graph(cls, graph: dict[str, Any]) -> Lexicon:
        """The lexicon of a compiled domain: every entity name and synonym, classes, supports."""
        lex = cls()
        for e in graph.get("entities", []):
            for label in (e["id"], e["name"], *e.get("synonyms", [])):
                lex.add_name(label, e["id"])
        for c in graph.get("intervention_classes", []):
            lex.class_members[c["class_id"]] = set(c["member_ids"])
            for label in (c["class_id"], c["class_name"]):
                lex.add_name(label, c["class_id"])
            for m in c["member_ids"]:
                lex.member_classes.setdefault(m, set()).add(c["class_id"])
        lex.assertions = {a["assertion_id"]: a for a in graph.get("assertions", [])}
        for s in graph.get("supports", []):
            lex.supports.setdefault(s["evidence_id"], set()).add(s["assertion_id"])
        lex.evidence_ids = {e["evidence_id"] for e in graph.get("evidence_sources", [])}
        lex.evidence_ids |= set(lex.supports)
        lex.predicate_roles = {
            p["name"]: p["role"]
            for p in graph.get("predicates", [])
            if isinstance(p, dict) and isinstance(p.get("role"), str)
        }
        kinds = {c["name"] for c in graph.get("entity_classes", []) if c.get("is_intervention")}
        if kinds:
            lex.interventions = {
                e["id"] for e in graph.get("entities", []) if e.get("category") in kinds
            } | set(lex.class_members)
        return lex

    @classmethod
    def from_context(
        cls, context: dict[str, Any] | None, gold: dict[str, Any] | None = None
    ) -> Lexicon:
        """A lexicon without a compiled domain: exact ids and names found in gold and context.

        No synonyms and no classes are known, so a recommendation matches only by an entity's
        id or its exact name as the context spells it; evidence support is read from the
        evidence lists of the context's assertions. Under C1 (no context) only ids match.
        """
        lex = cls()
        context = context if isinstance(context, dict) else {}
        for eid, e in (context.get("entities") or {}).items():
            lex.add_name(eid, eid)
            if isinstance(e, dict) and isinstance(e.get("name"), str):
                lex.add_name(e["name"], eid)
        for aid, a in (context.get("assertions") or {}).items():
            if not isinstance(a, dict):
                continue
            lex.assertions[aid] = a
            for end in ("subject", "object"):
                ent = a.get(end)
                if isinstance(ent, dict) and isinstance(ent.get("id"), str):
                    lex.add_name(ent["id"], ent["id"])
                    if isinstance(ent.get("name"), str):
                        lex.add_name(ent["name"], ent["id"])
            for ev in a.get("evidence") or []:
                if isinstance(ev, dict) and isinstance(ev.get("evidence_id"), str):
                    lex.supports.setdefault(ev["evidence_id"], set()).add(aid)
        lex.evidence_ids = set(lex.supports)
        gold = gold if isinstance(gold, dict) else {}
        wanted = as_set(gold.get("preferred_intervention"))
        wanted |= as_set(gold.get("acceptable_interventions"))
        for i in wanted:
            lex.add_name(i, i)
        candidates = (context.get("parameters") or {}).get("candidate_ids") or []
        lex.interventions = wanted | {c for c in candidates if isinstance(c, str)}
        return lex

    def _contained(self, key: str) -> list[set[str]]:
        """Id sets of every name (of at least MIN_CONTAINED_NAME chars) that occurs in `key`.

        Names are normalised to space-separated tokens, so "occurs as a whole word sequence"
        is "is one of the key's token n-grams": a dictionary lookup per n-gram, linear in the
        text, instead of a regular expression per name.
        """
        tokens = key.split(" ")
        found: list[set[str]] = []
        names, lengths, size = self.names, self.gram_lengths, len(tokens)
        # only positions where some name starts, and there only the token counts of the names
        # starting with that word: one dictionary lookup per word for text that names nothing,
        # never more n-grams than the previous every-length scan looked up
        for i, t in enumerate(tokens):
            for n in lengths.get(t, ()):
                if i + n > size:
                    break
                gram = " ".join(tokens[i : i + n]) if n > 1 else t
                if len(gram) >= MIN_CONTAINED_NAME and gram in names:
                    found.append(names[gram])
        return found

    def _spans(self, key: str) -> list[tuple[int, int]]:
        """(first token, token count) of every name occurring in `key` (as `_contained`)."""
        tokens = key.split(" ")
        out = []
        for i, t in enumerate(tokens):
            for n in self.gram_lengths.get(t, ()):
                if i + n > len(tokens):
                    break
                gram = " ".join(tokens[i : i + n])
                if len(gram) >= MIN_CONTAINED_NAME and gram in self.names:
                    out.append((i, n))
        return out

    def resolve(self, text: str) -> set[str]:
        """Entity or class ids a free-text name denotes (exact normalised match, then containment)."""
        return set(self._memoised("resolve", text, self._resolve))

    def resolve_equivalents(self, text: str) -> frozenset[str]:
        """`equivalents(resolve(text))`, memoised: what a claim's subject or object can match."""
        hit = self._memo["equivalents"].get(text)
        if hit is not None:
            return hit
        return self._memoised("equivalents", text, lambda t: self.equivalents(self._resolve(t)))

    def _resolve(self, text: str) -> set[str]:
        key = norm(text[:MAX_NAME_TEXT])
        if not key:
            return set()
        if key in self.names:
            return set(self.names[key])
        hits: set[str] = set()
        for ids in self._contained(key):
            hits |= ids
        return hits

    def resolve_choice(self, text: str) -> set[str]:
        """The intervention a recommendation names, or nothing when it names rival ones.

        The whole text may be a name ("ACE inhibitor": the class and its members). Otherwise
        the intervention names inside it must agree, up to class membership: "lisinopril 10 mg
        daily" and "ACE inhibitor (lisinopril)" name one choice, "lisinopril or amlodipine"
        hedges between two and names none, so a list of every candidate cannot score.
        """
        return set(self._memoised("choice", text, self._resolve_choice))

    def choice_of(self, text: str) -> frozenset[str]:
        """`resolve_choice(text)` as the memo holds it (no copy; not to be mutated)."""
        hit = self._memo["choice"].get(text)
        if hit is not None:
            return hit
        return self._memoised("choice", text, self._resolve_choice)

    def _resolve_choice(self, text: str) -> set[str]:
        key = norm(text[:MAX_NAME_TEXT])
        if not key:
            return set()
        if key in self.names:
            return self._interventions_only(self.names[key])
        if _rejects(key, self._spans(key)):
            return set()
        groups = [g for g in map(self._interventions_only, self._contained(key)) if g]
        if not groups:
            return set()
        common = self.equivalents(groups[0])
        for g in groups[1:]:
            common &= self.equivalents(g)
        return common & set().union(*groups)

    def _interventions_only(self, ids: set[str]) -> set[str]:
        return set(ids) if self.interventions is None else ids & self.interventions

    def equivalents(self, ids: Iterable[str]) -> set[str]:
        """Ids plus their classes and class members: a drug counts for its class and back."""
        out = set(ids)
        for i in list(out):
            out |= self.member_classes.get(i, set())
            out |= self.class_members.get(i, set())
        return out

"""Metric kinds of the panel (paper section 3.7), as pure functions over plain values.

Each kind takes the response value, the gold value and a `MetricInputs` bundle (lexicon and
retrieved context) and returns a float or None when the metric is undefined for the item.
Which response field meets which gold field, and when a metric is defined, is declared in the
spec (spec/declarations/metrics.yaml) and compiled into generated/<domain>/metrics.json, whose rows are
`kgbench.contract.Metric` (the one definition of a metric's fields).

Every function here must accept any JSON value where a response value is expected: a
malformed response is scored (mostly as zeros or undefined), never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Set
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, get_args

from kgbench.contract import ClaimSupport, Metric
from kgbench.contract.models import UnparseablePolicy

# Checked in this order: "causes decrease in" is a decrease, not a cause-therefore-increase.
DECREASE_WORDS = re.compile(
    r"\b(decreas|lower|reduc|inhibit|block|suppress|prevent|attenuat|less)", re.I
)
INCREASE_WORDS = re.compile(r"\b(increas|rais|elevat|caus|induc|promot|activat|more|worsen)", re.I)

# Longer text is not a name; bounding it keeps hostile multi-megabyte strings cheap.
MAX_NAME_TEXT = 4096
# Claims checked one by one against the context; any beyond this count as unsupported, so an
# answer listing 100,000 claims costs what 500 do (no honest answer makes that many).
MAX_CHECKED_CLAIMS = 500
# How an answer with no JSON object in it enters the panel (the compiled metrics.json says
# which one is primary; the contract's UnparseablePolicy lists them).
UNPARSEABLE_POLICIES: tuple[str, ...] = get_args(UnparseablePolicy)
DEFAULT_UNPARSEABLE_POLICY = "intent_to_treat"
# Short names ("ACE", "BP") are matched only as the whole text, never inside a sentence.
MIN_CONTAINED_NAME = 4
# Name resolution is memoised per lexicon (a run repeats the same few hundred claim texts
# thousands of times). Only texts up to MEMO_TEXT characters are kept, and at most MEMO_SIZE
# of them (the memo is emptied when full), so hostile answers with ever-new multi-kilobyte
# texts cost what they cost without it and cannot grow memory.
MEMO_TEXT = 256
MEMO_SIZE = 16_384

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def _norm(text: str) -> str:
    return " ".join(_NON_ALNUM.sub(" ", text.lower()).split())


@lru_cache(maxsize=4096)
def _norm_short(text: str) -> str:
    """`_norm` of a short, often repeated text (an assertion's predicate), memoised."""
    return _norm(text)


def _norm_any(text: str) -> str:
    return _norm_short(text) if len(text) <= MEMO_TEXT else _norm(text)


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
        key = _norm(label)
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
        wanted = _as_set(gold.get("preferred_intervention"))
        wanted |= _as_set(gold.get("acceptable_interventions"))
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
        key = _norm(text[:MAX_NAME_TEXT])
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
        key = _norm(text[:MAX_NAME_TEXT])
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


@dataclass(frozen=True)
class MetricInputs:
    lexicon: Lexicon
    context: dict[str, Any] | None
    response: dict[str, Any]
    gold: dict[str, Any] | None = None  # the whole gold (the chain kinds read its chains)
    spec: Metric | None = None  # the metric being scored (its reading, its claim_support)


# The sets of the id lists of one `score_panel` call, shared by its metrics: an answer citing
# 70,000 ids is turned into a set once, not once per metric, and the few lists every metric
# reads (the cited assertion ids) are not rebuilt a dozen times per answer. Keyed by the
# list's id and holding the list, so an id is never reused while held; one dict per call
# (a context variable: concurrent calls share nothing), dropped when the call returns.
_SETS: ContextVar[dict[int, tuple[Any, frozenset[str]]] | None] = ContextVar("_SETS", default=None)


def _as_set(value: Any) -> set[str] | frozenset[str]:
    """The strings of a list (or the one string) as a set; not to be mutated by callers."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, (list, tuple, set)):
        shared = _SETS.get()
        if shared is None:  # outside a panel: nothing to share with
            return {v for v in value if isinstance(v, str)}
        held = shared.get(id(value))
        if held is not None and held[0] is value:
            return held[1]
        out = frozenset(v for v in value if isinstance(v, str))
        shared[id(value)] = (value, out)
        return out
    return set()


def abstains(resp: Any, response: dict[str, Any]) -> bool:
    """A null (or empty) recommendation with the uncertainty flag set: the contract's way of
    saying that no candidate is adequately supported."""
    empty = resp is None or (isinstance(resp, str) and not resp.strip())
    return empty and response.get("uncertainty_flag") is True


def intervention_match(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    """1.0 when the named intervention is one the gold lists, by its own id: a class counts
    only when the gold lists that class (declared homogeneous), and a class's members never
    count through it, so a heterogeneous class cannot credit a contraindicated member.

    Where the gold is to abstain (nothing wanted), a correct abstention scores 1.0 and any
    pick, confident or hedged, 0.0; elsewhere an abstention scores 0.0."""
    return _intervention(resp, _as_set(gold), inp.response, inp.lexicon)


def _intervention(resp: Any, wanted: Set[str], response: dict[str, Any], lexicon: Lexicon) -> float:
    if not wanted:
        return 1.0 if abstains(resp, response) else 0.0
    if not isinstance(resp, str) or not resp.strip():
        return 0.0
    return 0.0 if lexicon.choice_of(resp).isdisjoint(wanted) else 1.0


def _precision(r: Set[str], g: Set[str]) -> float | None:
    return len(r & g) / len(r) if r else None


def _recall(r: Set[str], g: Set[str]) -> float | None:
    return len(r & g) / len(g) if g else None


def _f1(r: Set[str], g: Set[str]) -> float | None:
    if not g and not r:
        return None
    hit = len(r & g)
    if hit == 0:
        return 0.0
    p, rec = hit / len(r), hit / len(g)
    return 2 * p * rec / (p + rec)


def set_precision(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    return _precision(_as_set(resp), _as_set(gold))


def set_recall(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    return _recall(_as_set(resp), _as_set(gold))


def set_f1(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    return _f1(_as_set(resp), _as_set(gold))


CITED_ASSERTION_FIELDS = (
    "causal_path_assertion_ids",
    "adverse_effect_assertion_ids",
    "contraindication_assertion_ids",
)


def evidence_support(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    """Share of cited evidence ids that SUPPORT at least one assertion the response cited."""
    cited_ev = _as_set(resp)
    if not cited_ev:
        return None
    cited_asr: set[str] = set()
    for key in CITED_ASSERTION_FIELDS:
        cited_asr |= _as_set(inp.response.get(key))
    return _supported_share(cited_ev, cited_asr, inp.lexicon)


_NO_IDS: frozenset[str] = frozenset()


def _supported_share(cited_ev: Set[str], cited_asr: Set[str], lexicon: Lexicon) -> float:
    supports = lexicon.supports
    good = sum(1 for ev in cited_ev if not supports.get(ev, _NO_IDS).isdisjoint(cited_asr))
    return good / len(cited_ev)


def _claims(response: dict[str, Any]) -> list[dict[str, Any]]:
    claims = response.get("claims")
    return [c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else []


def claim_count(response: dict[str, Any]) -> int:
    """Cited causal ids plus claims in words, before restatements are merged (an upper bound
    of the distinct claims `_unsupported_rate` counts; the metric is defined when > 0)."""
    return len(_as_set(response.get("causal_path_assertion_ids"))) + len(_claims(response))


def _wanted_direction(predicate_text: str) -> str | None:
    return _direction_of(_norm_any(predicate_text))


@lru_cache(maxsize=4096)
def _direction_of(words: str) -> str | None:
    """The direction a normalised predicate's words imply (memoised: predicates repeat)."""
    if DECREASE_WORDS.search(words):
        return "decrease"
    if INCREASE_WORDS.search(words):
        return "increase"
    return None


class ClaimReader:
    """The unsupported-claim metric's compatibility table (metrics.yaml `claim_support`),
    compiled: a claim's predicate words -> its kind; a kind -> the (role, direction) pairs of
    the assertions that support it.

    Reading a predicate is one regular expression per kind over at most MAX_NAME_TEXT
    characters, word beginnings only (no backtracking), memoised per normalised predicate
    (bounded like the name memo)."""

    def __init__(self, table: ClaimSupport) -> None:
        self.kinds: list[tuple[str, re.Pattern[str]]] = []
        self.supporters: dict[str, tuple[tuple[str, str | None], ...]] = {}
        for kind in table.kinds:
            words = sorted({w for w in kind.words if w}, key=len, reverse=True)
            pattern = r"(?<![0-9a-z])(?:" + "|".join(map(re.escape, words)) + ")"
            self.kinds.append((kind.name, re.compile(pattern)))
            self.supporters[kind.name] = tuple((s.role, s.direction) for s in kind.supported_by)
        # a role-less assertion's role: the first role of the kind its predicate's words state
        self.first_role = {k: rows[0][0] for k, rows in self.supporters.items() if rows}
        self._memo: dict[str, str | None] = {}

    def kind_of(self, pred_key: str) -> str | None:
        """The kind a normalised predicate states (the first listed kind whose words occur)."""
        hit = self._memo.get(pred_key, "")
        if hit != "":
            return hit
        found = next((name for name, rx in self.kinds if rx.search(pred_key)), None)
        if len(pred_key) <= MEMO_TEXT:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[pred_key] = found
        return found

    def role(self, assertion: dict[str, Any], lexicon: Lexicon) -> str | None:
        """The assertion's predicate role: declared in the graph, else read from its words."""
        predicate = assertion.get("predicate")
        if not isinstance(predicate, str):
            return None
        role = lexicon.predicate_roles.get(predicate)
        if role is None:
            kind = self.kind_of(_norm_any(predicate[:MAX_NAME_TEXT]))
            role = self.first_role.get(kind) if kind else None
        return role

    def supports(
        self, kind: str | None, pred_key: str, assertion: dict[str, Any], lexicon: Lexicon
    ) -> bool:
        """Does this assertion state this claim: its own predicate, or a compatible one?"""
        predicate = assertion.get("predicate")
        if pred_key and isinstance(predicate, str) and pred_key == _norm_any(predicate):
            return True
        if kind is None:
            return False  # a predicate of no declared kind: only its own predicate states it
        role = self.role(assertion, lexicon)
        direction = assertion.get("direction")
        return any(
            role == r and (want is None or direction == want)
            for r, want in self.supporters.get(kind, ())
        )


_READERS: dict[int, tuple[ClaimSupport, ClaimReader]] = {}


def claim_reader(spec: Metric | None) -> ClaimReader:
    """The compiled table of an unsupported_claims metric (kept per declared table)."""
    table = spec.claim_support if spec is not None else None
    if table is None:
        raise ValueError(
            "the unsupported_claims kind needs its claim_support table (metrics.json 1.1); "
            "recompile the domain"
        )
    held = _READERS.get(id(table))
    if held is None or held[0] is not table:
        if len(_READERS) > 64:
            _READERS.clear()
        held = _READERS[id(table)] = (table, ClaimReader(table))
    return held[1]


# A retrieved assertion under its subject id: (object id, the assertion).
_Indexed = tuple[str, dict[str, Any]]
_Index = dict[str, list[_Indexed]]


def _ref_id(ref: Any) -> Any:
    return ref.get("id") if isinstance(ref, dict) else None


def _index_assertions(context_assertions: dict[str, Any], subjects: set[str]) -> _Index:
    """The context's assertions whose subject is one of `subjects` (those the response's
    claims name), by subject id: built once per response, so each claim looks at the
    assertions of its own subjects, not at every assertion of the context."""
    index: _Index = {}
    # An end's id is its `<end>_id` (read by subscript: no call for an assertion whose subject
    # is not wanted, as this loop runs over every assertion of every scored context), else,
    # on a dict, its reference's `id`. Only the ids of JSON strings can match `subjects`.
    for a in context_assertions.values():
        try:
            s_id = a["subject_id"]
        except (KeyError, TypeError):
            s_id = None
        if not s_id:
            if not isinstance(a, dict):
                continue
            s_id = _ref_id(a.get("subject"))
        try:
            if s_id not in subjects:
                continue
        except TypeError:  # unhashable: not a name
            continue
        if not isinstance(s_id, str):
            continue
        try:
            o_id = a["object_id"]
        except (KeyError, TypeError):
            o_id = None
        if not o_id:
            if not isinstance(a, dict):
                continue
            o_id = _ref_id(a.get("object"))
        if isinstance(o_id, str):
            row = index.get(s_id)
            if row is None:
                index[s_id] = [(o_id, a)]
            else:
                row.append((o_id, a))
    return index


def _claim_supported(
    kind: str | None,
    pred_key: str,
    subj: frozenset[str],
    obj: frozenset[str],
    by_subject: _Index,
    lexicon: Lexicon,
    reader: ClaimReader,
) -> bool:
    """A claim is supported when an indexed assertion joins its subject to its object and
    states it: the same predicate, or one the compatibility table lists for the claim's kind
    (a null result only for a no-effect claim, a signed claim only at its sign). `subj` and
    `obj` are what its names resolve to through the lexicon (never a model), with their
    classes and members."""
    if not subj or not obj:
        return False
    # the smaller side drives the join, so a name denoting a large class costs no more than
    # a scan of the context
    if len(subj) < len(by_subject):
        groups = [by_subject[s] for s in subj if s in by_subject]
    else:
        groups = [rows for s, rows in by_subject.items() if s in subj]
    for rows in groups:
        for o_id, a in rows:
            if o_id in obj and isinstance(a, dict) and reader.supports(kind, pred_key, a, lexicon):
                return True
    return False


def unsupported_claims(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    """Share of the response's distinct causal claims with no matching assertion in the
    retrieved context."""
    if not isinstance(inp.context, dict):
        return None
    if claim_count(inp.response) == 0:
        return None
    cited = _as_set(inp.response.get("causal_path_assertion_ids"))
    return _unsupported_rate(
        inp.context, cited, _claims(inp.response), inp.lexicon, claim_reader(inp.spec)
    )


def _unsupported_rate(
    context: dict[str, Any],
    cited: set[str] | frozenset[str],
    claims: list[dict[str, Any]],
    lexicon: Lexicon,
    reader: ClaimReader,
) -> float | None:
    """Unsupported distinct claims over distinct claims (metrics.yaml, unsupported_claim_rate).

    A cited id is one claim, unsupported when the context does not hold it. A claim in words
    is the cited claim it restates (an assertion the answer cites, by id, that states it:
    same ends, compatible predicate) and then is not counted again; claims in words that
    resolve to the same subject, kind and object count once. Every other claim in words
    counts once and is unsupported unless a retrieved assertion states it. Claims beyond
    MAX_CHECKED_CLAIMS count as distinct and unsupported (bounded work)."""
    context_assertions = context.get("assertions")
    if not isinstance(context_assertions, dict):
        context_assertions = {}
    total = len(cited)
    unsupported = len(cited.difference(context_assertions))  # cited ids it does not hold
    extra = max(0, len(claims) - MAX_CHECKED_CLAIMS)
    total += extra
    unsupported += extra
    # resolve_equivalents with its memo read here (a call less per name: claims repeat)
    memo, resolve = lexicon._memo["equivalents"], lexicon.resolve_equivalents
    ends = []
    subjects: set[str] = set()
    for claim in claims[:MAX_CHECKED_CLAIMS]:
        s_text, o_text = str(claim.get("subject", "")), str(claim.get("object", ""))
        subj = memo.get(s_text)
        if subj is None:
            subj = resolve(s_text)
        obj = memo.get(o_text)
        if obj is None:
            obj = resolve(o_text)
        ends.append((claim, s_text, subj, o_text, obj))
        if subj and obj:
            subjects |= subj
    by_subject: _Index = {}
    by_cited: _Index = {}
    if subjects:
        by_subject = _index_assertions(context_assertions, subjects)
        if cited:  # the cited assertions as the graph (else the context) states them
            known = lexicon.assertions
            stated = {}
            for aid in cited:
                a = known.get(aid) or context_assertions.get(aid)
                if a is not None:
                    stated[aid] = a
            by_cited = _index_assertions(stated, subjects)
    seen: set[tuple[Any, ...]] = set()
    for claim, s_text, subj, o_text, obj in ends:
        pred_key = _norm_any(str(claim.get("predicate", ""))[:MAX_NAME_TEXT])
        kind = reader.kind_of(pred_key)
        key = (
            subj or _norm_any(s_text[:MAX_NAME_TEXT]),
            kind or pred_key,
            obj or _norm_any(o_text[:MAX_NAME_TEXT]),
        )
        if key in seen:
            continue  # the same claim said again
        seen.add(key)
        if by_cited and _claim_supported(kind, pred_key, subj, obj, by_cited, lexicon, reader):
            continue  # a cited claim restated in words: counted once, as its id
        total += 1
        # a claim whose subjects head no retrieved assertion is unsupported without a join
        if subj.isdisjoint(by_subject) or not _claim_supported(
            kind, pred_key, subj, obj, by_subject, lexicon, reader
        ):
            unsupported += 1
    return unsupported / total if total else None


# --- causal edges against every validated chain (metrics.yaml, the chain kinds) -------------

CHAIN_KINDS = ("chain_precision", "chain_recall", "chain_f1")
CAUSAL_READINGS = ("validated_chains", "gold_path")
# The gold field holding every equal validated chain (written by the gold builder); the
# declared gold field (the paper's one path) is read where it is absent.
GOLD_CHAINS_FIELD = "causal_paths"
# Gold chains read at most (a gold is ours, but a hand-edited release is bounded too).
MAX_GOLD_CHAINS = 64
# The context section shape whose paths are causal chains (conditions.yaml, SectionShape).
CHAIN_SHAPE = "causal_chain"
# Outcome evidence: one-step claims from a candidate to the target; a validated causal one
# is a chain of one step (a null result, causal_status no_effect, is not).
OUTCOME_SHAPE = "target_edges"


def gold_chains(gold: Any, field_name: str, reading: str | None) -> list[frozenset[str]]:
    """The gold chains a cited causal edge is scored against: every equal validated chain
    (`causal_paths`, else the one path), or the one path under the paper's `gold_path`."""
    if not isinstance(gold, dict):
        return []
    chains: list[frozenset[str]] = []
    if reading != "gold_path":
        paths = gold.get(GOLD_CHAINS_FIELD)
        if isinstance(paths, list):
            chains = [c for c in map(_strings, paths[:MAX_GOLD_CHAINS]) if c]
    if not chains:
        one = _strings(gold.get(field_name))
        chains = [one] if one else []
    return chains


def context_chain_ids(
    context: Any, recommendation: Any, lexicon: Lexicon
) -> frozenset[str] | set[str]:
    """The assertion ids of the context's validated chains from the recommended intervention
    (or its class) to the target: every path of a causal_chain section, and every validated
    causal one-step outcome claim (never a null result, never a candidate edge such as an
    indication), of a candidate the recommendation
    names whose every assertion the context marks validated and whose last reaches the
    target. Empty without a context, a recommendation or such a chain."""
    if not isinstance(context, dict) or not isinstance(recommendation, str):
        return _NO_IDS
    chosen = lexicon.choice_of(recommendation)
    if not chosen:
        return _NO_IDS
    wanted = lexicon.equivalents(chosen)
    assertions = context.get("assertions")
    sections = context.get("sections")
    if not isinstance(assertions, dict) or not isinstance(sections, list):
        return _NO_IDS
    params = context.get("parameters")
    target = params.get("target_id") if isinstance(params, dict) else None
    # the target, or an outcome the extraction counts as it (a composite that contains it)
    ends = {target} if isinstance(target, str) else set()
    outcomes = params.get("outcome_ids") if isinstance(params, dict) else None
    goals = params.get("goal_outcome_ids") if isinstance(params, dict) else None
    goals = set(goals) if isinstance(goals, list) else set()  # a stated goal's outcome: no end
    if ends and isinstance(outcomes, list):
        ends.update(o for o in outcomes if isinstance(o, str) and o not in goals)
    out: set[str] = set()
    for section in sections:
        shape = section.get("shape") if isinstance(section, dict) else None
        if shape not in (CHAIN_SHAPE, OUTCOME_SHAPE):
            continue  # candidate edges (indications, safety): not chains to the target
        paths = section.get("paths")
        if not isinstance(paths, list):
            continue
        for path in paths:
            if not isinstance(path, dict) or path.get("candidate_id") not in wanted:
                continue
            ids = path.get("assertion_ids")
            if not isinstance(ids, list) or not ids:
                continue
            steps = [assertions.get(i) if isinstance(i, str) else None for i in ids]
            if not all(isinstance(a, dict) and a.get("validated") is True for a in steps):
                continue
            if shape == OUTCOME_SHAPE and any(a.get("causal_status") != "causal" for a in steps):  # type: ignore[union-attr]
                continue  # a null result (or an association) to the target is no chain
            if ends and steps[-1].get("object_id") not in ends:  # type: ignore[union-attr]
                continue
            out.update(ids)
    return out


def _chain_precision(
    cited: Set[str], chains: list[frozenset[str]], on_context: Set[str]
) -> float | None:
    if not cited:
        return None
    credited = set(on_context)
    for chain in chains:
        credited |= chain
    return len(cited & credited) / len(cited)


def _chain_recall(cited: Set[str], chains: list[frozenset[str]]) -> float | None:
    if not chains:
        return None
    return max(len(cited & chain) / len(chain) for chain in chains)


def _chain_f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _chain_scores(
    kind: str,
    cited: Set[str],
    gold: Any,
    spec: Metric,
    context: Any,
    response: dict[str, Any],
    lexicon: Lexicon,
) -> float | None:
    reading = spec.reading or "validated_chains"
    chains = gold_chains(gold, spec.gold_field, reading)
    precision: float | None = None
    if kind != "chain_recall":
        on_context: Set[str] = _NO_IDS
        if reading == "validated_chains" and cited:
            on_context = context_chain_ids(
                context, response.get("recommended_intervention"), lexicon
            )
        precision = _chain_precision(cited, chains, on_context)
        if kind == "chain_precision":
            return precision
    recall = _chain_recall(cited, chains)
    return recall if kind == "chain_recall" else _chain_f1(precision, recall)


def _chain_kind(kind: str) -> Callable[[Any, Any, MetricInputs], float | None]:
    def score(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
        if inp.spec is None:
            raise ValueError(f"the {kind} kind needs its metric declaration (its reading)")
        return _chain_scores(
            kind, _as_set(resp), inp.gold, inp.spec, inp.context, inp.response, inp.lexicon
        )

    score.__name__ = kind
    score.__doc__ = f"The {kind} kind: causal edges against every validated chain."
    return score


def boolean_match(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    if not isinstance(resp, bool) or not isinstance(gold, bool):
        return 0.0
    return 1.0 if resp == gold else 0.0


KINDS: dict[str, Callable[[Any, Any, MetricInputs], float | None]] = {
    "intervention_match": intervention_match,
    "set_precision": set_precision,
    "set_recall": set_recall,
    "set_f1": set_f1,
    "evidence_support": evidence_support,
    "unsupported_claims": unsupported_claims,
    "boolean_match": boolean_match,
    **{kind: _chain_kind(kind) for kind in CHAIN_KINDS},
}


def gold_value(spec: Metric, gold: dict[str, Any]) -> Any:
    """What a metric's `defined_when` reads of the gold: its gold field, or for the chain
    kinds every id on a gold chain (the metric is defined when some chain is non-empty)."""
    if spec.kind in CHAIN_KINDS:
        return sorted(set().union(*gold_chains(gold, spec.gold_field, spec.reading)))
    return gold.get(spec.gold_field)


def _nonempty(value: Any) -> bool:
    return bool(_as_set(value)) if not isinstance(value, bool) else True


def is_defined(spec: Metric, gold: dict[str, Any], inp: MetricInputs) -> bool:
    rule = spec.defined_when
    if rule == "always":
        return True
    if rule == "response_nonempty":
        return _nonempty(inp.response.get(spec.response_field))
    if rule == "gold_nonempty":
        return _nonempty(gold_value(spec, gold))
    if rule == "both_nonempty":
        return _nonempty(inp.response.get(spec.response_field)) and _nonempty(
            gold_value(spec, gold)
        )
    if rule == "gold_true":
        return gold.get(spec.gold_field) is True
    if rule == "grounded_with_claims":
        return isinstance(inp.context, dict) and claim_count(inp.response) > 0
    raise ValueError(f"unknown defined_when rule {rule!r}")


DEFINED_WHEN = (
    "always",
    "response_nonempty",
    "gold_nonempty",
    "both_nonempty",
    "gold_true",
    "grounded_with_claims",
)


def score_panel(
    metrics: Iterable[Metric],
    gold: dict[str, Any],
    response: dict[str, Any],
    context: dict[str, Any] | None,
    lexicon: Lexicon,
) -> dict[str, float | None]:
    """Every metric of the panel on one pass over one (gold, response, context) triple."""
    out: dict[str, float | None] = {}
    token = _SETS.set({})
    try:
        for spec in metrics:
            inp = MetricInputs(lexicon, context, response, gold, spec)
            if not is_defined(spec, gold, inp):
                out[spec.name] = None
                continue
            field_value = response.get(spec.response_field)
            value = KINDS[spec.kind](field_value, gold.get(spec.gold_field), inp)
            out[spec.name] = value
    finally:
        _SETS.reset(token)  # the shared sets live for one call (and hold no answer afterwards)
    return out


# --- the panel compiled ---------------------------------------------------------------------


def _strings(value: Any) -> frozenset[str]:
    """`_as_set` without the sharing: the strings of a list (or the one string)."""
    if isinstance(value, str):
        return frozenset((value,))
    if isinstance(value, (list, tuple, set)):
        try:
            "".join(value)  # TypeError unless every item is a str: the usual case, one C call
        except TypeError:
            return frozenset(v for v in value if isinstance(v, str))
        return frozenset(value)
    return _NO_IDS


class PanelPlan:
    """A metric panel compiled once for scoring many answers: what `score_panel` computes,
    with the same kind cores (`_intervention`, `_precision`, `_unsupported_rate`...), but
    the per-metric dispatch resolved up front and every id list of the answer and the gold
    turned into a set once per answer, not once per metric that reads it.

    `score_panel` stays the reference (one generic pass through KINDS and `is_defined`);
    the two are held equal by tests/evaluation/test_eval_fast_panel.py.
    """

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self.metrics = tuple(metrics)
        for m in self.metrics:
            if m.kind not in KINDS:
                raise ValueError(f"unknown metric kind {m.kind!r}")
            if m.defined_when not in DEFINED_WHEN:
                raise ValueError(f"unknown defined_when rule {m.defined_when!r}")
        # the compatibility table of each unsupported_claims metric, compiled once
        self.readers = {
            m.name: claim_reader(m) for m in self.metrics if m.kind == "unsupported_claims"
        }
        # a chain kind's gold set (for defined_when) is every id on a gold chain, kept apart
        # from the gold field's own set under a key no field has
        self.steps = tuple(
            (
                m.name,
                m.kind,
                m.defined_when,
                m.response_field,
                f"\x00{m.reading}:{m.gold_field}" if m.kind in CHAIN_KINDS else m.gold_field,
                m,
            )
            for m in self.metrics
        )

    def score(
        self,
        gold: dict[str, Any],
        response: dict[str, Any],
        context: dict[str, Any] | None,
        lexicon: Lexicon,
    ) -> dict[str, float | None]:
        """Every metric of the panel on one (gold, response, context) triple."""
        rsets: dict[str, frozenset[str]] = {}
        gsets: dict[str, frozenset[str]] = {}
        claims: list[dict[str, Any]] | None = None
        count = -1  # claim_count, computed on first use
        out: dict[str, float | None] = {}
        for name, kind, rule, rf, gf, spec in self.steps:
            # defined_when (is_defined), on the sets computed once
            if rule != "always":
                if rule == "gold_true":
                    ok = gold.get(gf) is True
                elif rule == "grounded_with_claims":
                    ok = isinstance(context, dict)
                    if ok:
                        if count < 0:
                            claims = _claims(response) if claims is None else claims
                            cited = rsets.get("causal_path_assertion_ids")
                            if cited is None:
                                cited = rsets["causal_path_assertion_ids"] = _strings(
                                    response.get("causal_path_assertion_ids")
                                )
                            count = len(cited) + len(claims)
                        ok = count > 0
                else:
                    ok = True
                    if rule in ("response_nonempty", "both_nonempty"):
                        value = response.get(rf)
                        if not isinstance(value, bool):
                            r = rsets.get(rf)
                            if r is None:
                                r = rsets[rf] = _strings(value)
                            ok = bool(r)
                    if ok and rule in ("gold_nonempty", "both_nonempty"):
                        value = gold_value(spec, gold) if gf[:1] == "\x00" else gold.get(gf)
                        if not isinstance(value, bool):
                            g = gsets.get(gf)
                            if g is None:
                                g = gsets[gf] = _strings(value)
                            ok = bool(g)
                if not ok:
                    out[name] = None
                    continue
            if kind == "boolean_match":
                resp, want = response.get(rf), gold.get(gf)
                ok = isinstance(resp, bool) and isinstance(want, bool)
                out[name] = (1.0 if resp == want else 0.0) if ok else 0.0
                continue
            if kind in CHAIN_KINDS:
                r = rsets.get(rf)
                if r is None:
                    r = rsets[rf] = _strings(response.get(rf))
                out[name] = _chain_scores(kind, r, gold, spec, context, response, lexicon)
                continue
            g = gsets.get(gf)
            if g is None:
                g = gsets[gf] = _strings(gold.get(gf))
            if kind == "intervention_match":
                out[name] = _intervention(response.get(rf), g, response, lexicon)
                continue
            if kind == "unsupported_claims":
                if not isinstance(context, dict):
                    out[name] = None
                    continue
                claims = _claims(response) if claims is None else claims
                cited = rsets.get("causal_path_assertion_ids")
                if cited is None:
                    cited = rsets["causal_path_assertion_ids"] = _strings(
                        response.get("causal_path_assertion_ids")
                    )
                out[name] = (
                    _unsupported_rate(context, cited, claims, lexicon, self.readers[name])
                    if cited or claims
                    else None
                )
                continue
            r = rsets.get(rf)
            if r is None:
                r = rsets[rf] = _strings(response.get(rf))
            if kind == "set_precision":
                out[name] = _precision(r, g)
            elif kind == "set_recall":
                out[name] = _recall(r, g)
            elif kind == "set_f1":
                out[name] = _f1(r, g)
            elif kind == "evidence_support":
                if not r:
                    out[name] = None
                    continue
                cited_asr: set[str] = set()
                for key in CITED_ASSERTION_FIELDS:
                    c = rsets.get(key)
                    if c is None:
                        c = rsets[key] = _strings(response.get(key))
                    cited_asr |= c
                out[name] = _supported_share(r, cited_asr, lexicon)
            else:  # a kind added to KINDS and not compiled here: the generic path
                inp = MetricInputs(lexicon, context, response, gold, spec)
                out[name] = KINDS[kind](response.get(rf), gold.get(gf), inp)
        return out

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

from kgbench.contract import Metric
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
    claim: dict[str, Any], subj: frozenset[str], obj: frozenset[str], by_subject: _Index
) -> bool:
    """A claim is supported when a retrieved assertion joins its subject to its object and
    agrees with it: the same predicate, or a predicate whose words imply the assertion's
    direction ("lowers" for a decrease). `subj` and `obj` are what its names resolve to
    through the lexicon (never a model), with their classes and members."""
    if not subj or not obj:
        return False
    # the smaller side drives the join, so a name denoting a large class costs no more than
    # a scan of the context
    if len(subj) < len(by_subject):
        groups = [by_subject[s] for s in subj if s in by_subject]
    else:
        groups = [rows for s, rows in by_subject.items() if s in subj]
    pred_key: str | None = None
    want: str | None = None
    for rows in groups:
        for o_id, a in rows:
            if o_id not in obj:
                continue
            if pred_key is None:
                pred_key = _norm_any(str(claim.get("predicate", ""))[:MAX_NAME_TEXT])
                want = _direction_of(pred_key)
            if pred_key and pred_key == _norm_any(str(a.get("predicate", ""))):
                return True
            direction = a.get("direction")
            if want is None or direction in (None, "none") or direction == want:
                return True
    return False


def unsupported_claims(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    """Share of the response's causal claims with no matching assertion in the retrieved context."""
    if not isinstance(inp.context, dict):
        return None
    total = claim_count(inp.response)
    if total == 0:
        return None
    cited = _as_set(inp.response.get("causal_path_assertion_ids"))
    return _unsupported_rate(inp.context, cited, _claims(inp.response), total, inp.lexicon)


def _unsupported_rate(
    context: dict[str, Any],
    cited: set[str] | frozenset[str],
    claims: list[dict[str, Any]],
    total: int,
    lexicon: Lexicon,
) -> float:
    """Cited ids absent from the context, plus claims no retrieved assertion supports, over
    `total` (the response's claim count)."""
    context_assertions = context.get("assertions")
    if not isinstance(context_assertions, dict):
        context_assertions = {}
    unsupported = len(cited.difference(context_assertions))  # cited ids it does not hold
    unsupported += max(0, len(claims) - MAX_CHECKED_CLAIMS)
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
        ends.append((claim, subj, obj))
        if subj and obj:
            subjects |= subj
    by_subject = _index_assertions(context_assertions, subjects) if subjects else {}
    for claim, subj, obj in ends:
        # a claim whose subjects head no retrieved assertion is unsupported without a join
        if subj.isdisjoint(by_subject) or not _claim_supported(claim, subj, obj, by_subject):
            unsupported += 1
    return unsupported / total


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
}


def _nonempty(value: Any) -> bool:
    return bool(_as_set(value)) if not isinstance(value, bool) else True


def is_defined(spec: Metric, gold: dict[str, Any], inp: MetricInputs) -> bool:
    rule = spec.defined_when
    if rule == "always":
        return True
    if rule == "response_nonempty":
        return _nonempty(inp.response.get(spec.response_field))
    if rule == "gold_nonempty":
        return _nonempty(gold.get(spec.gold_field))
    if rule == "both_nonempty":
        return _nonempty(inp.response.get(spec.response_field)) and _nonempty(
            gold.get(spec.gold_field)
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
    inp = MetricInputs(lexicon=lexicon, context=context, response=response)
    out: dict[str, float | None] = {}
    token = _SETS.set({})
    try:
        for spec in metrics:
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
        self.steps = tuple(
            (m.name, m.kind, m.defined_when, m.response_field, m.gold_field) for m in self.metrics
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
        for name, kind, rule, rf, gf in self.steps:
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
                        value = gold.get(gf)
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
                total = len(cited) + len(claims)
                out[name] = (
                    _unsupported_rate(context, cited, claims, total, lexicon) if total else None
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
                inp = MetricInputs(lexicon=lexicon, context=context, response=response)
                out[name] = KINDS[kind](response.get(rf), gold.get(gf), inp)
        return out

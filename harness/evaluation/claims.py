"""Claims of an answer against the graph: cited evidence that supports the cited assertions
bearing on the recommendation, and causal claims (cited by id or said in words) that no
retrieved assertion states.

The two panel kinds `evidence_support` and `unsupported_claims` (metrics.yaml), with the
compatibility table that says which assertions state a claim (`ClaimReader`).
"""

from __future__ import annotations

import re
from collections.abc import Set
from functools import lru_cache
from typing import Any

from harness.evaluation.bearing import bearing_assertions, recommendation_claims
from harness.evaluation.id_sets import NO_IDS, as_set
from harness.evaluation.lexicon import MAX_NAME_TEXT, MEMO_SIZE, MEMO_TEXT, Lexicon, norm_any
from harness.evaluation.metric_inputs import MetricInputs
from kgbench.contract import ClaimSupport, Metric

# Checked in this order: "causes decrease in" is a decrease, not a cause-therefore-increase.
DECREASE_WORDS = re.compile(
    r"\b(decreas|lower|reduc|inhibit|block|suppress|prevent|attenuat|less)", re.I
)
INCREASE_WORDS = re.compile(r"\b(increas|rais|elevat|caus|induc|promot|activat|more|worsen)", re.I)

# Claims checked one by one against the context; any beyond this count as unsupported, so an
# answer listing 100,000 claims costs what 500 do (no honest answer makes that many).
MAX_CHECKED_CLAIMS = 500


CITED_ASSERTION_FIELDS = (
    "causal_path_assertion_ids",
    "adverse_effect_assertion_ids",
    "contraindication_assertion_ids",
)


def evidence_support(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    """Share of cited evidence ids that SUPPORT at least one cited assertion that bears on the
    recommendation (harness.evaluation.bearing)."""
    cited_ev = as_set(resp)
    if not cited_ev:
        return None
    cited_asr: set[str] = set()
    for key in CITED_ASSERTION_FIELDS:
        cited_asr |= as_set(inp.response.get(key))
    return supported_share(cited_ev, cited_asr, inp.response, inp.gold, inp.context, inp.lexicon)


def supported_share(
    cited_ev: Set[str],
    cited_asr: Set[str],
    response: Any,
    gold: Any,
    context: Any,
    lexicon: Lexicon,
) -> float:
    """The evidence_support kind's value, for both panel paths (`score_panel` and
    `PanelPlan`): a cited evidence id counts when the graph has it support a cited assertion
    that bears on the recommendation, or an outcome claim the recommendation itself states
    (its trial). One about no candidate, no gold chain and no retrieved chain (a padded
    contraindication of another class) earns its source nothing."""
    bearing = bearing_assertions(cited_asr, gold, context, lexicon)
    bearing |= recommendation_claims(response, gold, context, lexicon)
    supports = lexicon.supports
    good = sum(1 for ev in cited_ev if not supports.get(ev, NO_IDS).isdisjoint(bearing))
    return good / len(cited_ev)


def claims_of(response: dict[str, Any]) -> list[dict[str, Any]]:
    claims = response.get("claims")
    return [c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else []


def claim_count(response: dict[str, Any]) -> int:
    """Cited causal ids plus claims in words, before restatements are merged (an upper bound
    of the distinct claims `unsupported_rate` counts; the metric is defined when > 0)."""
    return len(as_set(response.get("causal_path_assertion_ids"))) + len(claims_of(response))


@lru_cache(maxsize=4096)
def direction_of(words: str) -> str | None:
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
            kind = self.kind_of(norm_any(predicate[:MAX_NAME_TEXT]))
            role = self.first_role.get(kind) if kind else None
        return role

    def supports(
        self, kind: str | None, pred_key: str, assertion: dict[str, Any], lexicon: Lexicon
    ) -> bool:
        """Does this assertion state this claim: its own predicate, or a compatible one?"""
        predicate = assertion.get("predicate")
        if pred_key and isinstance(predicate, str) and pred_key == norm_any(predicate):
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


def index_assertions(context_assertions: dict[str, Any], subjects: set[str]) -> _Index:
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
    cited = as_set(inp.response.get("causal_path_assertion_ids"))
    return unsupported_rate(
        inp.context, cited, claims_of(inp.response), inp.lexicon, claim_reader(inp.spec)
    )


def unsupported_rate(
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
        by_subject = index_assertions(context_assertions, subjects)
        if cited:  # the cited assertions as the graph (else the context) states them
            known = lexicon.assertions
            stated = {}
            for aid in cited:
                a = known.get(aid) or context_assertions.get(aid)
                if a is not None:
                    stated[aid] = a
            by_cited = index_assertions(stated, subjects)
    seen: set[tuple[Any, ...]] = set()
    for claim, s_text, subj, o_text, obj in ends:
        pred_key = norm_any(str(claim.get("predicate", ""))[:MAX_NAME_TEXT])
        kind = reader.kind_of(pred_key)
        key = (
            subj or norm_any(s_text[:MAX_NAME_TEXT]),
            kind or pred_key,
            obj or norm_any(o_text[:MAX_NAME_TEXT]),
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

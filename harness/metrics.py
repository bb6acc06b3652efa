"""Metric kinds of the panel (paper section 3.7), as pure functions over plain values.

Each kind takes the response value, the gold value and a `MetricInputs` bundle (lexicon and
retrieved context) and returns a float or None when the metric is undefined for the item.
Which response field meets which gold field, and when a metric is defined, is declared in the
spec (spec/metrics.yaml) and bound by the generated `scorer.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

DECREASE_WORDS = re.compile(
    r"\b(decreas|lower|reduc|inhibit|block|suppress|prevent|attenuat|less)", re.I
)
INCREASE_WORDS = re.compile(r"\b(increas|rais|elevat|caus|induc|promot|activat|more|worsen)", re.I)


@dataclass(frozen=True)
class MetricSpec:
    """One declared metric, as compiled into scorer.py."""

    name: str
    title: str
    kind: str
    response_field: str
    gold_field: str
    defined_when: str
    higher_is_better: bool
    binary: bool


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


@dataclass
class Lexicon:
    """Names, synonyms and class memberships of a domain's entities (from kg.json).

    Matching is deterministic string matching on normalised names; no model is involved.
    """

    names: dict[str, set[str]] = field(default_factory=dict)  # normalised name -> ids
    class_members: dict[str, set[str]] = field(default_factory=dict)  # class id -> member ids
    member_classes: dict[str, set[str]] = field(default_factory=dict)  # member id -> class ids
    assertions: dict[str, dict[str, Any]] = field(default_factory=dict)
    supports: dict[str, set[str]] = field(default_factory=dict)  # evidence id -> assertion ids

    @classmethod
    def from_graph(cls, graph: dict[str, Any]) -> Lexicon:
        lex = cls()
        for e in graph.get("entities", []):
            for label in (e["id"], e["name"], *e.get("synonyms", [])):
                lex.names.setdefault(_norm(label), set()).add(e["id"])
        for c in graph.get("intervention_classes", []):
            lex.class_members[c["class_id"]] = set(c["member_ids"])
            for label in (c["class_id"], c["class_name"]):
                lex.names.setdefault(_norm(label), set()).add(c["class_id"])
            for m in c["member_ids"]:
                lex.member_classes.setdefault(m, set()).add(c["class_id"])
        lex.assertions = {a["assertion_id"]: a for a in graph.get("assertions", [])}
        for s in graph.get("supports", []):
            lex.supports.setdefault(s["evidence_id"], set()).add(s["assertion_id"])
        return lex

    def resolve(self, text: str) -> set[str]:
        """Entity or class ids a free-text name denotes (exact normalised match, then containment)."""
        key = _norm(text)
        if not key:
            return set()
        if key in self.names:
            return set(self.names[key])
        hits: set[str] = set()
        for name, ids in self.names.items():
            if len(name) >= 4 and re.search(rf"\b{re.escape(name)}\b", key):
                hits |= ids
        return hits

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


def _as_set(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, (list, tuple, set)):
        return {v for v in value if isinstance(v, str)}
    return set()


def intervention_match(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    if not isinstance(resp, str) or not resp.strip():
        return 0.0
    chosen = inp.lexicon.equivalents(inp.lexicon.resolve(resp))
    wanted = inp.lexicon.equivalents(_as_set(gold))
    return 1.0 if chosen & wanted else 0.0


def set_precision(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    r, g = _as_set(resp), _as_set(gold)
    return len(r & g) / len(r) if r else None


def set_recall(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    r, g = _as_set(resp), _as_set(gold)
    return len(r & g) / len(g) if g else None


def set_f1(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    r, g = _as_set(resp), _as_set(gold)
    if not g and not r:
        return None
    hit = len(r & g)
    if hit == 0:
        return 0.0
    p, rec = hit / len(r), hit / len(g)
    return 2 * p * rec / (p + rec)


def evidence_support(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    """Share of cited evidence ids that SUPPORT at least one assertion the response cited."""
    cited_ev = _as_set(resp)
    if not cited_ev:
        return None
    cited_asr: set[str] = set()
    for key in (
        "causal_path_assertion_ids",
        "adverse_effect_assertion_ids",
        "contraindication_assertion_ids",
    ):
        cited_asr |= _as_set(inp.response.get(key))
    good = sum(1 for ev in cited_ev if inp.lexicon.supports.get(ev, set()) & cited_asr)
    return good / len(cited_ev)


def claim_count(response: dict[str, Any]) -> int:
    claims = response.get("claims")
    n_claims = len([c for c in claims if isinstance(c, dict)]) if isinstance(claims, list) else 0
    return len(_as_set(response.get("causal_path_assertion_ids"))) + n_claims


def _claim_supported(
    claim: dict[str, Any], inp: MetricInputs, context_assertions: dict[str, Any]
) -> bool:
    subj = inp.lexicon.equivalents(inp.lexicon.resolve(str(claim.get("subject", ""))))
    obj = inp.lexicon.equivalents(inp.lexicon.resolve(str(claim.get("object", ""))))
    if not subj or not obj:
        return False
    pred_text = str(claim.get("predicate", ""))
    want = (
        "decrease"
        if DECREASE_WORDS.search(pred_text)
        else "increase"
        if INCREASE_WORDS.search(pred_text)
        else None
    )
    for a in context_assertions.values():
        s_id = a.get("subject_id") or (a.get("subject") or {}).get("id")
        o_id = a.get("object_id") or (a.get("object") or {}).get("id")
        if s_id in subj and o_id in obj:
            direction = a.get("direction")
            if want is None or direction in (None, "none") or direction == want:
                return True
            # a drug that inhibits a target "decreases" it; the edge is TARGETS/decrease
    return False


def unsupported_claims(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    """Share of the response's causal claims with no matching assertion in the retrieved context."""
    if inp.context is None:
        return None
    total = claim_count(inp.response)
    if total == 0:
        return None
    context_assertions = inp.context.get("assertions") or {}
    unsupported = sum(
        1
        for aid in _as_set(inp.response.get("causal_path_assertion_ids"))
        if aid not in context_assertions
    )
    claims = inp.response.get("claims")
    for claim in claims if isinstance(claims, list) else []:
        if isinstance(claim, dict) and not _claim_supported(claim, inp, context_assertions):
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


def is_defined(spec: MetricSpec, gold: dict[str, Any], inp: MetricInputs) -> bool:
    resp_val = inp.response.get(spec.response_field)
    gold_val = gold.get(spec.gold_field)
    rule = spec.defined_when
    if rule == "always":
        return True
    if rule == "response_nonempty":
        return _nonempty(resp_val)
    if rule == "gold_nonempty":
        return _nonempty(gold_val)
    if rule == "both_nonempty":
        return _nonempty(resp_val) and _nonempty(gold_val)
    if rule == "gold_true":
        return gold_val is True
    if rule == "grounded_with_claims":
        return inp.context is not None and claim_count(inp.response) > 0
    raise ValueError(f"unknown defined_when rule {rule!r}")


def score_panel(
    metrics: Iterable[MetricSpec],
    gold: dict[str, Any],
    response: dict[str, Any],
    context: dict[str, Any] | None,
    lexicon: Lexicon,
) -> dict[str, float | None]:
    """Every metric of the panel on one pass over one (gold, response, context) triple."""
    inp = MetricInputs(lexicon=lexicon, context=context, response=response)
    out: dict[str, float | None] = {}
    for spec in metrics:
        if not is_defined(spec, gold, inp):
            out[spec.name] = None
            continue
        out[spec.name] = KINDS[spec.kind](
            response.get(spec.response_field), gold.get(spec.gold_field), inp
        )
    return out

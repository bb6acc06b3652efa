"""Metric kinds of the panel (paper section 3.7), as pure functions over plain values.

Each kind takes the response value, the gold value and a `MetricInputs` bundle (lexicon and
retrieved context) and returns a float or None when the metric is undefined for the item.
Which response field meets which gold field, and when a metric is defined, is declared in the
spec (spec/declarations/metrics.yaml) and compiled into generated/<domain>/metrics.json, whose rows are
`kgbench.contract.Metric` (the one definition of a metric's fields).

Every function here must accept any JSON value where a response value is expected: a
malformed response is scored (mostly as zeros or undefined), never a crash.

Here: the kind table (KINDS), the set, intervention and chain kinds, `defined_when`, and the
two panel passes (`score_panel`, the reference, and `PanelPlan`, its compiled twin). Names are
read by harness.evaluation.lexicon, the claim kinds live in harness.evaluation.claims, id lists become sets in
harness.evaluation.id_sets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Set
from typing import Any, get_args

from harness.evaluation.bearing import (
    CHAIN_SHAPE,
    GOLD_CHAINS_FIELD,
    MAX_GOLD_CHAINS,
    OUTCOME_SHAPE,
)
from harness.evaluation.claims import (
    CITED_ASSERTION_FIELDS,
    claim_count,
    claim_reader,
    claims_of,
    evidence_support,
    supported_share,
    unsupported_claims,
    unsupported_rate,
)
from harness.evaluation.id_sets import NO_IDS, SHARED_SETS, as_set, strings_of
from harness.evaluation.lexicon import Lexicon
from harness.evaluation.metric_inputs import MetricInputs
from kgbench.contract import Metric
from kgbench.contract.models import UnparseablePolicy

# How an answer with no JSON object in it enters the panel (the compiled metrics.json says
# which one is primary; the contract's UnparseablePolicy lists them).
UNPARSEABLE_POLICIES: tuple[str, ...] = get_args(UnparseablePolicy)
DEFAULT_UNPARSEABLE_POLICY = "intent_to_treat"


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
    return _intervention(resp, as_set(gold), inp.response, inp.lexicon)


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
    return _precision(as_set(resp), as_set(gold))


def set_recall(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    return _recall(as_set(resp), as_set(gold))


def set_f1(resp: Any, gold: Any, inp: MetricInputs) -> float | None:
    return _f1(as_set(resp), as_set(gold))


# --- causal edges against every validated chain (metrics.yaml, the chain kinds) -------------

CHAIN_KINDS = ("chain_precision", "chain_recall", "chain_f1")
CAUSAL_READINGS = ("validated_chains", "gold_path")
# GOLD_CHAINS_FIELD (imported): the gold field holding every equal validated chain (written
# by the gold builder); the declared gold field (the paper's one path) is read where it is
# absent. MAX_GOLD_CHAINS bounds how many are read. CHAIN_SHAPE: the context section shape
# whose paths are causal chains (conditions.yaml, SectionShape); OUTCOME_SHAPE: outcome
# evidence, one-step claims from a candidate to the target (a validated causal one is a chain
# of one step; a null result, causal_status no_effect, is not). Declared once in
# harness.evaluation.bearing, which reads the same chains for evidence accuracy.


def gold_chains(gold: Any, field_name: str, reading: str | None) -> list[frozenset[str]]:
    """The gold chains a cited causal edge is scored against: every equal validated chain
    (`causal_paths`, else the one path), or the one path under the paper's `gold_path`."""
    if not isinstance(gold, dict):
        return []
    chains: list[frozenset[str]] = []
    if reading != "gold_path":
        paths = gold.get(GOLD_CHAINS_FIELD)
        if isinstance(paths, list):
            chains = [c for c in map(strings_of, paths[:MAX_GOLD_CHAINS]) if c]
    if not chains:
        one = strings_of(gold.get(field_name))
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
        return NO_IDS
    chosen = lexicon.choice_of(recommendation)
    if not chosen:
        return NO_IDS
    wanted = lexicon.equivalents(chosen)
    assertions = context.get("assertions")
    sections = context.get("sections")
    if not isinstance(assertions, dict) or not isinstance(sections, list):
        return NO_IDS
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
        on_context: Set[str] = NO_IDS
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
            kind, as_set(resp), inp.gold, inp.spec, inp.context, inp.response, inp.lexicon
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
    return bool(as_set(value)) if not isinstance(value, bool) else True


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
    token = SHARED_SETS.set({})
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
        # the shared sets live for one call (and hold no answer afterwards)
        SHARED_SETS.reset(token)
    return out


# --- the panel compiled ---------------------------------------------------------------------


class PanelPlan:
    """A metric panel compiled once for scoring many answers: what `score_panel` computes,
    with the same kind cores (`_intervention`, `_precision`, `unsupported_rate`...), but
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
        answer = _AnswerSets(gold, response)
        rsets, gsets = answer.rsets, answer.gsets  # read inline below: the hot path
        out: dict[str, float | None] = {}
        for name, kind, rule, rf, gf, spec in self.steps:
            if rule != "always" and not answer.defined(rule, rf, gf, spec, context):
                out[name] = None
                continue
            if kind == "boolean_match":
                resp, want = response.get(rf), gold.get(gf)
                ok = isinstance(resp, bool) and isinstance(want, bool)
                out[name] = (1.0 if resp == want else 0.0) if ok else 0.0
                continue
            if kind in CHAIN_KINDS:
                precision, recall = answer.chain_pr(spec, rf, context, lexicon)
                if kind == "chain_precision":
                    out[name] = precision
                elif kind == "chain_recall":
                    out[name] = recall
                else:
                    out[name] = _chain_f1(precision, recall)
                continue
            g = gsets.get(gf)
            if g is None:
                g = gsets[gf] = strings_of(gold.get(gf))
            if kind == "intervention_match":
                out[name] = _intervention(response.get(rf), g, response, lexicon)
                continue
            if kind == "unsupported_claims":
                if not isinstance(context, dict):
                    out[name] = None
                    continue
                claims, cited = answer.claims(), answer.rset(_CAUSAL_IDS)
                out[name] = (
                    unsupported_rate(context, cited, claims, lexicon, self.readers[name])
                    if cited or claims
                    else None
                )
                continue
            r = rsets.get(rf)
            if r is None:
                r = rsets[rf] = strings_of(response.get(rf))
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
                    cited_asr |= answer.rset(key)
                out[name] = supported_share(r, cited_asr, response, gold, context, lexicon)
            else:  # a kind added to KINDS and not compiled here: the generic path
                inp = MetricInputs(lexicon, context, response, gold, spec)
                out[name] = KINDS[kind](response.get(rf), gold.get(gf), inp)
        return out


_CAUSAL_IDS = "causal_path_assertion_ids"


class _AnswerSets:
    """One answer's id lists (and its gold's) as sets, each built on first use and then
    shared by every metric of the panel that reads it: PanelPlan.score's working state."""

    __slots__ = ("_chains", "_claims", "_pr", "gold", "gsets", "response", "rsets")

    def __init__(self, gold: dict[str, Any], response: dict[str, Any]) -> None:
        self.gold = gold
        self.response = response
        self.rsets: dict[str, frozenset[str]] = {}
        self.gsets: dict[str, frozenset[str]] = {}
        self._claims: list[dict[str, Any]] | None = None
        # the chain kinds share their gold chains and their precision/recall: a panel's
        # precision, recall and F1 of one field read the gold and the context once, not thrice
        self._chains: dict[tuple[str | None, str], list[frozenset[str]]] = {}
        self._pr: dict[tuple[str, str, str], tuple[float | None, float | None]] = {}

    def chains(self, spec: Metric) -> list[frozenset[str]]:
        """`gold_chains` of a chain kind's metric, read once per (reading, gold field)."""
        key = (spec.reading, spec.gold_field)
        held = self._chains.get(key)
        if held is None:
            held = self._chains[key] = gold_chains(self.gold, spec.gold_field, spec.reading)
        return held

    def chain_pr(
        self, spec: Metric, rf: str, context: dict[str, Any] | None, lexicon: Lexicon
    ) -> tuple[float | None, float | None]:
        """(chain precision, chain recall) of a chain kind's metric, as `_chain_scores`
        computes them, once per (reading, gold field, response field)."""
        reading = spec.reading or "validated_chains"
        key = (reading, spec.gold_field, rf)
        held = self._pr.get(key)
        if held is None:
            cited = self.rset(rf)
            chains = self.chains(spec)
            on_context: Set[str] = NO_IDS
            if reading == "validated_chains" and cited:
                on_context = context_chain_ids(
                    context, self.response.get("recommended_intervention"), lexicon
                )
            held = self._pr[key] = (
                _chain_precision(cited, chains, on_context),
                _chain_recall(cited, chains),
            )
        return held

    def rset(self, field_name: str) -> frozenset[str]:
        r = self.rsets.get(field_name)
        if r is None:
            r = self.rsets[field_name] = strings_of(self.response.get(field_name))
        return r

    def claims(self) -> list[dict[str, Any]]:
        if self._claims is None:
            self._claims = claims_of(self.response)
        return self._claims

    def defined(
        self, rule: str, rf: str, gf: str, spec: Metric, context: dict[str, Any] | None
    ) -> bool:
        """`is_defined` on the shared sets (a chain kind's gold key starts with NUL: its set
        is every id on a gold chain)."""
        if rule == "gold_true":
            return self.gold.get(gf) is True
        if rule == "grounded_with_claims":
            return (
                isinstance(context, dict) and len(self.rset(_CAUSAL_IDS)) + len(self.claims()) > 0
            )
        if (
            rule in ("response_nonempty", "both_nonempty")
            and not isinstance(self.response.get(rf), bool)
            and not self.rset(rf)
        ):
            return False
        if rule in ("gold_nonempty", "both_nonempty"):
            if gf[:1] == "\x00":  # a chain kind: defined when some gold chain is non-empty
                return bool(self.chains(spec))
            value = self.gold.get(gf)
            if not isinstance(value, bool):
                g = self.gsets.get(gf)
                if g is None:
                    g = self.gsets[gf] = strings_of(value)
                if not g:
                    return False
        return True

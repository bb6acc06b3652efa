"""Which cited assertions bear on the recommendation: the one rule evidence accuracy reads.

Evidence accuracy (metrics.yaml, kind `evidence_support`) credits a cited evidence id only
when it supports a cited assertion that is about the decision at hand. Without that check an
answer earns credit for citing anything its context shows: under the volume-matched controls
(C6/C7) the context is padded with assertions that touch no candidate, and citing a padded
contraindication of another drug class with its source raised the share (issue 27).

An assertion bears on the recommendation when

* one of its ends (subject or object) is a candidate intervention or an intervention class
  holding one, or it is a class-level claim whose members include a candidate: the
  candidates' mechanisms, outcome claims, adverse effects, contraindications, indications and
  effect modifiers (the same neighbourhood the padding is kept out of, harness.graph.volume);
* it lies on one of the gold's chains or is one of its gold ids (causal path, adverse
  effects, contraindications, outcome claims): what the gold itself cites;
* it lies on a chain the context retrieved from a candidate to the target (a path of a
  `causal_chain` or `target_edges` section held under a candidate): the mechanism steps
  between a candidate and the target, whose ends are neither.

The recommendation is itself a claim: that the recommended intervention changes the target.
The sources an answer cites for it (the outcome trial, the guideline) support that claim, which
the response contract has no id field for; `recommendation_claims` names the assertions that
state it, and evidence accuracy counts them as cited: the gold's outcome claims when the
answer recommends a gold-acceptable intervention, and the context's validated causal outcome
claims held under the recommended candidate (never a null result).

Candidates are the context's `parameters.candidate_ids`, the gold's justified candidates and
its acceptable and preferred interventions. Everything is read defensively: a malformed gold
or context bears on nothing rather than failing.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from harness.evaluation.id_sets import strings_of
from harness.evaluation.lexicon import Lexicon

# The context section shapes whose paths run from a candidate to the target
# (conditions.yaml, SectionShape): mechanism chains and one-step outcome claims.
CHAIN_SHAPE = "causal_chain"
OUTCOME_SHAPE = "target_edges"
# Gold chains read at most (a gold is ours, but a hand-edited release is bounded too).
MAX_GOLD_CHAINS = 64
# The gold's own id lists: each of their assertions bears on the recommendation.
GOLD_ASSERTION_FIELDS = (
    "causal_path_assertion_ids",
    "adverse_effect_assertion_ids",
    "contraindication_assertion_ids",
    "outcome_assertion_ids",
)
GOLD_CHAINS_FIELD = "causal_paths"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def candidate_ids(gold: Any, context: Any) -> set[str]:
    """The scenario's candidate interventions as the scorer knows them: the context's
    candidate ids, the gold's justified candidates, its acceptable and preferred ones."""
    gold, params = _dict(gold), _dict(_dict(context).get("parameters"))
    out = set(strings_of(params.get("candidate_ids")))
    for row in _list(_dict(gold.get("justification")).get("candidates")):
        out |= strings_of(_dict(row).get("intervention_id"))
    out |= strings_of(gold.get("acceptable_interventions"))
    out |= strings_of(gold.get("preferred_intervention"))
    return out


def gold_assertion_ids(gold: Any) -> set[str]:
    """Every assertion id the gold cites: its id lists and every gold chain."""
    gold = _dict(gold)
    out: set[str] = set()
    for key in GOLD_ASSERTION_FIELDS:
        out |= strings_of(gold.get(key))
    for chain in _list(gold.get(GOLD_CHAINS_FIELD))[:MAX_GOLD_CHAINS]:
        out |= strings_of(chain)
    return out


def context_chain_steps(context: Any, candidates: Set[str]) -> set[str]:
    """Assertion ids of the context's chains and outcome claims held under a candidate."""
    out: set[str] = set()
    for section in _list(_dict(context).get("sections")):
        section = _dict(section)
        if section.get("shape") not in (CHAIN_SHAPE, OUTCOME_SHAPE):
            continue
        for path in _list(section.get("paths")):
            path = _dict(path)
            held = path.get("candidate_id")
            if isinstance(held, str) and held in candidates:
                out |= strings_of(path.get("assertion_ids"))
    return out


def _end(assertion: dict[str, Any], end: str) -> Any:
    """An end's id: its `<end>_id`, else (a context record) its reference's `id`."""
    found = assertion.get(f"{end}_id")
    return found if found else _dict(assertion.get(end)).get("id")


def touches_candidate(assertion: Any, near: Set[str]) -> bool:
    """Whether an assertion's subject or object is in `near` (the candidates and their
    classes), or, as a class-level claim, its members include one of them."""
    if not isinstance(assertion, dict):
        return False
    for end in ("subject", "object"):
        found = _end(assertion, end)
        if isinstance(found, str) and found in near:
            return True
    return not strings_of(assertion.get("member_ids")).isdisjoint(near)


def bearing_assertions(cited: Set[str], gold: Any, context: Any, lexicon: Lexicon) -> set[str]:
    """The cited assertion ids that bear on the recommendation (see the module docstring).

    The cheap tests come first; the context's chains are read only for what they leave."""
    if not cited:
        return set()
    bearing = set(cited) & gold_assertion_ids(gold)
    rest = set(cited) - bearing
    if not rest:
        return bearing
    candidates = candidate_ids(gold, context)
    near = set(candidates)
    for c in candidates:
        near |= lexicon.member_classes.get(c, set())
    shown = _dict(_dict(context).get("assertions"))
    for aid in list(rest):
        record = lexicon.assertions.get(aid) or shown.get(aid)
        if touches_candidate(record, near):
            bearing.add(aid)
            rest.discard(aid)
    if rest:
        bearing |= rest & context_chain_steps(context, candidates)
    return bearing


def recommendation_claims(response: Any, gold: Any, context: Any, lexicon: Lexicon) -> set[str]:
    """The outcome assertions the recommendation states (see the module docstring); empty
    for an abstention, a name that resolves to no single intervention, or a malformed input."""
    recommended = _dict(response).get("recommended_intervention")
    if not isinstance(recommended, str):
        return set()
    chosen = lexicon.choice_of(recommended)
    if not chosen:
        return set()
    wanted = lexicon.equivalents(chosen)
    gold = _dict(gold)
    out: set[str] = set()
    acceptable = strings_of(gold.get("acceptable_interventions")) | strings_of(
        gold.get("preferred_intervention")
    )
    if not acceptable.isdisjoint(wanted):
        out |= strings_of(gold.get("outcome_assertion_ids"))
    shown = _dict(_dict(context).get("assertions"))
    for section in _list(_dict(context).get("sections")):
        section = _dict(section)
        if section.get("shape") != OUTCOME_SHAPE:
            continue
        for path in _list(section.get("paths")):
            path = _dict(path)
            held = path.get("candidate_id")
            if not isinstance(held, str) or held not in wanted:
                continue
            for aid in strings_of(path.get("assertion_ids")):
                a = _dict(shown.get(aid))
                if a.get("validated") is True and a.get("causal_status") == "causal":
                    out.add(aid)
    return out

"""The scorer's floor (issue 33, item 1): a minimal hand-written scorer of the cardio panel.

Why it exists: the scorer's old target was an absolute rate (issue 17's 25,000 responses/s),
which the 2026-12 performance review showed no Python scorer reaches on this machine. The
figure that says whether the compiled scorer wastes time is its time against the least code
that computes the same numbers. This is that code: the panel of generated/cardio/metrics.json
written out by hand, one straight-line function, no dispatch table, no metric declarations
read at score time, no memo of its own.

It shares with the compiled scorer only what a hand-written scorer would also call: the
lexicon's name resolution (`choice_of`, `resolve_equivalents`, `equivalents`, timed on its
own by the bench's name-resolution lines) and the claim compatibility table (`ClaimReader`).
Everything else (reading the answer, its types, the id-set arithmetic of every metric, the
chain rule, evidence accuracy with its bearing rule (harness/evaluation/bearing.py), the
unsupported-claim rule, unknown ids) is written here again.

Its answer reading is minimal on purpose: `json.loads` of a text, and the contract's field
types. That is all the bench's workload needs (its raw texts hold no JSON object, fenced or
braced); the bench asserts that the floor and the scorer agree on every value of every item,
so a workload this reading would get wrong fails the bench instead of flattering the scorer.
"""

from __future__ import annotations

import json
from typing import Any

from harness.evaluation.claims import ClaimReader
from harness.evaluation.lexicon import MAX_NAME_TEXT, Lexicon, norm_any

ASR_FIELDS = (
    "causal_path_assertion_ids",
    "adverse_effect_assertion_ids",
    "contraindication_assertion_ids",
)
LIST_FIELDS = (*ASR_FIELDS, "supporting_evidence_ids")
MAX_CLAIMS = 500  # claims beyond this count as unsupported (the scorer's bound)
MAX_UNKNOWN = 20


def _ids(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {v for v in value if isinstance(v, str)}
    return set()


def _read(raw: Any) -> dict[str, Any]:
    """The answer's well-typed contract fields; {} for text that is not a JSON object."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Any] = {}
    rec = raw.get("recommended_intervention")
    if isinstance(rec, str):
        out["recommended_intervention"] = rec
    for key in LIST_FIELDS:
        value = raw.get(key)
        if isinstance(value, list):
            out[key] = [v for v in value if isinstance(v, str)]
    claims = raw.get("claims")
    if isinstance(claims, list):
        out["claims"] = [
            c
            for c in claims
            if isinstance(c, dict)
            and isinstance(c.get("subject"), str)
            and isinstance(c.get("predicate"), str)
            and isinstance(c.get("object"), str)
        ]
    flag = raw.get("uncertainty_flag")
    if isinstance(flag, bool):
        out["uncertainty_flag"] = flag
    return out


def _intervention(rec: Any, wanted: set[str], flag: Any, lex: Lexicon) -> float:
    if not wanted:
        empty = rec is None or (isinstance(rec, str) and not rec.strip())
        return 1.0 if empty and flag is True else 0.0
    if not isinstance(rec, str) or not rec.strip():
        return 0.0
    return 0.0 if lex.choice_of(rec).isdisjoint(wanted) else 1.0


def _context_chain(ctx: dict[str, Any], rec: Any, lex: Lexicon) -> set[str]:
    """Assertion ids of the context's validated chains from the recommendation to the target."""
    if not isinstance(rec, str):
        return set()
    chosen = lex.choice_of(rec)
    if not chosen:
        return set()
    wanted = lex.equivalents(chosen)
    params = ctx.get("parameters") or {}
    ends = {params["target_id"]} if isinstance(params.get("target_id"), str) else set()
    goals = set(params.get("goal_outcome_ids") or ())
    if ends:
        ends |= {o for o in params.get("outcome_ids") or () if isinstance(o, str)} - goals
    out: set[str] = set()
    assertions = ctx["assertions"]
    for section in ctx.get("sections") or ():
        shape = section.get("shape")
        if shape not in ("causal_chain", "target_edges"):
            continue
        for path in section.get("paths") or ():
            ids = path.get("assertion_ids")
            if path.get("candidate_id") not in wanted or not ids:
                continue
            steps = [assertions.get(i) for i in ids]
            if not all(a and a.get("validated") is True for a in steps):
                continue
            if shape == "target_edges" and any(a["causal_status"] != "causal" for a in steps):
                continue
            if ends and steps[-1].get("object_id") not in ends:
                continue
            out.update(ids)
    return out


def _bearing(asr: set[str], gold: dict[str, Any], ctx: dict[str, Any], lex: Lexicon) -> set[str]:
    """The cited assertions that bear on the recommendation (metrics.yaml, evidence_accuracy):
    the gold's own, those touching a candidate or its class, those on a candidate's chain."""
    gold_ids: set[str] = set()
    for key in (*ASR_FIELDS, "outcome_assertion_ids"):
        gold_ids |= _ids(gold.get(key))
    for chain in (gold.get("causal_paths") or ())[:64]:
        gold_ids |= _ids(chain)
    bearing = asr & gold_ids
    rest = asr - bearing
    if not rest:
        return bearing
    params = ctx.get("parameters") or {}
    candidates = _ids(params.get("candidate_ids"))
    for row in (gold.get("justification") or {}).get("candidates") or ():
        candidates |= _ids(row.get("intervention_id"))
    candidates |= _ids(gold.get("acceptable_interventions"))
    candidates |= _ids(gold.get("preferred_intervention"))
    near = set(candidates)
    for c in candidates:
        near |= lex.member_classes.get(c, set())
    held = ctx["assertions"]
    for aid in rest:
        a = lex.assertions.get(aid) or held.get(aid)
        if a and (
            a.get("subject_id") in near
            or a.get("object_id") in near
            or not _ids(a.get("member_ids")).isdisjoint(near)
        ):
            bearing.add(aid)
    for section in ctx.get("sections") or ():
        if section.get("shape") in ("causal_chain", "target_edges"):
            for path in section.get("paths") or ():
                if path.get("candidate_id") in candidates:
                    bearing |= rest & _ids(path.get("assertion_ids"))
    return bearing


def _stated(rec: Any, gold: dict[str, Any], ctx: dict[str, Any], lex: Lexicon) -> set[str]:
    """The outcome assertions the recommendation itself states (its trial)."""
    chosen = lex.choice_of(rec) if isinstance(rec, str) else None
    if not chosen:
        return set()
    wanted = lex.equivalents(chosen)
    out: set[str] = set()
    acceptable = _ids(gold.get("acceptable_interventions")) | _ids(
        gold.get("preferred_intervention")
    )
    if not acceptable.isdisjoint(wanted):
        out |= _ids(gold.get("outcome_assertion_ids"))
    held = ctx["assertions"]
    for section in ctx.get("sections") or ():
        if section.get("shape") == "target_edges":
            for path in section.get("paths") or ():
                if path.get("candidate_id") in wanted:
                    for aid in _ids(path.get("assertion_ids")):
                        a = held.get(aid) or {}
                        if a.get("validated") is True and a.get("causal_status") == "causal":
                            out.add(aid)
    return out


def _supported(
    kind: str | None,
    pred: str,
    subj: frozenset[str],
    obj: frozenset[str],
    assertions: Any,
    lex: Lexicon,
    reader: ClaimReader,
) -> bool:
    if not subj or not obj:
        return False
    return any(
        a["subject_id"] in subj and a["object_id"] in obj and reader.supports(kind, pred, a, lex)
        for a in assertions
    )


def _unsupported_rate(
    ctx: dict[str, Any],
    cited: set[str],
    claims: list[dict[str, str]],
    lex: Lexicon,
    reader: ClaimReader,
) -> float | None:
    held = ctx["assertions"]
    total = len(cited) + max(0, len(claims) - MAX_CLAIMS)
    unsupported = len(cited - held.keys()) + max(0, len(claims) - MAX_CLAIMS)
    stated = [lex.assertions.get(i) or held[i] for i in cited if i in lex.assertions or i in held]
    seen: set[tuple[Any, ...]] = set()
    for claim in claims[:MAX_CLAIMS]:
        s_text, o_text = claim["subject"], claim["object"]
        subj, obj = lex.resolve_equivalents(s_text), lex.resolve_equivalents(o_text)
        pred = norm_any(claim["predicate"][:MAX_NAME_TEXT])
        kind = reader.kind_of(pred)
        key = (
            subj or norm_any(s_text[:MAX_NAME_TEXT]),
            kind or pred,
            obj or norm_any(o_text[:MAX_NAME_TEXT]),
        )
        if key in seen:
            continue
        seen.add(key)
        if _supported(kind, pred, subj, obj, stated, lex, reader):
            continue  # a cited claim said again in words
        total += 1
        if not _supported(kind, pred, subj, obj, held.values(), lex, reader):
            unsupported += 1
    return unsupported / total if total else None


def score(
    gold: dict[str, Any], raw: Any, ctx: dict[str, Any], lex: Lexicon, reader: ClaimReader
) -> tuple[dict[str, float | None], list[str]]:
    """The cardio panel's ten values for one answer, and its first unknown ids (sorted)."""
    r = _read(raw)
    rec, flag = r.get("recommended_intervention"), r.get("uncertainty_flag")
    cited = set(r.get("causal_path_assertion_ids", ()))
    adverse = set(r.get("adverse_effect_assertion_ids", ()))
    contra = set(r.get("contraindication_assertion_ids", ()))
    evidence = set(r.get("supporting_evidence_ids", ()))
    claims = r.get("claims", [])
    chains = [c for c in map(_ids, gold.get("causal_paths") or ()) if c]
    if not chains:
        one = _ids(gold.get("causal_path_assertion_ids"))
        chains = [one] if one else []
    out: dict[str, float | None] = {
        "intervention_accuracy": _intervention(
            rec, _ids(gold.get("acceptable_interventions")), flag, lex
        ),
        "preferred_intervention_accuracy": _intervention(
            rec, _ids(gold.get("preferred_intervention")), flag, lex
        ),
    }
    precision = recall = None
    if cited:
        credited = _context_chain(ctx, rec, lex).union(*chains)
        precision = len(cited & credited) / len(cited)
    if chains:
        recall = max(len(cited & c) / len(c) for c in chains)
    out["causal_edge_precision"] = precision
    out["causal_edge_recall"] = recall
    if precision is None or recall is None:
        out["causal_edge_f1"] = None
    else:
        both = precision + recall
        out["causal_edge_f1"] = 2 * precision * recall / both if both else 0.0
    g_adverse = _ids(gold.get("adverse_effect_assertion_ids"))
    hit = len(adverse & g_adverse)
    out["adverse_effect_f1"] = None
    if g_adverse:
        p, rec_ = (hit / len(adverse), hit / len(g_adverse)) if hit else (0.0, 0.0)
        out["adverse_effect_f1"] = 2 * p * rec_ / (p + rec_) if hit else 0.0
    g_contra = _ids(gold.get("contraindication_assertion_ids"))
    out["contraindication_recall"] = len(contra & g_contra) / len(g_contra) if g_contra else None
    if evidence:
        bearing = _bearing(cited | adverse | contra, gold, ctx, lex) | _stated(rec, gold, ctx, lex)
        good = sum(1 for e in evidence if not lex.supports.get(e, set()).isdisjoint(bearing))
        out["evidence_accuracy"] = good / len(evidence)
    else:
        out["evidence_accuracy"] = None
    out["unsupported_claim_rate"] = (
        _unsupported_rate(ctx, cited, claims, lex, reader) if cited or claims else None
    )
    want = gold.get("expects_uncertainty")
    out["uncertainty_correctness"] = (
        float(flag == want) if isinstance(flag, bool) and isinstance(want, bool) else 0.0
    )
    unknown = (cited | adverse | contra) - lex.assertions.keys()
    unknown |= evidence - lex.evidence_ids
    return out, sorted(unknown)[:MAX_UNKNOWN]

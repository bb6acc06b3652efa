"""Volume-matched controls (issue 27 item 6): a base condition's block (C2 or C3) padded with
graph content irrelevant to the item until it is as long as the item's reference block (C4).

C2, C3 and C4 differ in length as well as in content; a study that adds the control can tell
what C4's extra content does from what its extra length does. The padding must carry no
information about the decision, so it is drawn only from assertions that touch nothing near
the item (`neighbourhood`): not its anchors (the candidates and their classes, the target and
the composites that contain it, the patient's population and conditions), not an entity one
assertion away from a candidate (its targets, indications, harms), and not an entity the
item's reference context names (the chains to the target, their intermediates). The order is
drawn from a seed derived from the domain, the item and the condition, so one item always
gives the same prompt byte for byte, and different items get different padding.

This module is pure (kg.json, contexts, a render function): `harness.graph.extract` fetches
the padding through the condition's compiled padding query and calls `pad`. `check_padding`
re-derives what must be excluded from the compiled graph and refuses a context whose padding
touches it, whoever wrote the context.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kgbench.contract import VolumeMatch
from kgbench.errors import UserError

from ..compiled import CompiledDomain

PADDING_SECTION = "padding"
PADDING_SHAPE = "padding"


def anchors(domain: CompiledDomain, params: Mapping[str, Any]) -> set[str]:
    """The item's own entities: candidates, the intervention classes they belong to, the
    target and the outcomes counted as it (composites), the population and the patient's
    conditions (`context_ids`)."""
    candidates = set(params["candidate_ids"])
    classes = {
        c["class_id"]
        for c in domain.graph.get("intervention_classes") or ()
        if candidates & set(c.get("member_ids") or ())
    }
    return {
        *candidates,
        *classes,
        params["target_id"],
        *(params.get("outcome_ids") or ()),
        *(params.get("context_ids") or ()),
    }


def required_exclusions(domain: CompiledDomain, params: Mapping[str, Any]) -> set[str]:
    """What the compiled graph alone says padding may never touch: the anchors and every
    entity one assertion (either direction) away from a candidate or one of its classes."""
    hood = anchors(domain, params)
    near = set(params["candidate_ids"]) | {
        c["class_id"]
        for c in domain.graph.get("intervention_classes") or ()
        if set(params["candidate_ids"]) & set(c.get("member_ids") or ())
    }
    for a in domain.graph["assertions"]:
        if a["subject_id"] in near:
            hood.add(a["object_id"])
        if a["object_id"] in near:
            hood.add(a["subject_id"])
    return hood


def neighbourhood(
    domain: CompiledDomain, params: Mapping[str, Any], reference: Mapping[str, Any]
) -> frozenset[str]:
    """`required_exclusions` plus every entity the item's reference context names (the
    subject and object of each of its assertions, and its listed entities)."""
    hood = required_exclusions(domain, params)
    for a in (reference.get("assertions") or {}).values():
        hood.update(x for x in (a.get("subject_id"), a.get("object_id")) if x)
    hood.update(reference.get("entities") or {})
    return frozenset(hood)


def touches(assertion: Mapping[str, Any], hood: frozenset[str] | set[str]) -> bool:
    """Whether an assertion names an excluded entity as its subject or object, or (a
    class-level claim) applies to one through its members."""
    ends = {assertion.get("subject_id"), assertion.get("object_id")}
    return bool(ends & hood) or bool(set(assertion.get("member_ids") or ()) & hood)


def padding_pool(domain: CompiledDomain, hood: frozenset[str], shown: set[str]) -> list[str]:
    """Assertion ids that may pad the block, sorted: touching nothing in `hood` and not
    already in the block (`shown`)."""
    return sorted(
        a["assertion_id"]
        for a in domain.graph["assertions"]
        if a["assertion_id"] not in shown and not touches(a, hood)
    )


def seed_of(domain: str, scenario_id: str, condition: str) -> str:
    """The padding seed of one (domain, item, condition): a hash, so it is stable across
    runs and machines and differs between items."""
    return hashlib.sha256(f"{domain}\x1f{scenario_id}\x1f{condition}".encode()).hexdigest()[:16]


def seeded_order(pool: Sequence[str], seed: str) -> list[str]:
    order = sorted(pool)
    random.Random(int(seed, 16)).shuffle(order)
    return order


def choose(
    order: Sequence[str], measure: Callable[[Sequence[str]], int], target: int, tolerance: int
) -> list[str]:
    """The padding: the longest prefix of `order` whose block stays within `target +
    tolerance` (found by bisection: the length grows with each assertion added), then, while
    the block is still short of `target - tolerance`, each later assertion that still fits,
    in order. `measure(ids)` is the rendered block's length with those ids as padding."""
    if measure([]) >= target - tolerance:
        return []
    low, high = 0, len(order)  # measure(order[:low]) fits; find the largest such prefix
    while low < high:
        mid = (low + high + 1) // 2
        if measure(order[:mid]) <= target + tolerance:
            low = mid
        else:
            high = mid - 1
    chosen = list(order[:low])
    length = measure(chosen)
    for aid in order[low + 1 :]:
        if length >= target - tolerance:
            break
        trial = measure([*chosen, aid])
        if trial <= target + tolerance:
            chosen.append(aid)
            length = trial
    return chosen


def with_padding(
    context: Mapping[str, Any],
    match: VolumeMatch,
    ids: Sequence[str],
    fetched: Mapping[str, dict[str, Any]],
) -> dict[str, Any]:
    """The base context with a padding section holding `ids` (none: no section at all)."""
    out = dict(context)
    if not ids:
        return out
    out["sections"] = [
        *context["sections"],
        {
            "name": PADDING_SECTION,
            "title": match.padding_title,
            "shape": PADDING_SHAPE,
            "paths": [{"candidate_id": None, "assertion_ids": [aid]} for aid in ids],
        },
    ]
    out["assertions"] = dict(
        sorted({**context["assertions"], **{i: fetched[i] for i in ids}}.items())
    )
    return out


def pad(
    domain: CompiledDomain,
    context: dict[str, Any],
    reference: dict[str, Any],
    match: VolumeMatch,
    render: Callable[[str, dict[str, Any]], str],
    fetch: Callable[[list[str]], dict[str, dict[str, Any]]],
) -> dict[str, Any]:
    """The volume-matched context: `context` (the base's sections, under the control's
    condition id) padded to the length of `reference` (the item's reference context), with
    a `volume_match` record of the lengths, the seed and what was excluded.

    `render(condition, context)` renders a block; `fetch(ids)` returns the assertions by id
    as the extraction shapes them (through the compiled padding query)."""
    condition = context["condition"]
    hood = neighbourhood(domain, context["parameters"], reference)
    pool = padding_pool(domain, hood, set(context["assertions"]))
    seed = seed_of(domain.name, context["scenario_id"], condition)
    order = seeded_order(pool, seed)
    fetched = fetch(order) if order else {}
    missing = [i for i in order if i not in fetched]
    if missing:
        raise UserError(
            f"scenario {context['scenario_id']} under {condition}: Neo4j returned no assertion "
            f"{missing[0]} of the compiled graph of '{domain.name}'; the loaded graph is not "
            f"the compiled one: run `kgbench load --domain {domain.name}`"
        )
    target = len(render(match.reference, reference))
    tolerance = math.floor(match.tolerance * target)

    def measure(ids: Sequence[str]) -> int:
        return len(render(condition, with_padding(context, match, ids, fetched)))

    chosen = choose(order, measure, target, tolerance)
    out = with_padding(context, match, chosen, fetched)
    length = measure(chosen)
    out["volume_match"] = {
        "base": match.base,
        "reference": match.reference,
        "reference_characters": target,
        "base_characters": measure([]),
        "characters": length,
        "tolerance_characters": tolerance,
        "matched": abs(length - target) <= tolerance,
        "seed": seed,
        "excluded_entity_ids": sorted(hood),
    }
    return out


def check_padding(context: Mapping[str, Any] | None, domain: CompiledDomain) -> None:
    """A volume-matched context's padding touches nothing the item's neighbourhood holds.

    The exclusions are re-derived from the compiled graph (`required_exclusions`), joined with
    the ones the context records (its reference context's entities), so a padding that names
    a candidate, the target or a candidate's neighbour is refused even if the record was
    edited to allow it."""
    if not context or not isinstance(context.get("volume_match"), dict):
        return
    record = context["volume_match"]
    hood = frozenset(
        required_exclusions(domain, context["parameters"]) | set(record["excluded_entity_ids"])
    )
    for section in context["sections"]:
        if section["shape"] != PADDING_SHAPE:
            continue
        for path in section["paths"]:
            for aid in path["assertion_ids"]:
                a = context["assertions"].get(aid) or {}
                if touches(a, hood) or path.get("candidate_id") is not None:
                    raise UserError(
                        f"scenario {context['scenario_id']} under {context['condition']}: "
                        f"padding assertion {aid} touches the item ("
                        f"{a.get('subject_id')} -> {a.get('object_id')}); padding must be "
                        "irrelevant to the item: re-run `kgbench extract`"
                    )

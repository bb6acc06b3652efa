"""Grounding conditions and option presentations, as conditions.yaml declares them.

A condition is what a model is shown beside a scenario (nothing, retrieved sections of the
graph, or a verify-and-revise loop over its own triplets); a presentation is an order of the
options. Parsed here into the IR and then resolved against one domain's predicates, so a
condition the domain cannot serve is a located error of `validate` as much as of `compile`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kgbench.errors import SpecError

from . import ir
from .yamlfile import YamlDoc


def parse_conditions(doc: YamlDoc) -> tuple[ir.Condition, ...]:
    out = []
    seen: set[str] = set()
    for i, c in enumerate(doc.data["conditions"]):
        if c["id"] in seen:
            raise SpecError(
                f"duplicate condition id '{c['id']}'", doc.location(["conditions", i, "id"], "id")
            )
        seen.add(c["id"])
        sections = []
        for j, s in enumerate(c.get("sections") or []):
            shape = s["shape"]
            chain_keys = ("max_length", "max_chains", "chain_order")
            for key in chain_keys if shape == "causal_chain" else ():
                if not s.get(key):
                    raise SpecError(
                        f"a causal_chain section needs {key} (the bounds and order of its chains)",
                        doc.location(["conditions", i, "sections", j], key),
                    )
            for key in chain_keys if shape != "causal_chain" else ():
                if s.get(key):
                    raise SpecError(
                        f"{key} applies to causal_chain sections only (this one is {shape})",
                        doc.location(["conditions", i, "sections", j, key], key),
                    )
            sections.append(
                ir.ContextSection(
                    name=s["name"],
                    title=s["title"],
                    shape=shape,
                    roles=tuple(s["roles"]),
                    anchor=s.get("anchor")
                    or ("population" if shape == "context_modifiers" else "candidates"),
                    validated_only=bool(s.get("validated_only")),
                    max_length=int(s.get("max_length") or 0),
                    max_chains=int(s.get("max_chains") or 0),
                    chain_order=tuple(s.get("chain_order") or ()),
                )
            )
        out.append(
            ir.Condition(
                id=c["id"],
                name=c["name"],
                title=c["title"],
                description=" ".join(str(c["description"]).split()),
                sections=tuple(sections),
                annotations=tuple(c.get("annotations") or ()),
                verify=_verify(doc, i, c),
                optional=bool(c.get("optional")),
            )
        )
    return tuple(_volume_matched(doc, i, c, out) for i, c in enumerate(doc.data["conditions"]))


def _volume_matched(
    doc: YamlDoc, i: int, c: dict[str, Any], conditions: list[ir.Condition]
) -> ir.Condition:
    """A volume-matched control shows its base's sections and annotations (so its block is
    the base's, plus padding); the base and the reference must be grounded retrieval
    conditions declared before it, and the control is optional (off by default)."""
    cond = conditions[i]
    v = c.get("volume_match")
    if v is None:
        return cond
    where = ["conditions", i, "volume_match"]
    if c.get("sections") or c.get("verify"):
        raise SpecError(
            "a volume-matched condition has no sections and no verify block of its own (it "
            "shows its base condition's sections, padded)",
            doc.location(["conditions", i], "volume_match"),
        )
    earlier = {x.id: x for x in conditions[:i]}
    for key in ("base", "reference"):
        other = earlier.get(v[key])
        if other is None or not other.grounded or other.volume_match is not None:
            raise SpecError(
                f"volume_match {key} '{v[key]}' is not a grounded retrieval condition declared "
                f"before {cond.id}; expected one of "
                + ", ".join(x.id for x in earlier.values() if x.grounded and not x.volume_match),
                doc.location([*where, key], key),
            )
    if v["base"] == v["reference"]:
        raise SpecError(
            f"volume_match base and reference are both {v['base']}; expected the condition to "
            "pad and a longer one to match",
            doc.location([*where, "reference"], "reference"),
        )
    if c.get("optional") is False:
        raise SpecError(
            "a volume-matched control is optional (off by default); expected optional: true "
            "or no optional key",
            doc.location(["conditions", i, "optional"], "optional"),
        )
    base = earlier[v["base"]]
    return replace(
        cond,
        sections=base.sections,
        annotations=base.annotations,
        optional=True,
        volume_match=ir.VolumeMatch(
            base=v["base"],
            reference=v["reference"],
            tolerance=float(v["tolerance"]),
            padding_title=" ".join(str(v["padding_title"]).split()),
        ),
    )


def parse_presentations(doc: YamlDoc) -> tuple[ir.Presentation, ...]:
    """The declared option presentations; a shift belongs to a cyclic shift only."""
    out = []
    seen: set[str] = set()
    for i, p in enumerate(doc.data.get("presentations") or ()):
        if p["id"] in seen or p["id"] == "original":
            what = (
                "declared twice; expected a unique id"
                if p["id"] in seen
                else "reserved for the original order; expected another id"
            )
            raise SpecError(
                f"presentation id '{p['id']}' is {what}",
                doc.location(["presentations", i, "id"], "id"),
            )
        seen.add(p["id"])
        shift = p.get("shift")
        if shift is not None and p["order"] != "cyclic_shift":
            raise SpecError(
                f"presentation '{p['id']}': `shift` applies to order cyclic_shift only, the "
                f"order here is {p['order']}; expected no shift (or order: cyclic_shift)",
                doc.location(["presentations", i, "shift"], "shift"),
            )
        if shift is None and p["order"] == "cyclic_shift":
            raise SpecError(
                f"presentation '{p['id']}': order cyclic_shift needs `shift`; expected the "
                "number of places the options move down (at least 1)",
                doc.location(["presentations", i, "order"], "order"),
            )
        out.append(
            ir.Presentation(
                id=p["id"],
                description=" ".join(str(p["description"]).split()),
                order=p["order"],
                shift=int(shift or 0),
                labels=p.get("labels") or "none",
            )
        )
    return tuple(out)


VERIFY_STEPS = ("generate", "revise", "answer")
# Prompts a verify block may add: the informed reviser's instruction (a declared variant).
VERIFY_OPTIONAL_PROMPTS = ("revise_informed",)


def _verify(doc: YamlDoc, i: int, c: dict[str, Any]) -> ir.Verify | None:
    """A verify-and-revise block; it replaces sections (the graph checks, it does not
    retrieve), so a condition declaring both is a located error."""
    v = c.get("verify")
    if v is None:
        return None
    if c.get("sections"):
        raise SpecError(
            "a verify-and-revise condition has no sections (the graph checks the model's "
            "triplets instead of retrieving a context)",
            doc.location(["conditions", i, "sections"], "sections"),
        )
    extra = [r for r in v["path_roles"] if r not in v["roles"]]
    if extra:
        raise SpecError(
            f"path role '{extra[0]}' is not one of the condition's roles ({', '.join(v['roles'])})",
            doc.location(["conditions", i, "verify", "path_roles"], "path_roles"),
        )
    return ir.Verify(
        max_triplets=int(v["max_triplets"]),
        max_path_length=int(v["max_path_length"]),
        max_revisions=int(v["max_revisions"]),
        fuzzy_threshold=float(v["fuzzy_threshold"]),
        max_name_length=int(v["max_name_length"]),
        roles=tuple(v["roles"]),
        path_roles=tuple(v["path_roles"]),
        prompts=tuple(
            (k, " ".join(str(v["prompts"][k]).split()))
            for k in (*VERIFY_STEPS, *VERIFY_OPTIONAL_PROMPTS)
            if k in v["prompts"]
        ),
        reviser=_reviser(doc, i, v),
    )


def _reviser(doc: YamlDoc, i: int, v: dict[str, Any]) -> str:
    """The declared reviser; the informed one needs its own instruction."""
    reviser = str(v.get("reviser") or "uninformed")
    if reviser == "informed" and "revise_informed" not in v["prompts"]:
        raise SpecError(
            "the informed reviser needs its instruction, prompts.revise_informed",
            doc.location(["conditions", i, "verify", "prompts"], "prompts"),
        )
    return reviser


def resolve_conditions(
    conditions: tuple[ir.Condition, ...],
    doc: YamlDoc,
    predicates: tuple[ir.Predicate, ...],
    domain: str,
) -> tuple[ir.Condition, ...]:
    """Each section's predicates in this domain's vocabulary.

    Done here rather than in the Cypher backend so that a condition this domain cannot serve
    is a located error of `validate` as much as of `compile` (one pipeline, one message).
    """

    def types(roles: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p.name for p in predicates if p.role in roles)

    out = []
    for i, cond in enumerate(conditions):
        sections = []
        for sec in cond.sections:
            section_types = types(sec.roles)
            if not section_types:
                continue  # the domain has no predicate in these roles: nothing to retrieve
            sections.append(replace(sec, predicates=section_types))
        if cond.verify is not None:
            v = cond.verify
            vocabulary = types(v.roles)
            if not vocabulary:
                raise SpecError(
                    f"condition {cond.id}: domain '{domain}' has no predicate in the verify "
                    f"roles ({', '.join(v.roles)})",
                    doc.location(["conditions", i, "verify", "roles"], "roles"),
                )
            cond = replace(
                cond,
                verify=replace(v, predicates=vocabulary, path_predicates=types(v.path_roles)),
            )
        if cond.sections and not sections:
            raise SpecError(
                f"grounded condition {cond.id} exposes no predicate of domain '{domain}' "
                f"(roles {', '.join(r for s in cond.sections for r in s.roles)})",
                doc.location(["conditions", i, "sections"], "sections"),
            )
        out.append(replace(cond, sections=tuple(sections)))
    return tuple(out)

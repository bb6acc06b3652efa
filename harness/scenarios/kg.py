"""A read-only, indexed view of a compiled graph (generated/<domain>/kg.json) for scenarios.

Everything the generator and the scenario validator ask of the graph goes through here, so
both read the same facts the same way: which entities are interventions, which predicate
plays which role, how strong an assertion's evidence is, which sources support it, which
classes an intervention belongs to. The evidence-level order is read from the compiled
assertion schema (strongest first), not written down a second time.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from harness.compiled import CompiledDomain
from kgbench.contract import Section
from kgbench.errors import UserError
from kgbench.scope import study_covers


@dataclass
class KnowledgeGraph:
    """Indexes over one compiled domain's graph."""

    domain: CompiledDomain
    graph: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.graph = self.domain.graph

    @property
    def name(self) -> str:
        return self.domain.name

    @cached_property
    def entities(self) -> dict[str, dict[str, Any]]:
        return {e["id"]: e for e in self.graph["entities"]}

    @cached_property
    def assertions(self) -> dict[str, dict[str, Any]]:
        return {a["assertion_id"]: a for a in self.graph["assertions"]}

    @cached_property
    def evidence(self) -> dict[str, dict[str, Any]]:
        return {e["evidence_id"]: e for e in self.graph["evidence_sources"]}

    @cached_property
    def role_of(self) -> dict[str, str]:
        """Predicate name -> role (mechanistic, causal, adverse_effect, ...)."""
        return {p["name"]: p["role"] for p in self.graph["predicates"]}

    def role(self, assertion: dict[str, Any]) -> str:
        return self.role_of[assertion["predicate"]]

    @cached_property
    def interventions(self) -> tuple[str, ...]:
        """Ids of entities whose class may be recommended (annotation intervention: true)."""
        kinds = {c["name"] for c in self.graph["entity_classes"] if c["is_intervention"]}
        return tuple(sorted(e for e, ent in self.entities.items() if ent["category"] in kinds))

    @cached_property
    def group_ids(self) -> frozenset[str]:
        """Ids of intervention-class entities (their claims are class-level claims)."""
        kinds = {c["name"] for c in self.graph["entity_classes"] if c.get("is_group")}
        return frozenset(e for e, ent in self.entities.items() if ent["category"] in kinds)

    def claims(
        self, intervention: str, roles: set[str] | tuple[str, ...]
    ) -> list[tuple[dict[str, Any], str | None]]:
        """The intervention's own assertions in these roles, then the class-level claims that
        apply to it, each with the class it comes through (None for its own)."""
        own = [(a, None) for a in self.out_role(intervention, roles)]
        inherited = [
            (a, cls)
            for cls in self.classes_of.get(intervention, ())
            for a in self.out_role(cls, roles)
            if intervention in (a.get("member_ids") or ())
        ]
        return own + inherited

    def kinds(self, intervention: str) -> set[str]:
        """The homogeneous classes of an intervention: two candidates sharing one are one
        option offered twice; a heterogeneous grouping ("lifestyle") says nothing of the kind."""
        return {c for c in self.classes_of.get(intervention, ()) if c in self.homogeneous}

    @cached_property
    def links(self) -> dict[str, tuple[dict[str, Any], ...]]:
        """Assertion id -> its SUPPORTS links (evidence id, class of recommendation, level)."""
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for s in self.graph["supports"]:
            out[s["assertion_id"]].append(s)
        return {a: tuple(sorted(v, key=lambda s: s["evidence_id"])) for a, v in out.items()}

    @cached_property
    def evidence_rules(self) -> dict[str, Any]:
        return self.graph.get("evidence_rules") or {}

    @cached_property
    def homogeneous(self) -> frozenset[str]:
        return frozenset(self.evidence_rules.get("homogeneous_classes") or ())

    def study_covers(self, evidence_id: str, subject: str) -> bool:
        """Whether a source studied the subject (see kgbench.scope); a source that names no
        studied interventions (a guideline, a cohort of exposures) covers nothing by study."""
        members = (
            self.classes.get(subject, {}).get("member_ids", ()) if subject in self.group_ids else ()
        )
        return study_covers(
            self.evidence[evidence_id].get("studied_interventions") or (),
            subject,
            homogeneous=self.homogeneous,
            classes_of_subject=self.classes_of.get(subject, ()),
            members_of_subject=members,
        )

    def outcome_ids(self, target: str) -> tuple[str, ...]:
        """The target and the declared composite outcomes that contain it."""
        composites = self.evidence_rules.get("composite_outcomes") or ()
        return (target, *sorted(c["outcome_id"] for c in composites if target in c["members"]))

    @cached_property
    def classes(self) -> dict[str, dict[str, Any]]:
        """Intervention class id -> {class_id, class_name, member_ids}."""
        return {c["class_id"]: c for c in self.graph["intervention_classes"]}

    @cached_property
    def classes_of(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = defaultdict(list)
        for c in self.graph["intervention_classes"]:
            for m in c["member_ids"]:
                out[m].append(c["class_id"])
        return {m: tuple(sorted(ids)) for m, ids in out.items()}

    @cached_property
    def supports(self) -> dict[str, tuple[str, ...]]:
        """Assertion id -> ids of the evidence sources that SUPPORT it."""
        out: dict[str, list[str]] = defaultdict(list)
        for s in self.graph["supports"]:
            out[s["assertion_id"]].append(s["evidence_id"])
        return {a: tuple(sorted(ids)) for a, ids in out.items()}

    @cached_property
    def outgoing(self) -> dict[str, tuple[dict[str, Any], ...]]:
        """Entity id -> its assertions as subject, by assertion id."""
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for a in self.graph["assertions"]:
            out[a["subject_id"]].append(a)
        return {k: tuple(sorted(v, key=lambda a: a["assertion_id"])) for k, v in out.items()}

    @cached_property
    def incoming(self) -> dict[str, tuple[dict[str, Any], ...]]:
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for a in self.graph["assertions"]:
            out[a["object_id"]].append(a)
        return {k: tuple(sorted(v, key=lambda a: a["assertion_id"])) for k, v in out.items()}

    def out_role(self, entity_id: str, roles: set[str] | tuple[str, ...]) -> list[dict[str, Any]]:
        return [a for a in self.outgoing.get(entity_id, ()) if self.role(a) in roles]

    @cached_property
    def evidence_order(self) -> tuple[str, ...]:
        """Evidence levels strongest first, as the compiled assertion schema declares them."""
        schema = self.domain.json("schemas/assertions.schema.json")
        return tuple(schema["$defs"]["EvidenceLevel"]["enum"])

    def evidence_rank(self, level: str) -> int:
        """Higher is stronger."""
        order = self.evidence_order
        return len(order) - order.index(level)

    def category(self, entity_id: str) -> str:
        return self.entities[entity_id]["category"]

    def name_of(self, entity_id: str) -> str:
        if entity_id in self.entities:
            return self.entities[entity_id]["name"]
        if entity_id in self.classes:
            return self.classes[entity_id]["class_name"]
        raise UserError(
            f"{entity_id!r} is neither an entity nor a class of the compiled domain "
            f"{self.domain.name}: the item names what this domain no longer holds (an item of "
            "an older release, or of another domain)"
        )

    def condition_section(self, condition_id: str) -> Section | None:
        """The causal_chain section of a condition (its roles, bounds, order, validated_only)."""
        for cond in self.domain.conditions:
            if cond.id == condition_id:
                return cond.section("causal_chain")
        return None

"""Extraction queries and `conditions.json`: one parameterised, scenario-conditioned Cypher
query per grounded condition, compiled from the condition declarations, and the one compiled
description of every condition (sections, relationship types, chain bounds and order, query
file).

A causal_chain section returns every chain over its relationship types from a candidate to the
target of at most `max_length` steps that never revisits a node, the best `max_chains` of them
per candidate in the declared order (a top-k the planner does with one sort per candidate). A
class-level claim that applies to the candidate (`member_ids` on the edge) may be the first
step. With unvalidated chains shown (C4), they are a second group with its own top-k, so they
are added beside the validated chains and can never push one out.

The query is rendered from a typed view-model (`ExtractionView`); its dialect-specific syntax
comes from the Cypher generator (`cyphergen.Neo4j5`). Relationship types are the domain's
predicates whose role a section asks for (validated spec identifiers, resolved by the
frontend); scenario values arrive only as parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgbench.contract import Conditions

from ..ir import Condition, ContextSection, Domain
from .base import Artifact, Backend, EmitContext, render
from .cyphergen import CypherGenerator, Neo4j5, VerifyExact, VerifyPath, VerifyReview

PARAMETERS = ("candidate_ids", "target_id", "outcome_ids", "context_ids", "evidence_rank")

# Cypher for each chain-order key, given `strength` (rank of the weakest step's evidence level,
# higher is stronger) and `chain` (the assertion ids); assertion ids always break the last tie.
ORDER_KEYS = {
    "strongest_evidence": "strength DESC",
    "fewest_hops": "size(chain)",
    "most_hops": "size(chain) DESC",
}


@dataclass(frozen=True)
class ChainGroup:
    """The chains of one validation status. `direct` filters a path `p` from the candidate,
    `via_class` one that starts with a class-level claim `first`; a validated-only filter
    stays on the variable-length pattern itself, so the planner prunes while it expands."""

    name: str
    direct: str
    via_class: str


_ALL = "all(r IN relationships(p) WHERE r.validated)"
VALIDATED = ChainGroup("validated", _ALL, f"first.validated AND {_ALL}")
# What both groups' filters test, over a whole chain (a class-level first step included): a
# chain is validated exactly when every one of its steps is.
_PARTITION = "all(r IN rels WHERE r.validated)"
UNVALIDATED = ChainGroup("unvalidated", f"NOT {_ALL}", f"NOT (first.validated AND {_ALL})")

VERIFY_PARAMETERS = ("subject_id", "object_id", "predicate", "sign")
"""The review query's parameters (the exact and path renderings take the first two)."""
SIGNS = {"increase": 1, "decrease": -1}


@dataclass(frozen=True)
class SectionView:
    """One section as the template says it: relationship types joined, chain bounds and order."""

    name: str
    title: str
    shape: str
    types: str  # "A|B": the section's relationship types
    validated_only: bool
    max_length: int = 0
    max_chains: int = 0
    order_by: str = ""  # ORDER BY expression list of a chain group
    groups: tuple[ChainGroup, ...] = ()
    # With both groups: the expression over a chain's `rels` that tells them apart. Their
    # chains then come from one expansion (the unvalidated group's filter cannot prune it,
    # so it walks every path the validated one would), split by it, each group's top-k kept.
    partition: str = ""


@dataclass(frozen=True)
class ExtractionView:
    domain: str
    label: str
    condition: Condition
    sections: tuple[SectionView, ...]
    dialect: CypherGenerator


def _order_by(section: ContextSection) -> str:
    return ", ".join([*(ORDER_KEYS[k] for k in section.chain_order), "chain"])


def view(domain: Domain, cond: Condition, dialect: CypherGenerator) -> ExtractionView:
    label = domain.neo4j_label
    return ExtractionView(
        domain=domain.name,
        label=label,
        condition=cond,
        sections=tuple(
            SectionView(
                name=s.name,
                title=s.title,
                shape=s.shape,
                types="|".join(s.predicates),
                validated_only=s.validated_only,
                max_length=s.max_length,
                max_chains=s.max_chains,
                order_by=_order_by(s) if s.shape == "causal_chain" else "",
                groups=(VALIDATED,) if s.validated_only else (VALIDATED, UNVALIDATED),
                partition="" if s.validated_only else _PARTITION,
            )
            for s in cond.sections
        ),
        dialect=dialect,
    )


class ExtractionBackend(Backend):
    name = "extraction"
    format_version = Conditions.FORMAT
    outputs = ("cypher/*.cypher", Conditions.PATH)
    dialect: CypherGenerator = Neo4j5()

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        out: list[Artifact] = []
        conditions = []
        for cond in domain.conditions:
            query = None
            if cond.grounded:
                query = f"cypher/{cond.id}.cypher"
                v = view(domain, cond, self.dialect)
                out.append(Artifact(query, render("neo4j/extraction.cypher.j2", ctx, v=v)))
            verify = None
            if cond.verify is not None:
                verify, files = self._verify(domain, cond)
                out.extend(files)
            volume = None
            if cond.volume_match is not None:
                m = cond.volume_match
                padding = f"cypher/{cond.id}.padding.cypher"
                v = view(domain, cond, self.dialect)
                out.append(Artifact(padding, render("neo4j/padding.cypher.j2", ctx, v=v)))
                volume = {
                    "base": m.base,
                    "reference": m.reference,
                    "tolerance": m.tolerance,
                    "padding_title": m.padding_title,
                    "padding_query": padding,
                }
            conditions.append(
                {
                    "verify": verify,
                    "optional": cond.optional,
                    "volume_match": volume,
                    "id": cond.id,
                    "name": cond.name,
                    "title": cond.title,
                    "description": cond.description,
                    "annotations": list(cond.annotations),
                    "query": query,
                    "parameters": list(PARAMETERS) if query else [],
                    "sections": [
                        {
                            "name": s.name,
                            "title": s.title,
                            "shape": s.shape,
                            "roles": list(s.roles),
                            "anchor": s.anchor,
                            "predicates": list(s.predicates),
                            "validated_only": s.validated_only,
                            **(
                                {
                                    "max_length": s.max_length,
                                    "max_chains": s.max_chains,
                                    "chain_order": list(s.chain_order),
                                }
                                if s.shape == "causal_chain"
                                else {}
                            ),
                        }
                        for s in cond.sections
                    ],
                }
            )
        out.append(
            self.document(
                Conditions,
                {
                    "domain": domain.name,
                    "evidence_levels": list(domain.evidence_levels),
                    "conditions": conditions,
                    "presentations": [
                        {
                            "id": p.id,
                            "description": p.description,
                            "order": p.order,
                            "shift": p.shift,
                            "labels": p.labels,
                        }
                        for p in domain.presentations
                    ],
                },
                ctx,
            )
        )
        return out

    def _verify(self, domain: Domain, cond: Condition) -> tuple[dict, list[Artifact]]:
        """The review queries of a verify-and-revise condition and its compiled settings.

        Signs come from the predicates' declared direction (CAUSES_DECREASE_IN is -1): a
        triplet's claimed sign is its predicate's, a path's the product of its assertions'
        `direction` (decrease -1, anything else +1).
        """
        v = cond.verify
        assert v is not None
        label = domain.neo4j_label
        head = (
            f"// Verify-and-revise review for domain '{domain.name}', condition {cond.id} "
            f"({cond.name}) (generated; do not edit).\n"
            "// Parameters: $subject_id, $object_id (entity ids the triplet's names were linked "
            "to).\n"
        )
        exact = VerifyExact(label, v.predicates)
        path = VerifyPath(label, v.path_predicates or v.predicates, v.max_path_length)
        files = {
            "exact": (
                f"cypher/{cond.id}.verify_exact.cypher",
                head + "// Every assertion between the two, both ways, and the class-level claims "
                "that apply to the subject.\n" + self.dialect.generate(exact) + "\n",
            ),
            "path": (
                f"cypher/{cond.id}.verify_path.cypher",
                head + f"// Directed paths of at most {v.max_path_length} validated assertions, "
                "shortest first.\n" + self.dialect.generate(path) + "\n",
            ),
            "review": (
                f"cypher/{cond.id}.verify.cypher",
                head.replace(
                    "to).\n",
                    "to),\n// $predicate (the claimed predicate), $sign (its sign: +1, -1, or 0 "
                    "when unsigned).\n",
                )
                + f"// One round trip: the checks of {cond.id}.verify_exact.cypher and "
                f"{cond.id}.verify_path.cypher;\n// the path search runs only when no assertion "
                "states the claim, over validated assertions only, and returns the\n// shortest "
                "path whose composed sign is the claimed one and the shortest of the opposite "
                "sign.\n" + self.dialect.generate(VerifyReview(exact, path)) + "\n",
            ),
        }
        signs = {p.name: SIGNS.get(p.direction or "", 0) for p in domain.predicates}
        settings = {
            "max_triplets": v.max_triplets,
            "max_path_length": v.max_path_length,
            "max_revisions": v.max_revisions,
            "fuzzy_threshold": v.fuzzy_threshold,
            "max_name_length": v.max_name_length,
            "roles": list(v.roles),
            "path_roles": list(v.path_roles),
            "predicates": list(v.predicates),
            "path_predicates": list(v.path_predicates),
            "signs": {p: signs[p] for p in v.predicates},
            "prompts": dict(v.prompts),
            "queries": {k: name for k, (name, _) in files.items()},
            "parameters": list(VERIFY_PARAMETERS),
            "reviser": v.reviser,
        }
        return settings, [Artifact(name, text.encode("utf-8")) for name, text in files.values()]


BACKEND = ExtractionBackend()

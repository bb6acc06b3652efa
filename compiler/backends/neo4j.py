"""Neo4j artifacts: constraints, transactional load statements with their row files,
validation queries, and CSV files for `neo4j-admin database import full`.

Property sets are built once (`node_properties`, `edge_properties`) and used by both the
transactional rows and the import CSVs, so the two loading paths give identical graphs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kgbench.io import json_bytes

from ..ir import Assertion, Domain, Entity, EvidenceSource, Support
from .base import Artifact, EmitContext, csv_bytes, render

ARRAY_DELIMITER = "|"
EDGE_FIELDS = ("validated", "causal_status", "evidence_level", "direction", "confidence")


def _clean(props: dict[str, Any]) -> dict[str, Any]:
    """Neo4j stores neither nulls nor (through the import tool) empty lists: drop both."""
    return {
        k: (list(v) if isinstance(v, tuple) else v) for k, v in props.items() if v not in (None, ())
    }


def entity_properties(e: Entity) -> dict[str, Any]:
    return _clean(e._asdict())


def assertion_properties(
    a: Assertion, provenance: str = "", member_ids: tuple[str, ...] = ()
) -> dict[str, Any]:
    props = a._asdict()
    props["id"] = a.assertion_id
    props["provenance"] = provenance or None
    props["member_ids"] = member_ids
    return _clean(props)


def evidence_properties(e: EvidenceSource) -> dict[str, Any]:
    props = e._asdict()
    props["id"] = e.evidence_id
    return _clean(props)


def edge_properties(a: Assertion, member_ids: tuple[str, ...] = ()) -> dict[str, Any]:
    """The direct edge's properties; a class-level claim lists the members it applies to, so
    extraction can show it under a member (`member_ids`, absent on other edges)."""
    props = {"assertion_id": a.assertion_id, **{f: getattr(a, f) for f in EDGE_FIELDS}}
    props["member_ids"] = member_ids
    return _clean(props)


def support_properties(s: Support) -> dict[str, Any]:
    return _clean(
        {"recommendation_class": s.recommendation_class, "level_of_evidence": s.level_of_evidence}
    )


def emit(domain: Domain, ctx: EmitContext) -> list[Artifact]:
    label = domain.neo4j_label
    facts = {f.assertion_id: f for f in domain.facts}
    out: list[Artifact] = []
    statements = []

    for cls in domain.entity_classes:
        rows = [
            {"id": e.id, "props": entity_properties(e)}
            for e in domain.entities
            if e.category == cls.name
        ]
        path = f"rows/entities_{cls.name}.json"
        out.append(Artifact(f"neo4j/{path}", json_bytes(rows)))
        statements.append(
            {
                "name": f"entity_{cls.name}",
                "rows": path,
                "cypher": (
                    f"UNWIND $rows AS row\nMERGE (n:{label} {{id: row.id}})\n"
                    f"SET n = row.props\nSET n:Entity:{cls.name};"
                ),
            }
        )

    ev_rows = [
        {"id": e.evidence_id, "props": evidence_properties(e)} for e in domain.evidence_sources
    ]
    out.append(Artifact("neo4j/rows/evidence_sources.json", json_bytes(ev_rows)))
    statements.append(
        {
            "name": "evidence_sources",
            "rows": "rows/evidence_sources.json",
            "cypher": (
                f"UNWIND $rows AS row\nMERGE (n:{label} {{id: row.id}})\n"
                "SET n = row.props\nSET n:EvidenceSource;"
            ),
        }
    )

    for pred in domain.predicates:
        rows = [
            {
                "id": a.assertion_id,
                "subject_id": a.subject_id,
                "object_id": a.object_id,
                "props": assertion_properties(
                    a,
                    facts[a.assertion_id].provenance if a.assertion_id in facts else "",
                    facts[a.assertion_id].member_ids if a.assertion_id in facts else (),
                ),
                "edge_props": edge_properties(
                    a, facts[a.assertion_id].member_ids if a.assertion_id in facts else ()
                ),
            }
            for a in domain.assertions
            if a.predicate == pred.name
        ]
        path = f"rows/assertions_{pred.name}.json"
        out.append(Artifact(f"neo4j/{path}", json_bytes(rows)))
        statements.append(
            {
                "name": f"assertion_{pred.name}",
                "rows": path,
                "cypher": (
                    "UNWIND $rows AS row\n"
                    f"MATCH (s:{label} {{id: row.subject_id}})\n"
                    f"MATCH (o:{label} {{id: row.object_id}})\n"
                    f"MERGE (a:{label} {{id: row.id}})\n"
                    "SET a = row.props\nSET a:Assertion\n"
                    "MERGE (a)-[:HAS_SUBJECT]->(s)\n"
                    "MERGE (a)-[:HAS_OBJECT]->(o)\n"
                    f"MERGE (s)-[r:{pred.name} {{assertion_id: row.id}}]->(o)\n"
                    "SET r = row.edge_props;"
                ),
            }
        )

    sup_rows = [
        {
            "assertion_id": s.assertion_id,
            "evidence_id": s.evidence_id,
            "props": support_properties(s),
        }
        for s in domain.supports
    ]
    out.append(Artifact("neo4j/rows/supports.json", json_bytes(sup_rows)))
    statements.append(
        {
            "name": "supports",
            "rows": "rows/supports.json",
            "cypher": (
                "UNWIND $rows AS row\n"
                f"MATCH (e:{label} {{id: row.evidence_id}})\n"
                f"MATCH (a:{label} {{id: row.assertion_id}})\n"
                "MERGE (e)-[s:SUPPORTS]->(a)\n"
                "SET s = row.props;"
            ),
        }
    )

    member_rows = [
        {"class_id": c.class_id, "member_id": m}
        for c in domain.intervention_classes
        for m in c.member_ids
    ]
    out.append(Artifact("neo4j/rows/members.json", json_bytes(member_rows)))
    statements.append(
        {
            "name": "members",
            "rows": "rows/members.json",
            "cypher": (
                "UNWIND $rows AS row\n"
                f"MATCH (m:{label} {{id: row.member_id}})\n"
                f"MATCH (k:{label} {{id: row.class_id}})\n"
                "MERGE (m)-[:MEMBER_OF]->(k);"
            ),
        }
    )

    prefix = label.lower()
    out.append(
        Artifact(
            "neo4j/constraints.cypher",
            render(
                "neo4j/constraints.cypher.j2", ctx, domain=domain.name, label=label, prefix=prefix
            ),
        )
    )
    out.append(
        Artifact(
            "neo4j/load.cypher",
            render(
                "neo4j/load.cypher.j2", ctx, domain=domain.name, label=label, statements=statements
            ),
        )
    )
    out.append(
        Artifact(
            "neo4j/validate.cypher",
            render("neo4j/validate.cypher.j2", ctx, domain=domain.name, checks=_checks(domain)),
        )
    )
    out.extend(_import_files(domain))
    return out


def expected_counts(domain: Domain) -> dict[str, int]:
    """Counts the loaded graph must have, derived from the validated data itself."""
    counts: dict[str, int] = {
        "entities": len(domain.entities),
        "assertions": len(domain.assertions),
        "evidence_sources": len(domain.evidence_sources),
        "supports": len(domain.supports),
        "members": sum(len(c.member_ids) for c in domain.intervention_classes),
    }
    for cls, n in sorted(Counter(e.category for e in domain.entities).items()):
        counts[f"entities.{cls}"] = n
    for pred, n in sorted(Counter(a.predicate for a in domain.assertions).items()):
        counts[f"edges.{pred}"] = n
    return counts


def _checks(domain: Domain) -> list[dict[str, Any]]:
    label = domain.neo4j_label
    types = "|".join(p.name for p in domain.predicates)
    counts = expected_counts(domain)
    checks = [
        {
            "name": "direct_edges_paired",
            "expect": 0,
            "description": "every direct edge has an assertion with the same subject, predicate and object",
            "cypher": (
                f"MATCH (s:{label})-[r:{types}]->(o:{label})\n"
                "WHERE NOT EXISTS {\n"
                f"  MATCH (s)<-[:HAS_SUBJECT]-(a:{label}:Assertion)-[:HAS_OBJECT]->(o)\n"
                "  WHERE a.id = r.assertion_id AND a.predicate = type(r)\n"
                "}\nRETURN count(r) AS value;"
            ),
        },
        {
            "name": "assertions_paired",
            "expect": 0,
            "description": "every assertion has one subject, one object and its direct edge",
            "cypher": (
                f"MATCH (a:{label}:Assertion)\n"
                "WHERE COUNT { (a)-[:HAS_SUBJECT]->() } <> 1\n"
                "   OR COUNT { (a)-[:HAS_OBJECT]->() } <> 1\n"
                "   OR NOT EXISTS {\n"
                "     MATCH (a)-[:HAS_SUBJECT]->(s)-[r]->(o)<-[:HAS_OBJECT]-(a)\n"
                "     WHERE r.assertion_id = a.id AND type(r) = a.predicate\n"
                "   }\nRETURN count(a) AS value;"
            ),
        },
        {
            "name": "assertions_evidenced",
            "expect": 0,
            "description": "every assertion is supported by evidence or states why it is not",
            "cypher": (
                f"MATCH (a:{label}:Assertion)\n"
                "WHERE NOT EXISTS { (:EvidenceSource)-[:SUPPORTS]->(a) } AND a.no_evidence_reason IS NULL\n"
                "RETURN count(a) AS value;"
            ),
        },
        {
            "name": "entities",
            "expect": counts["entities"],
            "description": "entity count matches the spec",
            "cypher": f"MATCH (n:{label}:Entity) RETURN count(n) AS value;",
        },
        {
            "name": "assertions",
            "expect": counts["assertions"],
            "description": "assertion count matches the spec",
            "cypher": f"MATCH (n:{label}:Assertion) RETURN count(n) AS value;",
        },
        {
            "name": "evidence_sources",
            "expect": counts["evidence_sources"],
            "description": "evidence source count matches the spec",
            "cypher": f"MATCH (n:{label}:EvidenceSource) RETURN count(n) AS value;",
        },
        {
            "name": "supports",
            "expect": counts["supports"],
            "description": "SUPPORTS link count matches the spec",
            "cypher": f"MATCH (:{label}:EvidenceSource)-[r:SUPPORTS]->(:{label}:Assertion) RETURN count(r) AS value;",
        },
    ]
    checks.append(
        {
            "name": "members",
            "expect": counts["members"],
            "description": "MEMBER_OF link count matches the spec",
            "cypher": f"MATCH (:{label}:Entity)-[r:MEMBER_OF]->(:{label}:Entity) RETURN count(r) AS value;",
        }
    )
    for key, n in counts.items():
        if key.startswith("entities."):
            cls = key.split(".", 1)[1]
            checks.append(
                {
                    "name": f"entities_{cls}",
                    "expect": n,
                    "description": f"{cls} count matches the spec",
                    "cypher": f"MATCH (n:{label}:{cls}) RETURN count(n) AS value;",
                }
            )
        elif key.startswith("edges."):
            pred = key.split(".", 1)[1]
            checks.append(
                {
                    "name": f"edges_{pred}",
                    "expect": n,
                    "description": f"{pred} direct edge count matches the spec",
                    "cypher": f"MATCH (:{label})-[r:{pred}]->(:{label}) RETURN count(r) AS value;",
                }
            )
    return checks


def _cell(value: Any) -> Any:
    if value is None or value == ():
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ARRAY_DELIMITER.join(value)
    return value


def _import_files(domain: Domain) -> list[Artifact]:
    """CSV files in the `neo4j-admin database import full` format (id space = the domain)."""
    space = domain.name
    label = domain.neo4j_label
    d = ARRAY_DELIMITER
    ent_header = [
        f"id:ID({space})",
        ":LABEL",
        "category",
        "name",
        "synonyms:string[]",
        "description",
        "xrefs:string[]",
    ]
    ent_rows = [
        [
            e.id,
            d.join((label, "Entity", e.category)),
            e.category,
            e.name,
            _cell(e.synonyms),
            _cell(e.description),
            _cell(e.xrefs),
        ]
        for e in domain.entities
    ]
    asr_fields = [
        ("assertion_id", ""), ("subject_id", ""), ("predicate", ""), ("object_id", ""),
        ("relation_class", ""), ("direction", ""), ("causal_status", ""), ("evidence_level", ""),
        ("confidence", ":double"), ("validated", ":boolean"), ("context", ""), ("population_id", ""),
        ("temporality", ""), ("source_databases", ":string[]"), ("no_evidence_reason", ""),
    ]  # fmt: skip
    facts = {f.assertion_id: f for f in domain.facts}
    asr_header = [f"id:ID({space})", ":LABEL"] + [f"{n}{t}" for n, t in asr_fields]
    asr_header += ["provenance", "member_ids:string[]"]
    asr_rows = [
        [a.assertion_id, d.join((label, "Assertion"))]
        + [_cell(getattr(a, n)) for n, _ in asr_fields]
        + [
            _cell(facts[a.assertion_id].provenance or None if a.assertion_id in facts else None),
            _cell(facts[a.assertion_id].member_ids if a.assertion_id in facts else ()),
        ]
        for a in domain.assertions
    ]
    ev_fields = [
        ("evidence_id", ""), ("source_type", ""), ("title", ""), ("citation", ""), ("year", ":long"),
        ("evidence_tier", ""), ("study_level", ":boolean"),
        ("studied_interventions", ":string[]"), ("studied_populations", ":string[]"),
    ]  # fmt: skip
    ev_header = [f"id:ID({space})", ":LABEL"] + [f"{n}{t}" for n, t in ev_fields]
    ev_rows = [
        [e.evidence_id, d.join((label, "EvidenceSource"))]
        + [_cell(getattr(e, n)) for n, _ in ev_fields]
        for e in domain.evidence_sources
    ]
    link_header = [f":START_ID({space})", f":END_ID({space})", ":TYPE"]
    has_subject = [[a.assertion_id, a.subject_id, "HAS_SUBJECT"] for a in domain.assertions]
    has_object = [[a.assertion_id, a.object_id, "HAS_OBJECT"] for a in domain.assertions]
    support_header = [*link_header, "recommendation_class", "level_of_evidence"]
    supports = [
        [
            s.evidence_id,
            s.assertion_id,
            "SUPPORTS",
            _cell(s.recommendation_class),
            _cell(s.level_of_evidence),
        ]
        for s in domain.supports
    ]
    members = [
        [m, c.class_id, "MEMBER_OF"] for c in domain.intervention_classes for m in c.member_ids
    ]
    edge_header = [
        *link_header,
        "assertion_id",
        "validated:boolean",
        "causal_status",
        "evidence_level",
        "direction",
        "confidence:double",
        "member_ids:string[]",
    ]
    edges = [
        [
            a.subject_id,
            a.object_id,
            a.predicate,
            a.assertion_id,
            _cell(a.validated),
            a.causal_status,
            a.evidence_level,
            a.direction,
            a.confidence,
            _cell(facts[a.assertion_id].member_ids if a.assertion_id in facts else ()),
        ]
        for a in domain.assertions
    ]
    files = {
        "nodes_entities.csv": csv_bytes(ent_header, ent_rows),
        "nodes_assertions.csv": csv_bytes(asr_header, asr_rows),
        "nodes_evidence_sources.csv": csv_bytes(ev_header, ev_rows),
        "relationships_has_subject.csv": csv_bytes(link_header, has_subject),
        "relationships_has_object.csv": csv_bytes(link_header, has_object),
        "relationships_supports.csv": csv_bytes(support_header, supports),
        "relationships_members.csv": csv_bytes(link_header, members),
        "relationships_direct.csv": csv_bytes(edge_header, edges),
    }
    plan = {
        "tool": "neo4j-admin database import full",
        "array_delimiter": ARRAY_DELIMITER,
        "id_type": "string",
        "nodes": sorted(n for n in files if n.startswith("nodes_")),
        "relationships": sorted(n for n in files if n.startswith("relationships_")),
        "expected_counts": expected_counts(domain),
        "note": "Import creates no constraints or indexes: apply constraints.cypher afterwards.",
    }
    out = [Artifact(f"neo4j/import/{name}", content) for name, content in files.items()]
    out.append(Artifact("neo4j/import/import.json", json_bytes(plan)))
    return out

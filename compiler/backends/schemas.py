"""JSON Schemas, generated with LinkML's JsonSchemaGenerator from the spec and domain schemas.

The response schema is additionally reduced to the subset OpenAI structured outputs accept in
strict mode, and checked against those rules before it is written.
"""

from __future__ import annotations

from pathlib import Path

from kgbench.io import json_bytes, ordered_json_bytes

from ..ir import Domain
from ..jsonschemas import class_schema, strict_openai_schema, strict_violations
from ..paths import SPEC_DIR
from .base import Artifact, Backend, EmitContext, declared_order

TABLE_CLASSES = {
    "entities": "Entity",
    "assertions": "Assertion",
    "evidence_sources": "EvidenceSource",
    "assertion_evidence": "AssertionEvidence",
    "intervention_classes": "InterventionClassMember",
    "xrefs": "EntityXref",
}


def response_schema() -> dict:
    """The model's answer schema, OpenAI-strict, its properties in spec/response.yaml's order.

    Strict decoding writes keys in schema order, so this order is the order in which a model
    commits to its answer; it is the declared one (the same the prompt lists), never sorted.
    """
    schema = strict_openai_schema(class_schema(SPEC_DIR / "response.yaml", "ModelResponse"))
    problems = strict_violations(schema)
    if problems:  # a broken invariant of the spec, not a user error
        raise AssertionError("response schema is not OpenAI-strict: " + "; ".join(problems))
    return declared_order(schema)


class SchemasBackend(Backend):
    """JSON Schemas of the tables, scenarios, gold and the model response."""

    name = "schemas"
    format_version = "1.1.0"  # 1.1: xrefs.schema.json; table rows with their local id patterns
    outputs = ("schemas/*.schema.json",)

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        return _emit(domain)


BACKEND = SchemasBackend()


def _emit(domain: Domain) -> list[Artifact]:
    out = []
    for table, cls in TABLE_CLASSES.items():
        schema = class_schema(Path(domain.schema_file), cls, title=f"{domain.name} {table} row")
        schema.pop("abstract", None)
        if table == "entities":
            schema["properties"]["category"]["enum"] = [c.name for c in domain.entity_classes]
        if table == "assertions":
            schema["properties"]["predicate"]["enum"] = [p.name for p in domain.predicates]
        # a table row holds the local part of each identifier (DRG_0001), not its CURIE
        for t, column, pattern in domain.table_patterns:
            prop = schema["properties"].get(column) if t == table else None
            if prop is not None:
                prop.get("items", prop)["pattern"] = pattern
        out.append(Artifact(f"schemas/{table}.schema.json", json_bytes(schema)))
    scenario = class_schema(SPEC_DIR / "scenario.yaml", "Scenario")
    if domain.id_schemes is not None and domain.id_schemes.scenarios.declared:
        # the domain's own scenario ids (compiler/idschemes.py); the paper's are the default
        scenario["properties"]["scenario_id"]["pattern"] = domain.id_schemes.scenarios.pattern
    out.append(Artifact("schemas/scenario.schema.json", json_bytes(scenario)))
    out.append(
        Artifact(
            "schemas/gold.schema.json", json_bytes(class_schema(SPEC_DIR / "scenario.yaml", "Gold"))
        )
    )
    out.append(Artifact("schemas/response.schema.json", ordered_json_bytes(response_schema())))
    return out

"""JSON Schemas, generated with LinkML's JsonSchemaGenerator from the spec and domain schemas.

The response schema is additionally reduced to the subset OpenAI structured outputs accept in
strict mode, and checked against those rules before it is written.
"""

from __future__ import annotations

from pathlib import Path

from kgbench.io import json_bytes

from ..ir import Domain
from ..jsonschemas import class_schema, strict_openai_schema, strict_violations
from ..paths import SPEC_DIR
from .base import Artifact, EmitContext

TABLE_CLASSES = {
    "entities": "Entity",
    "assertions": "Assertion",
    "evidence_sources": "EvidenceSource",
    "assertion_evidence": "AssertionEvidence",
    "intervention_classes": "InterventionClassMember",
}


def response_schema() -> dict:
    schema = strict_openai_schema(class_schema(SPEC_DIR / "response.yaml", "ModelResponse"))
    problems = strict_violations(schema)
    if problems:  # a broken invariant of the spec, not a user error
        raise AssertionError("response schema is not OpenAI-strict: " + "; ".join(problems))
    return schema


def emit(domain: Domain, ctx: EmitContext) -> list[Artifact]:
    out = []
    for table, cls in TABLE_CLASSES.items():
        schema = class_schema(Path(domain.schema_file), cls, title=f"{domain.name} {table} row")
        schema.pop("abstract", None)
        if table == "entities":
            schema["properties"]["category"]["enum"] = [c.name for c in domain.entity_classes]
        if table == "assertions":
            schema["properties"]["predicate"]["enum"] = [p.name for p in domain.predicates]
        out.append(Artifact(f"schemas/{table}.schema.json", json_bytes(schema)))
    out.append(
        Artifact(
            "schemas/scenario.schema.json",
            json_bytes(class_schema(SPEC_DIR / "scenario.yaml", "Scenario")),
        )
    )
    out.append(
        Artifact(
            "schemas/gold.schema.json", json_bytes(class_schema(SPEC_DIR / "scenario.yaml", "Gold"))
        )
    )
    out.append(Artifact("schemas/response.schema.json", json_bytes(response_schema())))
    return out

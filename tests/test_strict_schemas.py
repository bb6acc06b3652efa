"""OpenAI strict mode (issue 31, item 4): the checker knows the documented rules, every schema
kgbench sends with `strict: true` passes it, and the compiler makes schemas that pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.jsonschemas import strict_openai_schema, strict_violations
from harness.compiled import CompiledDomain
from harness.verify import steps
from harness.verify.agent import VerifySettings

REPO = Path(__file__).resolve().parents[1]
DOMAINS = ("cardio", "afib")


def closed(**props):
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_schema_sent_strict_passes_the_checker(domain):
    root = REPO / "generated" / domain
    sent = [root / "schemas" / "response.schema.json", *sorted((root / "probe/schemas").glob("*"))]
    assert len(sent) == 4
    for path in sent:
        assert strict_violations(json.loads(path.read_text())) == [], path
    v = VerifySettings.open(CompiledDomain.open(domain), "C5").verify
    assert strict_violations(steps.generate_schema(v)) == []
    assert strict_violations(steps.revise_schema(v)) == []


def test_the_edge_check_schema_has_no_ref_beside_a_keyword_and_keeps_its_description():
    schema = json.loads(
        (REPO / "generated/cardio/probe/schemas/edge_check.schema.json").read_text()
    )
    relation = schema["properties"]["relation"]
    assert "$ref" not in relation
    assert relation["enum"] == ["a_causes_b", "b_causes_a", "both", "neither"]
    assert relation["description"].startswith("Which direction the direct causal edge runs")


def test_the_checker_rejects_a_ref_with_a_sibling_and_accepts_a_ref_alone():
    defs = {"Rel": {"type": "string", "enum": ["a", "b"]}}
    alone = {**closed(r={"$ref": "#/$defs/Rel"}), "$defs": defs}
    assert strict_violations(alone) == []
    beside = {**closed(r={"$ref": "#/$defs/Rel", "description": "which"}), "$defs": defs}
    assert strict_violations(beside) == [
        "#/properties/r: $ref cannot have sibling keywords (description)"
    ]
    dangling = {**closed(r={"$ref": "#/$defs/Missing"}), "$defs": defs}
    assert "does not name '#' or one of its $defs" in strict_violations(dangling)[0]
    recursive = closed(child={"anyOf": [{"$ref": "#"}, {"type": "null"}]})
    assert strict_violations(recursive) == []


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"anyOf": [closed(a={"type": "string"})]}, "root: must be an object"),
        ({**closed(a={"type": "string"}), "anyOf": []}, "root: must not be anyOf"),
        (closed(a={"type": "string", "minLength": 1}), "keyword 'minLength' is not supported"),
        (closed(a={"type": "array", "uniqueItems": True}), "keyword 'uniqueItems'"),
        (closed(a={"type": "string", "format": "uri"}), "format 'uri' is not supported"),
        (closed(a={"type": "float"}), "type 'float' is not supported"),
        (closed(a={"type": "object", "properties": {}}), "additionalProperties must be false"),
        (closed(a={"type": "string", "default": "x"}), "keyword 'default'"),
        (
            closed(a={"type": "string", "enum": [f"v{i}" for i in range(1001)]}),
            "1001 enum values (at most 1000)",
        ),
        (
            closed(a={"type": "string", "enum": [f"{i:060d}" for i in range(251)]}),
            "an enum of 251 values may hold at most 15000 characters",
        ),
    ],
)
def test_the_checker_rejects_each_documented_rule(schema, expected):
    assert any(expected in p for p in strict_violations(schema)), strict_violations(schema)


def test_nesting_deeper_than_ten_levels_is_refused_and_ten_is_accepted():
    def nest(levels):
        node = {"type": "string"}
        for _ in range(levels):
            node = closed(x=node)
        return node

    assert strict_violations(nest(10)) == []
    assert any("nested deeper than 10" in p for p in strict_violations(nest(12)))


def test_the_supported_keywords_pass():
    schema = closed(
        n={"type": "number", "minimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.5},
        s={"type": ["string", "null"], "pattern": "^a", "format": "date"},
        c={"type": "string", "const": "x"},
        xs={"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
    )
    assert strict_violations(schema) == []


def test_strict_openai_schema_inlines_a_ref_with_a_description():
    generated = {
        "type": "object",
        "properties": {"r": {"$ref": "#/$defs/Rel", "description": "which way"}},
        "required": ["r"],
        "$defs": {"Rel": {"type": "string", "enum": ["a", "b"], "title": "Rel"}},
    }
    strict = strict_openai_schema(generated)
    assert strict["properties"]["r"] == {
        "type": "string",
        "enum": ["a", "b"],
        "description": "which way",
    }
    assert "$defs" not in strict and strict_violations(strict) == []

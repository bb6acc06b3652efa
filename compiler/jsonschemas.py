"""JSON Schemas produced with LinkML's JsonSchemaGenerator, one generator run per schema file.

Generation is memoised per process: the compiler needs the declaration schema to validate the
spec and the scenario/response/table schemas as artifacts, and each generator run costs about
0.1 s (plus ~0.7 s to import the generator module once, which is why it is imported lazily).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from .paths import SPEC_DIR, shipped_imports

# Keywords OpenAI structured outputs accept in strict mode.
STRICT_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "$defs",
    "$ref",
    "description",
    "enum",
    "anyOf",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "title",
}


@cache
def generate(schema_path: str) -> dict[str, Any]:
    """The whole-schema JSON Schema (every class under $defs) for one LinkML file."""
    import yaml
    from linkml.generators.jsonschemagen import JsonSchemaGenerator

    data = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    importmap = shipped_imports(Path(schema_path), data)
    gen = JsonSchemaGenerator(schema_path, not_closed=False, importmap=importmap or None)
    whole = json.loads(gen.serialize())
    for cls, fields in _nullable_fields(schema_path).items():
        props = whole.get("$defs", {}).get(cls, {}).get("properties", {})
        for name in fields:
            if name in props:
                props[name] = _nullable(props[name])
    for cls, fields in _annotated(schema_path, "list_of_lists").items():
        props = whole.get("$defs", {}).get(cls, {}).get("properties", {})
        for name in fields:
            if name in props:  # a list of lists of strings (LinkML has no nested lists)
                props[name] = {
                    **props[name],
                    "items": {"type": "array", "items": props[name]["items"]},
                }
    return whole


def _annotated(schema_path: str, annotation: str) -> dict[str, list[str]]:
    """Attributes carrying `annotation: true`, per class."""
    import yaml

    data = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8")) or {}
    out: dict[str, list[str]] = {}
    for cls, body in (data.get("classes") or {}).items():
        for name, attr in ((body or {}).get("attributes") or {}).items():
            if str(((attr or {}).get("annotations") or {}).get(annotation, "")).lower() == "true":
                out.setdefault(cls, []).append(name)
    return out


def _nullable_fields(schema_path: str) -> dict[str, list[str]]:
    """Attributes annotated `nullable: true`: required keys whose value may be null (a gold
    answer or a model's recommendation that abstains). LinkML has no nullable flag of its own,
    so the annotation is read from the schema file and applied to the generated schema."""
    import yaml

    data = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8")) or {}
    out: dict[str, list[str]] = {}
    for cls, body in (data.get("classes") or {}).items():
        for name, attr in ((body or {}).get("attributes") or {}).items():
            if str(((attr or {}).get("annotations") or {}).get("nullable", "")).lower() == "true":
                out.setdefault(cls, []).append(name)
    return out


def class_schema(schema_path: Path, class_name: str, title: str | None = None) -> dict[str, Any]:
    """A standalone schema for one class: its definition at the root, all $defs alongside."""
    whole = generate(str(schema_path))
    defs = copy.deepcopy(whole.get("$defs", {}))
    root = copy.deepcopy(defs[class_name])
    out: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    out["$id"] = f"{whole.get('$id', 'https://w3id.org/kgbench')}/{class_name}"
    out["title"] = title or class_name
    out.update({k: v for k, v in root.items() if k != "title"})
    used = _referenced_defs(root, defs)
    if used:
        out["$defs"] = {k: defs[k] for k in sorted(used)}
    return out


def _referenced_defs(node: Any, defs: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            ref = cur.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.split("/")[-1]
                if name not in found:
                    found.add(name)
                    stack.append(defs[name])
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return found


@cache
def declaration_schema(root_class: str, schema_file: str = "declarations.yaml") -> dict[str, Any]:
    """The JSON Schema of a declaration class of `spec/<schema_file>` (disk-cached)."""
    from .cache import cached

    path = SPEC_DIR / schema_file
    return cached(
        "declaration-schema",
        [path],
        root_class,
        lambda: (class_schema(path, root_class), [path]),
    )


@cache  # as declaration_schema: the spec does not change while a process runs
def spec_fields(schema_file: str, class_name: str) -> tuple[str, ...]:
    """Field names of a spec class, in declaration order (disk-cached like other derived data).

    The compiler checks metric declarations against these, so the response contract and the
    gold structure are declared once, in spec/response.yaml and spec/scenario.yaml.
    """
    from .cache import cached

    path = SPEC_DIR / schema_file

    def build():
        schema = class_schema(path, class_name)
        required = schema.get("required", [])
        names = [*required, *(n for n in schema.get("properties", {}) if n not in required)]
        return names, [path]

    return tuple(cached("spec-fields", [path], class_name, build))


def strict_openai_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Reduce a generated schema to what OpenAI strict mode accepts.

    Strict mode needs every object closed and every property listed in `required`; optional
    fields become a union with null. Keywords it rejects are dropped.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key in ("properties", "$defs"):
                    out[key] = {name: walk(sub) for name, sub in value.items()}
                elif key in STRICT_KEYWORDS:
                    out[key] = walk(value)
            if out.get("type") == "object" and "properties" in out:
                out["additionalProperties"] = False
                required = set(node.get("required", []))
                for name, prop in out["properties"].items():
                    if name not in required:
                        out["properties"][name] = _nullable(prop)
                declared = [n for n in node.get("required", []) if n in out["properties"]]
                out["required"] = declared + [n for n in out["properties"] if n not in declared]
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result = walk(schema)
    result.pop("title", None)
    return result


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    t = prop.get("type")
    if isinstance(t, str):
        return {**prop, "type": [t, "null"]}
    if isinstance(t, list):
        return prop if "null" in t else {**prop, "type": [*t, "null"]}
    return {"anyOf": [prop, {"type": "null"}]}


def strict_violations(schema: dict[str, Any]) -> list[str]:
    """Why a schema would be refused by OpenAI strict mode (empty when it is accepted)."""
    problems: list[str] = []
    if schema.get("type") != "object":
        problems.append("root: must be an object")

    def walk(node: Any, where: str, depth: int) -> None:
        if isinstance(node, dict):
            for key in node:
                if key not in STRICT_KEYWORDS and not where.endswith(("/properties", "/$defs")):
                    problems.append(f"{where}: keyword '{key}' is not supported")
            if node.get("type") == "object" or "properties" in node:
                if node.get("additionalProperties") is not False:
                    problems.append(f"{where}: additionalProperties must be false")
                props = node.get("properties", {})
                if set(node.get("required", [])) != set(props):
                    problems.append(f"{where}: every property must be required")
                if depth > 10:
                    problems.append(f"{where}: nested deeper than 10 levels")
            for key, value in node.items():
                walk(value, f"{where}/{key}", depth + (1 if key == "properties" else 0))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}/{i}", depth)

    walk(schema, "#", 0)
    return problems

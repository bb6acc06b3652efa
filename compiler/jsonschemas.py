"""JSON Schemas produced with LinkML's JsonSchemaGenerator, one generator run per schema file.

Generation is memoised per process and cached on disk (`generate`): the compiler needs the
declaration schema to validate the spec and the scenario/response/table schemas as artifacts;
each generator run costs about 0.1 s, plus about 2 s to import the generator module and load
LinkML's metamodel once, which a cache hit never does.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from .paths import SPEC_DIR, shipped_imports

# OpenAI Structured Outputs, strict mode ("Supported schemas" in OpenAI's Structured Outputs
# guide): the keywords it accepts, the string formats, the types, and the documented limits.
# `strict_violations` checks every rule; `strict_openai_schema` produces schemas that pass.
STRICT_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "$defs",
    "$ref",
    "description",
    "title",
    "enum",
    "const",
    "anyOf",
    # strings
    "pattern",
    "format",
    # numbers
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    # arrays
    "minItems",
    "maxItems",
}
STRICT_FORMATS = {
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
}
STRICT_TYPES = {"string", "number", "boolean", "integer", "object", "array", "null"}
STRICT_MAX_DEPTH = 10  # object nesting levels
STRICT_MAX_PROPERTIES = 5000  # object properties in the whole schema
STRICT_MAX_ENUM_VALUES = 1000  # enum values across all enums
STRICT_MAX_STRING_CHARS = 120_000  # property names, $defs names, enum and const values
STRICT_LARGE_ENUM = 250  # a string enum with more values than this ...
STRICT_LARGE_ENUM_CHARS = 15_000  # ... may hold this many characters in all


@cache
def generate(schema_path: str) -> dict[str, Any]:
    """The whole-schema JSON Schema (every class under $defs) for one LinkML file.

    Disk-cached like the schema model (`compiler.cache`): keyed by the sha256 of the schema
    file, the spec's schema files, this module's own code and the LinkML version, and
    re-checked against every file of the schema's import closure. With the schemas
    unchanged, a forced compile and a cold validation import no LinkML generator (importing
    it and loading the metamodel was about 60% of a forced compile)."""
    from .cache import cached

    path = Path(schema_path).resolve()
    shipped = shipped_schema(path)
    if shipped is not None:
        return shipped
    key_files = [path, *sorted(SPEC_DIR.glob("*.yaml")), Path(__file__)]
    # the schema's own path goes in the key: a spec schema is also one of the spec files
    return cached("jsonschema", key_files, path.as_posix(), lambda: _generate(path))


# The spec's own schemas' JSON Schemas, shipped beside them (`write_shipped`): they do not
# depend on any domain, so no run, however cold (`KGBENCH_NO_CACHE=1`, a fresh checkout, an
# empty cache folder), needs LinkML's generator for them while the files they were made from
# are unchanged. Each entry records the sha256 of every spec file it was made from (its import
# closure), of this module and the LinkML version; any difference and `generate` makes it anew.
SHIPPED = SPEC_DIR / "jsonschemas.json"
SHIPPED_SCHEMAS = (
    "declarations.yaml",
    "response.yaml",
    "scenario.yaml",
    "probe_response.yaml",
    "study/study.yaml",
)


def _sha256(path: Path) -> str:
    from kgbench.io import sha256_file

    return sha256_file(path)


def _stamp() -> str:
    """What the shipped schemas depend on besides the spec files: this code, LinkML's version."""
    from .cache import _linkml_version

    return f"{_sha256(Path(__file__))}|linkml {_linkml_version()}"


@cache
def _shipped_entries() -> dict[str, Any]:
    try:
        data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("stamp") != _stamp():
        return {}
    schemas = data.get("schemas")
    return schemas if isinstance(schemas, dict) else {}


def shipped_schema(path: Path) -> dict[str, Any] | None:
    """The shipped JSON Schema of a spec schema file, if every file it was made from is
    unchanged; else None (then the disk cache or the generator decides)."""
    try:
        name = path.resolve().relative_to(SPEC_DIR.resolve()).as_posix()
    except ValueError:
        return None  # a domain's schema: never shipped
    entry = _shipped_entries().get(name)
    if not isinstance(entry, dict) or not isinstance(entry.get("deps"), dict):
        return None
    for dep, digest in entry["deps"].items():
        dep_path = SPEC_DIR / dep
        if not dep_path.is_file() or _sha256(dep_path) != digest:
            return None
    value = entry.get("value")
    return copy.deepcopy(value) if isinstance(value, dict) else None


def shipped_text() -> str:
    """The content `SHIPPED` must hold: each spec schema generated by LinkML now, with the
    digests of the files it was made from (deterministic: sorted keys, one trailing newline)."""
    schemas = {}
    root = SPEC_DIR.resolve()
    for name in SHIPPED_SCHEMAS:
        value, deps = _generate((SPEC_DIR / name).resolve())
        files = sorted(
            {Path(d).resolve() for d in deps if Path(d).resolve() != Path(__file__).resolve()}
        )
        schemas[name] = {
            "deps": {f.relative_to(root).as_posix(): _sha256(f) for f in files},
            "value": value,
        }
    return json.dumps({"stamp": _stamp(), "schemas": schemas}, indent=1, sort_keys=True) + "\n"


def write_shipped() -> Path:
    """Regenerate `SHIPPED` (`python -m compiler.jsonschemas`) after a spec schema changed."""
    from kgbench.io import atomic_write_text

    atomic_write_text(SHIPPED, shipped_text())
    _shipped_entries.cache_clear()
    return SHIPPED


def _generate(path: Path) -> tuple[dict[str, Any], list[Path]]:
    """LinkML's JsonSchemaGenerator run on one file, nullable fields applied; and the local
    files of its import closure (what the cached value depends on)."""
    import yaml
    from linkml.generators.jsonschemagen import JsonSchemaGenerator

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    importmap = shipped_imports(path, data)
    gen = JsonSchemaGenerator(str(path), not_closed=False, importmap=importmap or None)
    whole = json.loads(gen.serialize())
    for cls, fields in _nullable_fields(str(path)).items():
        props = whole.get("$defs", {}).get(cls, {}).get("properties", {})
        for name in fields:
            if name in props:
                props[name] = _nullable(props[name])
    for cls, fields in _annotated(str(path), "list_of_lists").items():
        props = whole.get("$defs", {}).get(cls, {}).get("properties", {})
        for name in fields:
            if name in props:  # a list of lists of strings (LinkML has no nested lists)
                props[name] = {
                    **props[name],
                    "items": {"type": "array", "items": props[name]["items"]},
                }
    return whole, [*_closure_files(gen.schemaview, path), Path(__file__)]


def _closure_files(view: Any, root: Path) -> list[Path]:
    """The schema file and every file of its import closure outside the installed packages
    (LinkML's own types come with the LinkML version, which is in the cache key)."""
    files = [root]
    for name in view.imports_closure():
        source = getattr(view.schema_map.get(name), "source_file", None)
        if source:
            path = Path(source).resolve()
            if path.exists() and "site-packages" not in path.parts and path not in files:
                files.append(path)
    return files


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

    result = _inline_refs_with_siblings(walk(schema))
    result.pop("title", None)
    return result


def _inline_refs_with_siblings(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace every `{"$ref": "#/$defs/X", <siblings>}` by X's definition with the siblings
    over it, and drop definitions nothing refers to any more.

    OpenAI strict mode refuses a `$ref` beside any other keyword, and LinkML puts a slot's
    `description` beside the `$ref` of its enum range: dropping the description would hide
    from the model what the field means, so the definition is inlined instead.
    """
    defs = schema.get("$defs", {})
    inlined = False

    def walk(node: Any) -> Any:
        nonlocal inlined
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) > 1:
                target = defs.get(ref[len("#/$defs/") :])
                if isinstance(target, dict) and "$ref" not in json.dumps(target):
                    inlined = True
                    merged = copy.deepcopy(target)
                    merged.pop("title", None)
                    merged.update({k: walk(v) for k, v in node.items() if k != "$ref"})
                    return merged
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out = walk(schema)
    if inlined and "$defs" in out:
        body = {k: v for k, v in out.items() if k != "$defs"}
        used = _referenced_defs(body, out["$defs"])
        out["$defs"] = {k: v for k, v in out["$defs"].items() if k in used}
        if not out["$defs"]:
            del out["$defs"]
    return out


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    t = prop.get("type")
    if isinstance(t, str):
        return {**prop, "type": [t, "null"]}
    if isinstance(t, list):
        return prop if "null" in t else {**prop, "type": [*t, "null"]}
    return {"anyOf": [prop, {"type": "null"}]}


def strict_violations(schema: dict[str, Any]) -> list[str]:
    """Why a schema would be refused by OpenAI strict mode (empty when it is accepted).

    The rules of OpenAI's Structured Outputs guide: the root is an object and not an anyOf;
    every object has `additionalProperties: false` and lists every property in `required`;
    only the supported keywords, types and string formats; `$ref` points into the schema
    (`#` or `#/$defs/<name>`) and stands alone (the API refuses "$ref cannot have keywords
    {'description'}"); at most 10 levels of object nesting and 5,000 properties; at most 1,000
    enum values, 15,000 characters in one enum of more than 250 string values, and 120,000
    characters of property names, definition names, enum and const values.
    """
    problems: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        problems.append("root: must be an object")
    if isinstance(schema, dict) and "anyOf" in schema:
        problems.append("root: must not be anyOf")
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    totals = {"properties": 0, "enum_values": 0, "chars": sum(len(str(n)) for n in defs)}

    def check_node(node: dict[str, Any], where: str, depth: int) -> None:
        for key in node:
            if key not in STRICT_KEYWORDS:
                problems.append(f"{where}: keyword '{key}' is not supported")
        if "$ref" in node:
            ref = node["$ref"]
            siblings = sorted(k for k in node if k != "$ref")
            if siblings:
                problems.append(
                    f"{where}: $ref cannot have sibling keywords ({', '.join(siblings)})"
                )
            if not isinstance(ref, str) or not (
                ref == "#" or (ref.startswith("#/$defs/") and ref[len("#/$defs/") :] in defs)
            ):
                problems.append(f"{where}: $ref {ref!r} does not name '#' or one of its $defs")
        types = node.get("type")
        for t in types if isinstance(types, list) else [types] if types is not None else []:
            if t not in STRICT_TYPES:
                problems.append(f"{where}: type {t!r} is not supported")
        if "format" in node and node["format"] not in STRICT_FORMATS:
            problems.append(f"{where}: format {node['format']!r} is not supported")
        if "enum" in node and isinstance(node["enum"], list):
            values = node["enum"]
            totals["enum_values"] += len(values)
            chars = sum(len(v) for v in values if isinstance(v, str))
            totals["chars"] += chars
            if len(values) > STRICT_LARGE_ENUM and chars > STRICT_LARGE_ENUM_CHARS:
                problems.append(
                    f"{where}: an enum of {len(values)} values may hold at most "
                    f"{STRICT_LARGE_ENUM_CHARS} characters ({chars})"
                )
        if isinstance(node.get("const"), str):
            totals["chars"] += len(node["const"])
        is_object = node.get("type") == "object" or (
            isinstance(node.get("type"), list) and "object" in node["type"]
        )
        if is_object or "properties" in node:
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties must be false")
            props = node.get("properties", {})
            totals["properties"] += len(props)
            totals["chars"] += sum(len(str(n)) for n in props)
            if set(node.get("required", [])) != set(props):
                problems.append(f"{where}: every property must be required")
            if depth > STRICT_MAX_DEPTH:
                problems.append(f"{where}: nested deeper than {STRICT_MAX_DEPTH} levels")

    def walk(node: Any, where: str, depth: int) -> None:
        if isinstance(node, dict):
            if not where.endswith(("/properties", "/$defs")):
                check_node(node, where, depth)
            for key, value in node.items():
                walk(value, f"{where}/{key}", depth + (1 if key == "properties" else 0))
        elif isinstance(node, list) and not where.endswith(("/enum", "/required")):
            for i, value in enumerate(node):
                walk(value, f"{where}/{i}", depth)

    walk(schema, "#", 0)
    if totals["properties"] > STRICT_MAX_PROPERTIES:
        problems.append(
            f"root: {totals['properties']} properties (at most {STRICT_MAX_PROPERTIES})"
        )
    if totals["enum_values"] > STRICT_MAX_ENUM_VALUES:
        problems.append(
            f"root: {totals['enum_values']} enum values (at most {STRICT_MAX_ENUM_VALUES})"
        )
    if totals["chars"] > STRICT_MAX_STRING_CHARS:
        problems.append(
            f"root: {totals['chars']} characters of names and values "
            f"(at most {STRICT_MAX_STRING_CHARS})"
        )
    return problems


if __name__ == "__main__":
    print(f"wrote {write_shipped()}")

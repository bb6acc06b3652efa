"""Load the declaration files (domain.yaml, conditions, metrics; a study file) and check them
against the JSON Schema that LinkML generates from `spec/declarations.yaml` (a study file:
`spec/study/study.yaml`).

Validation errors are mapped back to the YAML line of the offending value.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from kgbench.errors import SpecError

from .jsonschemas import declaration_schema
from .schema import suggest
from .yamlfile import YamlDoc, read_yaml


def _check(doc: YamlDoc, root_class: str, schema_file: str = "declarations.yaml") -> None:
    """Validate the document, or find it in the disk cache as already valid against this
    very schema: a declaration rarely changes between runs, and importing jsonschema alone
    costs about a tenth of a second (`kgbench validate` of a large domain runs in a few)."""
    from .cache import cached

    schema = declaration_schema(root_class, schema_file)
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
    cached(
        "valid-declaration",
        [doc.path],
        f"{root_class}|{digest}",
        lambda: (_validate(doc, schema), [doc.path]),
    )


def _validate(doc: YamlDoc, schema: dict[str, Any]) -> bool:
    """True, or the first error as one SpecError at the offending line and field."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return True
    err = _deepest(errors[0])
    path = list(err.absolute_path)
    if err.validator == "additionalProperties":
        extra = [k for k in err.instance if k not in err.schema.get("properties", {})]
        path.extend(extra[:1])
    # a list item is reported under its list's field name ("roles"), not as a bare index
    field = next((str(p) for p in reversed(path) if isinstance(p, str)), None)
    message = _explain(err)
    raise SpecError(message, doc.location(path, field))


def _deepest(err):
    """The error inside an anyOf/oneOf that names the bad value, not the whole branch.

    LinkML writes an optional inlined object as `anyOf: [{$ref}, {type: null}]`, so a typo
    deep inside it would otherwise be reported as "{...} is not valid under any of the given
    schemas"; the deepest sub-error (e.g. "expected one of ...; got 'mechanistc'") is the one
    the user can act on.
    """
    while err.validator in ("anyOf", "oneOf") and err.context:
        err = max(err.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    return err


def _explain(err) -> str:
    """A readable version of one jsonschema error."""
    v = err.validator
    if v == "additionalProperties":
        props = err.schema.get("properties", {})
        extra = [k for k in err.instance if k not in props]
        name = extra[0] if extra else "?"
        return (
            f"unknown field '{name}'"
            + suggest(name, props)
            + "; expected one of "
            + ", ".join(sorted(props))
        )
    if v == "required":
        return err.message.replace("is a required property", "is required")
    if v == "enum":
        return (
            f"expected one of {', '.join(map(str, err.validator_value))}; got {err.instance!r}"
            + suggest(str(err.instance), map(str, err.validator_value))
        )
    if v == "pattern":
        return f"expected a value matching {err.validator_value}, got {err.instance!r}"
    if v == "type":
        return f"expected {err.validator_value}, got {type(err.instance).__name__} {err.instance!r}"
    return err.message


def load_declaration(
    path: Path, root_class: str, schema_file: str = "declarations.yaml"
) -> YamlDoc:
    """A declaration file read with the bounded YAML reader (line numbers kept) and checked
    against `root_class` of `spec/<schema_file>`: the first error is one SpecError at the
    offending line and field."""
    doc = read_yaml(path)
    if not isinstance(doc.data, dict):
        raise SpecError(
            f"expected a mapping at the top level (a {root_class} declaration)", doc.location()
        )
    _check(doc, root_class, schema_file)
    return doc


# The study schema sits in its own folder under spec/: every spec/*.yaml is an input of each
# domain's compile (a new one there would make every compile stale), and a study is not part of
# any domain's compile.
STUDY_SCHEMA = "study/study.yaml"


def load_study_file(path: Path) -> YamlDoc:
    """A study file (`kgbench study --config`) checked against `StudyConfig` of
    spec/study/study.yaml, as every other declaration is checked."""
    return load_declaration(Path(path), "StudyConfig", STUDY_SCHEMA)


def as_mapping(doc: YamlDoc, key: str) -> dict[str, Any]:
    value = doc.data.get(key) or {}
    if not isinstance(value, dict):
        raise SpecError("expected a mapping", doc.location([key], key))
    return value

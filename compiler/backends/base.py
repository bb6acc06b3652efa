"""Shared machinery for backends: artifacts, deterministic serialisers, the template engine."""

from __future__ import annotations

import csv
import fnmatch
import io
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

import jinja2

from kgbench.contract import Document
from kgbench.io import json_bytes

from ..paths import TEMPLATES_DIR

if TYPE_CHECKING:
    from ..ir import Domain


@dataclass(frozen=True)
class Artifact:
    """One output file: a POSIX path relative to generated/<domain>/ and its exact bytes."""

    path: str
    content: bytes


@dataclass
class EmitContext:
    """Things backends share within one compile (e.g. template files they read)."""

    template_files: set[str] = field(default_factory=set)
    formats: dict[str, str] = field(default_factory=dict)  # contract document -> its version


class Backend:
    """One output family: a name, the format version of what it writes, the paths it may
    write (glob patterns under generated/<domain>/) and `emit`, the IR to its artifacts.

    A new backend subclasses this and lists an instance in `BACKENDS`; `build_artifacts`
    checks every artifact against its backend's declared outputs, and the manifest records
    each backend's format version.
    """

    name: ClassVar[str]
    format_version: ClassVar[str]
    outputs: ClassVar[tuple[str, ...]]

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        raise NotImplementedError

    def owns(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.outputs)

    @staticmethod
    def document(model: type[Document], data: dict[str, Any], ctx: EmitContext) -> Artifact:
        """A contract document, checked against its model before it is written: a mismatch
        is a bug in the compiler (pydantic's ValidationError, with its traceback)."""
        data = {model.VERSION_FIELD: model.FORMAT, **data}
        model.model_validate(data)
        ctx.formats[model.PATH] = model.FORMAT
        return Artifact(model.PATH, json_bytes(data))


def declared_order(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema with `properties` in declared (`required`) order, recursively; every other
    mapping sorted, so the bytes stay deterministic.

    Strict structured output (OpenAI, and the grammar engines behind vLLM and others) makes a
    model write an object's keys in the order of its schema's `properties`: for an answer
    schema that order is a decision of the spec (see spec/response.yaml), never alphabetical.
    """
    out: dict[str, Any] = {}
    for key in sorted(schema):
        value = schema[key]
        if key == "properties" and isinstance(value, dict):
            required = [n for n in schema.get("required", []) if n in value]
            order = required + sorted(set(value) - set(required))
            value = {name: declared_order(value[name]) for name in order}
        elif isinstance(value, dict):  # $defs, items, a property's own schema
            value = declared_order(value)
        elif isinstance(value, list):
            value = [declared_order(v) if isinstance(v, dict) else v for v in value]
        out[key] = value
    return out


def csv_bytes(header: list[str], rows: list[list[Any]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


@cache
def environment() -> jinja2.Environment:
    """Compile-time templates: StrictUndefined so a missing variable is a loud error.

    Compile-time templates use `[[ ]]` and `[% %]`; `{{ }}` and `{% %}` pass through untouched
    into the generated prompt templates, which the harness renders at run time.
    """
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        variable_start_string="[[",
        variable_end_string="]]",
        block_start_string="[%",
        block_end_string="%]",
        comment_start_string="[#",
        comment_end_string="#]",
        autoescape=False,
    )


def render(name: str, ctx: EmitContext, **variables: Any) -> bytes:
    ctx.template_files.add(name)
    text = environment().get_template(name).render(**variables)
    return text.encode("utf-8")

"""Shared machinery for backends: artifacts, deterministic serialisers, the template engine."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jinja2

from ..paths import TEMPLATES_DIR


@dataclass(frozen=True)
class Artifact:
    """One output file: a POSIX path relative to generated/<domain>/ and its exact bytes."""

    path: str
    content: bytes


@dataclass
class EmitContext:
    """Things backends share within one compile (e.g. template files they read)."""

    template_files: set[str] = field(default_factory=set)


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

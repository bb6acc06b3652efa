"""Identifier schemes: the formats a domain's ids follow, declared per domain.

The paper's formats (DRG_0001 with the class's id_prefix, ASR_0001, EV_0001, SCN_0001) are
the defaults, held where they are described: the `table_pattern` of each id column in
spec/kg.yaml (annotated with the `id_scheme` it follows) and the scenario defaults below. A
domain written in its own conventions declares `id_schemes` in domain.yaml instead of
renumbering its sources; every id column of the kind, the scenario schema, the pinned
scenarios and the generator then follow the declared scheme. One owner: this module resolves
the schemes and applies them to the table model, so the table reader's pattern check (file,
line, field) is the one check for every id.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from kgbench.errors import SpecError

from .ir import IdScheme, IdSchemes
from .schema import SchemaModel
from .yamlfile import YamlDoc

KINDS = ("entities", "assertions", "evidence", "scenarios")
DEFAULT_SCENARIO_PATTERN = "^SCN_[0-9]{4,6}$"
DEFAULT_SCENARIO_FORMAT = "SCN_{n:04d}"
SAMPLE_NUMBERS = (1, 9, 10, 99, 100, 999)  # the generator's ids a format is checked on


def _defaults(model: SchemaModel) -> dict[str, IdScheme]:
    """The paper's schemes: each id column's table_pattern, per the id_scheme it follows."""
    found: dict[str, str] = {}
    for spec in model.tables.values():
        for col in spec.columns:
            if col.id_scheme and col.pattern:
                found.setdefault(col.id_scheme, col.pattern)
    return {
        "entities": IdScheme(found["entities"], class_prefix=True),
        "assertions": IdScheme(found["assertions"]),
        "evidence": IdScheme(found["evidence"]),
        "scenarios": IdScheme(DEFAULT_SCENARIO_PATTERN, DEFAULT_SCENARIO_FORMAT),
    }


def resolve(doc: YamlDoc, model: SchemaModel) -> IdSchemes:
    """The domain's schemes, declared ones checked: a pattern that is no regular expression,
    or a scenario format whose ids fall outside the pattern, is a located error."""
    out = _defaults(model)
    declared: dict[str, Any] = doc.data.get("id_schemes") or {}
    for kind in KINDS:
        entry = declared.get(kind)
        if not entry:
            continue
        path = ["id_schemes", kind]
        pattern = str(entry["pattern"])
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SpecError(
                f"pattern {pattern!r} is not a regular expression ({exc})",
                doc.location([*path, "pattern"], "pattern"),
            ) from None
        fmt = str(entry.get("format") or "")
        if fmt and kind != "scenarios":
            raise SpecError(
                "format applies to scenario ids only (the generator writes them)",
                doc.location([*path, "format"], "format"),
            )
        if kind == "scenarios":
            fmt = fmt or DEFAULT_SCENARIO_FORMAT
            for n in SAMPLE_NUMBERS:
                try:
                    sample = fmt.format(n=n)
                except (KeyError, IndexError, ValueError) as exc:
                    raise SpecError(
                        f"format {fmt!r} is not a format of the number n ({exc!r})",
                        doc.location([*path, "format"], "format"),
                    ) from None
                if not re.fullmatch(pattern, sample):
                    raise SpecError(
                        f"format {fmt!r} writes '{sample}', which does not match the pattern "
                        f"{pattern!r}",
                        doc.location([*path, "format"] if entry.get("format") else path, "format"),
                    )
        if entry.get("class_prefix") is not None and kind != "entities":
            raise SpecError(
                "class_prefix applies to entity ids only",
                doc.location([*path, "class_prefix"], "class_prefix"),
            )
        out[kind] = IdScheme(
            pattern=pattern,
            format=fmt,
            class_prefix=bool(entry.get("class_prefix")) if kind == "entities" else False,
            declared=True,
        )
    return IdSchemes(**out)


def apply(model: SchemaModel, schemes: IdSchemes) -> SchemaModel:
    """The table model with every id column's pattern the domain's scheme for its kind."""
    tables = {
        name: replace(
            spec,
            columns=tuple(
                replace(col, pattern=schemes.of(col.id_scheme).pattern) if col.id_scheme else col
                for col in spec.columns
            ),
        )
        for name, spec in model.tables.items()
    }
    return replace(model, tables=tables)


def matches(scheme: IdScheme, value: str) -> bool:
    return re.fullmatch(scheme.pattern, value) is not None


def literal_prefix(scheme: IdScheme) -> str:
    """The fixed characters every id of the scheme starts with ('ASR_' for '^ASR_[0-9]{4,7}$',
    'CL' for '^CL[0-9]{3}$'); empty when the pattern opens with a class or group."""
    if "|" in scheme.pattern:  # alternatives: no one prefix
        return ""
    m = re.match(r"\^((?:[A-Za-z0-9_:-]|\\[-.:_])*)", scheme.pattern)
    prefix = m.group(1).replace("\\", "") if m else ""
    rest = scheme.pattern[m.end() :] if m else scheme.pattern
    if rest[:1] in ("?", "*", "{", "+") and prefix:  # the last literal is quantified
        prefix = prefix[:-1]
    return prefix


def citation_hint(schemes: IdSchemes | None) -> str:
    """How the prompt frame names the identifiers a model cites: the assertion and evidence
    schemes' fixed prefixes ('ASR_..., EV_...' under the paper's defaults), or their kinds
    where a scheme has no fixed prefix, so a domain's own schemes never read as the paper's."""
    if schemes is None:
        return "ASR_..., EV_..."
    words = []
    for kind, noun in (("assertions", "assertion ids"), ("evidence", "evidence ids")):
        prefix = literal_prefix(schemes.of(kind))
        words.append(f"{prefix}..." if prefix else noun)
    return ", ".join(words)


def in_own_ids(text: str, schemes: IdSchemes | None) -> str:
    """Text written in the paper's id formats (the response schema's 'assertion ids (ASR_*)')
    with each declared scheme's prefix in their place, so a prompt never teaches a domain with
    its own schemes the paper's ids; unchanged under the defaults."""
    if schemes is None:
        return text
    for kind, paper in (("assertions", "ASR_"), ("evidence", "EV_")):
        scheme = schemes.of(kind)
        if scheme.declared:
            prefix = literal_prefix(scheme)
            text = text.replace(f" ({paper}*)", f" ({prefix}*)" if prefix else "")
    return text

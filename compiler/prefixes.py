"""The CURIE prefix map (spec/declarations/prefixes.yaml) and the entity cross-references it governs.

A cross-reference is only useful if a consumer can resolve it, so every xref must use a
declared prefix and a local part of the shape that vocabulary issues (MONDO:0005148, not
MONDO:5148 or MONDO_0005148). Expansions must agree with the Biolink Model's prefix map, which
is what KGX and Translator tools resolve CURIEs with. The domain's own prefix (kgbench.<domain>)
must be declared in its LinkML schema and must not shadow a standard vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kgbench.errors import Location, SpecError

from .schema import suggest
from .tables import ErrorList
from .yamlfile import YamlDoc


@dataclass(frozen=True)
class PrefixDecl:
    prefix: str
    vocabulary: str
    expansion: str
    pattern: re.Pattern[str]


def load_prefix_map(path: Path, biolink_prefixes: dict[str, str]) -> dict[str, PrefixDecl]:
    """Read and check the prefix map; every problem names its line in the file."""
    from .declarations import load_declaration

    doc: YamlDoc = load_declaration(path, "PrefixMap")
    errors = ErrorList()
    out: dict[str, PrefixDecl] = {}
    for i, item in enumerate(doc.data["prefixes"]):
        prefix = item["prefix"]
        where = lambda key, i=i: doc.location(["prefixes", i, key], key)  # noqa: E731
        if prefix in out:
            errors.add(f"prefix '{prefix}' is declared twice", where("prefix"))
            continue
        try:
            pattern = re.compile(item["pattern"])
        except re.error as exc:
            errors.add(f"not a regular expression: {exc}", where("pattern"))
            continue
        known = biolink_prefixes.get(prefix)
        if known is not None and known != item["expansion"]:
            errors.add(
                f"the Biolink Model's prefix map expands '{prefix}' to '{known}', "
                f"not '{item['expansion']}'; expected the same expansion",
                where("expansion"),
            )
        example = str(item["example"])
        head, _, local = example.partition(":")
        if head != prefix or not pattern.fullmatch(local):
            errors.add(
                f"example '{example}' is not a {prefix} CURIE matching {item['pattern']}",
                where("example"),
            )
        out[prefix] = PrefixDecl(prefix, item["vocabulary"], item["expansion"], pattern)
    errors.raise_if_any()
    return out


def check_curie_prefix(
    name: str, schema_prefixes: dict[str, str], prefix_map: dict[str, PrefixDecl], where: Location
) -> str:
    """The domain's own CURIE prefix (declared `curie_prefix` or kgbench.<name>), checked."""
    if name in prefix_map:
        raise SpecError(
            f"curie_prefix '{name}' is a standard vocabulary's prefix; expected the domain's own "
            "(e.g. kgbench.<domain>)",
            where,
        )
    expansion = schema_prefixes.get(name)
    if not expansion:
        raise SpecError(
            f"the domain's CURIE prefix '{name}' is not declared in its schema; expected an "
            f"entry `{name}: https://...` under the schema's `prefixes`",
            where,
        )
    if not re.match(r"^https?://", expansion):
        raise SpecError(
            f"the schema expands '{name}' to '{expansion}'; expected an http(s) IRI", where
        )
    return name


def check_xref(xref: str, prefix_map: dict[str, PrefixDecl]) -> str | None:
    """Why `xref` is not acceptable (None when it is)."""
    prefix, sep, local = xref.partition(":")
    if not sep:
        return f"'{xref}' is not a CURIE; expected PREFIX:ID"
    decl = prefix_map.get(prefix)
    if decl is None:
        same = [p for p in prefix_map if p.lower() == prefix.lower()]  # prefixes are case-sensitive
        hint = f" (did you mean '{same[0]}'?)" if same else suggest(prefix, prefix_map)
        return (
            f"undeclared CURIE prefix '{prefix}' in '{xref}'"
            + hint
            + "; expected one of "
            + ", ".join(prefix_map)
            + " (spec/declarations/prefixes.yaml)"
        )
    if not decl.pattern.fullmatch(local):
        return (
            f"'{xref}' does not match the {prefix} pattern {decl.pattern.pattern} "
            f"({decl.vocabulary}); expected e.g. a local part like the declared example"
        )
    return None


def merge_xrefs(
    entities: Iterable,
    extra: Iterable[tuple[str, str, Location]],
    entity_location: Callable[[str], Location],
    prefix_map: dict[str, PrefixDecl],
    errors: ErrorList,
) -> list:
    """Entities with the xrefs table merged in; every xref checked against the prefix map."""
    by_entity: dict[str, list[tuple[str, Location]]] = {}
    for entity_id, xref, where in extra:
        by_entity.setdefault(entity_id, []).append((xref, where))
    known = set()
    out = []
    for e in entities:
        known.add(e.id)
        xrefs = list(e.xrefs)
        for x in e.xrefs:
            problem = check_xref(x, prefix_map)
            if problem:
                errors.add(problem, entity_location(e.id))
        seen = set(xrefs)
        for x, where in by_entity.get(e.id, ()):
            problem = check_xref(x, prefix_map)
            if problem:
                errors.add(problem, where)
            elif x in seen:
                errors.add(f"'{x}' is already an xref of {e.id}", where)
            else:
                seen.add(x)
                xrefs.append(x)
        out.append(e._replace(xrefs=tuple(xrefs)) if len(xrefs) != len(e.xrefs) else e)
    for entity_id, items in sorted(by_entity.items()):
        if entity_id not in known:
            errors.add(f"unknown entity '{entity_id}'" + suggest(entity_id, known), items[0][1])
    return out

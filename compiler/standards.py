"""Standards: the schema's Biolink terms checked, cross-references merged, knowledge levels
resolved, and the Biolink facts the exports need recorded.

What makes a valid graph interoperable; run after the tables are cross-checked and before the
semantic checks, which read the merged cross-references.
"""

from __future__ import annotations

from dataclasses import replace

from kgbench.errors import Location

from . import ir
from .prefixes import merge_xrefs
from .schema import SchemaModel
from .tables import ErrorList, Table
from .yamlfile import YamlDoc


def check_biolink(model: SchemaModel, doc: YamlDoc) -> tuple[str, ...]:
    """Biolink terms of the schema against the packaged model: errors raise, domain/range
    violations are warnings unless domain.yaml accepts them (and an acceptance that matches
    nothing is an error, so stale ones do not pile up)."""
    from .biolink import check

    found, warned = check(model)
    errors = ErrorList()
    for f in found:
        errors.add(f.message, f.location)
    errors.raise_if_any()
    accepted = ((doc.data.get("biolink") or {}).get("accepted_violations")) or []
    keys = {(a["predicate"], a["side"], a["class"]): i for i, a in enumerate(accepted)}
    used: set[int] = set()
    warnings = []
    for w in warned:
        if w.accepted_key in keys:
            used.add(keys[w.accepted_key])
            continue
        warnings.append(f"{w.location}: {w.message} [biolink, accept it in domain.yaml]")
    for key, i in keys.items():
        if i not in used:
            errors.add(
                f"accepted violation {key[0]} {key[1]} {key[2]} does not occur; expected a "
                "predicate, side and class the Biolink check actually flags",
                doc.location(["biolink", "accepted_violations", i], "accepted_violations"),
            )
    errors.raise_if_any()
    return tuple(warnings)


def apply_standards(
    domain: ir.Domain,
    model: SchemaModel,
    tables: dict[str, Table],
    prefix_map: dict,
    curie_prefix: str,
    errors: ErrorList,
) -> ir.Domain:
    """Cross-references merged and checked, Biolink facts the exports need recorded: what
    makes the graph interoperable rather than merely valid. (Knowledge levels are filled in
    by the cross-table pass, before the assertion records are made: `knowledge_level`.)"""
    from .biolink import load_model, package_version

    ent_rows: dict[str, int] = {}  # built on the first bad xref only

    def entity_xrefs(eid: str) -> Location:
        if not ent_rows:
            ent_rows.update(tables["entities"].row_index("id"))
        return tables["entities"].location(ent_rows[eid], "xrefs")

    extra, inexact = _xref_rows(domain, tables.get("xrefs"), errors)
    entities = merge_xrefs(
        domain.entities,
        extra,
        entity_xrefs,
        prefix_map,
        errors,
    )
    core = model.core
    bl = load_model()
    return replace(
        domain,
        entities=tuple(entities),
        curie_prefix=curie_prefix,
        curie_expansion=model.prefixes[curie_prefix],
        xref_prefixes=tuple(sorted((p, d.expansion) for p, d in prefix_map.items())),
        inexact_xrefs=tuple(inexact),
        biolink_version=bl.version,
        biolink_package=package_version(),
        assertion_class=model.assertion_class,
        graph_class=model.graph_class,
        source_type_categories=tuple(
            sorted(
                (name, info.get("biolink_category") or "biolink:Publication")
                for name, info in (core.get("source_types") or {}).items()
            )
        ),
        source_type_meanings=tuple(
            sorted(
                (name, info["meaning"])
                for name, info in (core.get("source_types") or {}).items()
                if info.get("meaning")
            )
        ),
        direction_biolink=tuple(sorted((core.get("direction_values") or {}).items())),
        entity_class_uri=core.get("class_uris", {}).get("Entity") or "biolink:NamedThing",
        table_patterns=tuple(
            (name, col.name, col.pattern)
            for name, spec in sorted(model.tables.items())
            for col in spec.columns
            if col.pattern
        ),
        evidence_class_uri=core.get("class_uris", {}).get("EvidenceSource")
        or "biolink:Publication",
    )


def _xref_rows(
    domain: ir.Domain, xref_table: Table | None, errors: ErrorList
) -> tuple[list[tuple[str, str, Location]], list[tuple[str, str, str, str]]]:
    """The xrefs table's rows: the cross-references it adds to entities (with their
    locations), and its inexact matches (entity, xref, match, match_source)."""
    extra: list[tuple[str, str, Location]] = []
    inexact: list[tuple[str, str, str, str]] = []
    if xref_table is None:
        return extra, inexact
    in_rows = {(e.id, x) for e in domain.entities for x in e.xrefs}
    for i, row in enumerate(xref_table.rows):
        match = row.get("match") or "exact"
        # a row naming an xref the entities table already has only qualifies its match
        # (vocabulary curation never edits the entity rows); an exact restatement is a
        # duplicate, which merge_xrefs reports
        if match == "exact" or (row["entity_id"], row["xref"]) not in in_rows:
            extra.append((row["entity_id"], row["xref"], xref_table.location(i, "xref")))
        if match != "exact":
            if not row.get("match_source"):
                errors.add(
                    f"a {match} match needs its match_source (who judged it, or the "
                    "authority's record of the term)",
                    xref_table.location(i, "match_source"),
                )
            inexact.append((row["entity_id"], row["xref"], match, row.get("match_source") or ""))
    return extra, inexact

"""Frontend: read a domain's spec and data, validate everything, return the frozen IR.

Order matters for good messages: declarations first (a broken domain.yaml explains itself
before anything else), then the LinkML schema, then each table on its own (types, patterns,
unique ids) and the cross-table rules (references, predicate classes, evidence links) in one
pass, so a file set with bad cells and dangling references reports both at once; then the
semantic checks of the whole graph (integrity, evidence), which need a well-formed graph to
reason about, then the expected counts.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from operator import itemgetter
from pathlib import Path
from typing import Any

from kgbench.errors import Location, SpecError
from kgbench.io import sha256_file
from kgbench.suggest import SuggestIndex, unknown

from . import biolink_entities, idschemes, ir
from .biolink import load_model
from .crosstable import check_graph_tables
from .declarations import as_mapping, load_declaration
from .evidence import EvidenceChecker, parse_provenance, parse_rules
from .jsonschemas import spec_fields
from .paths import (
    DECLARATIONS_DIR,
    SPEC_DIR,
    confined,
    display_path,
    repo_relative,
    resolve_domain_dir,
)
from .prefixes import check_curie_prefix, load_prefix_map, merge_xrefs
from .probe import check_probe
from .scenarios import check_scenario_rules
from .schema import SEMVER, SchemaModel, load_schema, suggest
from .tables import ErrorList, Table, read_table
from .yamlfile import YamlDoc, read_yaml

# Tables without which nothing else can be checked: a header with no rows is reported as the
# cause, instead of one "unknown assertion" error per evidence link.
NONEMPTY_TABLES = ("entities", "assertions")

TABLE_ORDER = (
    "entities",
    "evidence_sources",
    "assertions",
    "assertion_evidence",
    "intervention_classes",
    "xrefs",
)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a domain loads, as it was before afterwards.

    Loading allocates a few objects per row (typed cells, IR records, index entries) and
    frees almost none; each allocation burst triggers a collection that walks every live
    object, so on a 100,000-assertion domain the collector took a third of the time spent in
    the cross-table and evidence checks, to find nothing: the IR is made of tuples of
    strings and numbers, which hold no reference cycles.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_domain(domain: str | Path, derive: bool = True) -> ir.Domain:
    """Validate a domain and return its IR (`validate` and `compile` both run every check).

    `derive=False` (`kgbench validate`) skips what only the artifacts need and no check
    reads: each assertion's Biolink knowledge level and provenance label, and the hashes of
    the input files (the manifest's).
    """
    with _gc_paused():
        return _load_domain(domain, derive)


def _load_domain(domain: str | Path, derive: bool) -> ir.Domain:
    domain_dir = resolve_domain_dir(domain)
    domain_file = domain_dir / "domain.yaml"
    doc = load_declaration(domain_file, "DomainConfig")
    cfg = doc.data
    if cfg["name"] != domain_dir.name:
        raise SpecError(
            f"domain name '{cfg['name']}' must match its folder name '{domain_dir.name}'",
            doc.location(["name"], "name"),
        )
    if not SEMVER.match(str(cfg["version"])):  # the schema's pattern lets "1.0.0\n" through
        raise SpecError(
            f"domain version {cfg['version']!r} is not semantic; expected MAJOR.MINOR.PATCH",
            doc.location(["version"], "version"),
        )
    spec_version = _spec_version()

    schema_path = confined(domain_dir, cfg["schema"], doc.location(["schema"], "schema")).resolve()
    model = load_schema(
        schema_path, cfg["predicate_enum"], doc.location(["predicate_enum"], "predicate_enum")
    )
    biolink_warnings = _check_biolink(model, doc)
    id_schemes = idschemes.resolve(doc, model)
    model = idschemes.apply(model, id_schemes)
    prefix_map = load_prefix_map(DECLARATIONS_DIR / "prefixes.yaml", load_model().prefixes)
    curie_prefix = check_curie_prefix(
        cfg.get("curie_prefix") or f"kgbench.{cfg['name']}",
        model.prefixes,
        prefix_map,
        doc.location(["curie_prefix"] if cfg.get("curie_prefix") else ["name"], "curie_prefix"),
    )

    conditions_doc = load_declaration(
        _declared_path(domain_dir, doc, "conditions", DECLARATIONS_DIR / "conditions.yaml"),
        "ConditionSet",
    )
    metrics_doc = load_declaration(
        _declared_path(domain_dir, doc, "metrics", DECLARATIONS_DIR / "metrics.yaml"), "MetricSet"
    )
    scenarios_doc = (
        load_declaration(
            confined(
                domain_dir, cfg["scenarios"], doc.location(["scenarios"], "scenarios")
            ).resolve(),
            "ScenarioRules",
        )
        if cfg.get("scenarios")
        else None
    )
    conditions = _resolve_conditions(
        _conditions(conditions_doc), conditions_doc, model.predicates, cfg["name"]
    )
    metrics = _metrics(metrics_doc)

    errors = ErrorList()
    tables: dict[str, Table] = {}
    table_files = as_mapping(doc, "tables")
    for name in TABLE_ORDER:
        rel = table_files.get(name)
        if rel is None:
            continue
        spec = model.tables.get(name)
        if spec is None:  # pragma: no cover - the core schema always defines these tables
            raise SpecError(f"the schema defines no table '{name}'", doc.location(["tables", name]))
        path = confined(domain_dir, rel, doc.location(["tables", name], name))
        tables[name] = read_table(spec, path, errors)
        if name in NONEMPTY_TABLES and not len(tables[name]) and not errors.errors:
            errors.add(
                f"the table has a header but no rows; expected at least one {spec.class_name} record",
                Location(display_path(path), 2),
            )
    if any(name in tables and not len(tables[name]) for name in NONEMPTY_TABLES):
        errors.raise_if_any()  # nothing can be cross-checked against an empty table

    # `validate` runs exactly what `compile` runs, in the same order, so the two never
    # disagree on a domain; it only skips writing.
    probe_path = (domain_dir / cfg["probe"]).resolve() if cfg.get("probe") else None
    domain = _build(cfg, doc, model, tables, conditions, metrics, spec_version, errors, id_schemes)
    errors.raise_if_any()
    domain = _standards(domain, model, tables, prefix_map, curie_prefix, errors, derive)
    errors.raise_if_any()
    domain = biolink_entities.apply(domain, model, doc, errors)
    errors.raise_if_any()
    domain = replace(
        domain,
        schema_file=str(schema_path),
        evidence_rules=parse_rules(doc),
        provenance_rules=parse_provenance(conditions_doc),
        presentations=_presentations(conditions_doc),
        unparseable_policy=str(metrics_doc.data["unparseable_policy"]),
        evidence_levels=next(
            c.enum_values for c in model.tables["assertions"].columns if c.name == "evidence_level"
        ),
    )
    integrity_warnings = _check_integrity(domain, doc, tables)
    evidence_warnings: list[str] = []
    facts = EvidenceChecker(domain, tables, doc, errors, evidence_warnings).run(derive)
    errors.raise_if_any()
    domain = replace(
        domain,
        facts=facts,
        warnings=(*biolink_warnings, *integrity_warnings, *evidence_warnings),
    )
    _check_expected_counts(domain, doc)
    if scenarios_doc is not None:
        domain = replace(domain, scenario_rules=check_scenario_rules(scenarios_doc, domain, model))
    if probe_path is not None:
        categories = {e.id: e.category for e in domain.entities}
        probe = _probe(probe_path, categories, domain.entity_classes, domain.predicates)
        domain = replace(domain, probe=probe)

    if not derive:  # the input hashes are the manifest's: no check reads them
        return domain
    inputs = _input_files(
        domain_dir, doc, model, conditions_doc, metrics_doc, table_files, scenarios_doc, probe_path
    )
    return _replace_inputs(domain, inputs)


def _check_biolink(model: SchemaModel, doc: YamlDoc) -> tuple[str, ...]:
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


def _standards(
    domain: ir.Domain,
    model: SchemaModel,
    tables: dict[str, Table],
    prefix_map: dict,
    curie_prefix: str,
    errors: ErrorList,
    derive: bool = True,
) -> ir.Domain:
    """Cross-references merged and checked, knowledge levels resolved, Biolink facts the
    exports need recorded: what makes the graph interoperable rather than merely valid."""
    from .biolink import load_model, package_version
    from .knowledge_level import resolve

    ent_rows: dict[str, int] = {}  # built on the first bad xref only

    def entity_xrefs(eid: str) -> Location:
        if not ent_rows:
            ent_rows.update(_row_index(tables["entities"], "id"))
        return tables["entities"].location(ent_rows[eid], "xrefs")

    xref_table = tables.get("xrefs")
    extra = []
    inexact = []
    if xref_table is not None:
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
                inexact.append(
                    (row["entity_id"], row["xref"], match, row.get("match_source") or "")
                )
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
        assertions=resolve(domain.assertions, domain.supports, domain.evidence_sources, core)
        if derive
        else domain.assertions,
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


def _probe(probe_path: Path, categories, entity_classes, predicates) -> ir.ProbeSpec:
    return check_probe(
        probe_path,
        DECLARATIONS_DIR / "probe.yaml",
        categories,
        [c.name for c in entity_classes],
        predicates,
    )


def _check_integrity(domain: ir.Domain, doc: YamlDoc, tables: dict[str, Table]) -> tuple[str, ...]:
    """The semantic checks of `compiler.integrity`: errors, or warnings where downgraded."""
    from .integrity import check_graph

    settings = doc.data.get("integrity") or {}
    warn = set(settings.get("warn") or ())
    cycling = list(settings.get("cycling_predicates") or ())
    for i, name in enumerate(cycling):
        if name not in domain.predicate_by_name:
            raise SpecError(
                f"unknown predicate '{name}'"
                + suggest(name, domain.predicate_by_name)
                + "; expected one of "
                + ", ".join(domain.predicate_by_name),
                doc.location(["integrity", "cycling_predicates", i], "cycling_predicates"),
            )
    keys = {"entities": "id", "assertions": "assertion_id"}
    rows: dict[str, dict[str, int]] = {}  # built on the first finding only

    def locate(table: str, key: str, field: str) -> Location:
        if table not in rows:
            rows[table] = _row_index(tables[table], keys[table])
        return tables[table].location(rows[table][key], field or None)

    findings = check_graph(
        domain.entities,
        domain.assertions,
        domain.entity_classes,
        domain.predicates,
        locate,
        cycling,
        {name: t.arrow for name, t in tables.items() if t.arrow is not None},
    )
    errors = ErrorList()
    warnings: list[str] = []
    for f in findings:
        if f.check in warn:
            warnings.append(f"{f.location}: {f.message} [{f.check}, a warning in domain.yaml]")
        else:
            errors.add(f"{f.message} [{f.check}]", f.location)
    errors.raise_if_any()
    return tuple(warnings)


def _row_index(table: Table, key: str) -> dict[str, int]:
    return {value: i for i, value in enumerate(table.columns[key])}


def _by_key(item: tuple[Any, Any]) -> str:
    return str(item[0])


def _expected(cfg: dict[str, Any]) -> ir.ExpectedCounts:
    counts = cfg.get("expected_counts") or {}
    return ir.ExpectedCounts(
        # keyed by str: a hand-edited file may hold an int key (a TypeError found by make fuzz)
        entities=tuple(sorted((counts.get("entities") or {}).items(), key=_by_key)),
        assertions=tuple(sorted((counts.get("assertions") or {}).items(), key=_by_key)),
        evidence_sources=counts.get("evidence_sources"),
        study_level_evidence_sources=counts.get("study_level_evidence_sources"),
    )


@dataclass(frozen=True)
class DomainSummary:
    """What `kgbench validate` reports: a domain checked without building the IR."""

    name: str
    version: str
    entities: int
    assertions: int
    evidence_sources: int
    supports: int
    warnings: tuple[str, ...] = ()


def _spec_version() -> str:
    doc = read_yaml(SPEC_DIR / "kgbench.yaml")
    version = str(doc.data.get("version", ""))
    if not SEMVER.match(version):
        raise SpecError(
            f"spec version '{version}' is not semantic (expected MAJOR.MINOR.PATCH)",
            doc.location(["version"], "version"),
        )
    return version


def _declared_path(domain_dir: Path, doc: YamlDoc, key: str, default: Path) -> Path:
    """A declaration file named in domain.yaml: inside the domain folder or the spec folder."""
    value = doc.data.get(key)
    if not value:
        return default
    where = doc.location([key], key)
    return confined(
        domain_dir, value, where, allowed=(DECLARATIONS_DIR,), parent_refs=True
    ).resolve()


def _conditions(doc: YamlDoc) -> tuple[ir.Condition, ...]:
    out = []
    seen: set[str] = set()
    for i, c in enumerate(doc.data["conditions"]):
        if c["id"] in seen:
            raise SpecError(
                f"duplicate condition id '{c['id']}'", doc.location(["conditions", i, "id"], "id")
            )
        seen.add(c["id"])
        sections = []
        for j, s in enumerate(c.get("sections") or []):
            shape = s["shape"]
            chain_keys = ("max_length", "max_chains", "chain_order")
            for key in chain_keys if shape == "causal_chain" else ():
                if not s.get(key):
                    raise SpecError(
                        f"a causal_chain section needs {key} (the bounds and order of its chains)",
                        doc.location(["conditions", i, "sections", j], key),
                    )
            for key in chain_keys if shape != "causal_chain" else ():
                if s.get(key):
                    raise SpecError(
                        f"{key} applies to causal_chain sections only (this one is {shape})",
                        doc.location(["conditions", i, "sections", j, key], key),
                    )
            sections.append(
                ir.ContextSection(
                    name=s["name"],
                    title=s["title"],
                    shape=shape,
                    roles=tuple(s["roles"]),
                    anchor=s.get("anchor")
                    or ("population" if shape == "context_modifiers" else "candidates"),
                    validated_only=bool(s.get("validated_only")),
                    max_length=int(s.get("max_length") or 0),
                    max_chains=int(s.get("max_chains") or 0),
                    chain_order=tuple(s.get("chain_order") or ()),
                )
            )
        out.append(
            ir.Condition(
                id=c["id"],
                name=c["name"],
                title=c["title"],
                description=" ".join(str(c["description"]).split()),
                sections=tuple(sections),
                annotations=tuple(c.get("annotations") or ()),
                verify=_verify(doc, i, c),
                optional=bool(c.get("optional")),
            )
        )
    return tuple(_volume_matched(doc, i, c, out) for i, c in enumerate(doc.data["conditions"]))


def _volume_matched(
    doc: YamlDoc, i: int, c: dict[str, Any], conditions: list[ir.Condition]
) -> ir.Condition:
    """A volume-matched control shows its base's sections and annotations (so its block is
    the base's, plus padding); the base and the reference must be grounded retrieval
    conditions declared before it, and the control is optional (off by default)."""
    cond = conditions[i]
    v = c.get("volume_match")
    if v is None:
        return cond
    where = ["conditions", i, "volume_match"]
    if c.get("sections") or c.get("verify"):
        raise SpecError(
            "a volume-matched condition has no sections and no verify block of its own (it "
            "shows its base condition's sections, padded)",
            doc.location(["conditions", i], "volume_match"),
        )
    earlier = {x.id: x for x in conditions[:i]}
    for key in ("base", "reference"):
        other = earlier.get(v[key])
        if other is None or not other.grounded or other.volume_match is not None:
            raise SpecError(
                f"volume_match {key} '{v[key]}' is not a grounded retrieval condition declared "
                f"before {cond.id}; expected one of "
                + ", ".join(x.id for x in earlier.values() if x.grounded and not x.volume_match),
                doc.location([*where, key], key),
            )
    if v["base"] == v["reference"]:
        raise SpecError(
            f"volume_match base and reference are both {v['base']}; expected the condition to "
            "pad and a longer one to match",
            doc.location([*where, "reference"], "reference"),
        )
    if c.get("optional") is False:
        raise SpecError(
            "a volume-matched control is optional (off by default); expected optional: true "
            "or no optional key",
            doc.location(["conditions", i, "optional"], "optional"),
        )
    base = earlier[v["base"]]
    return replace(
        cond,
        sections=base.sections,
        annotations=base.annotations,
        optional=True,
        volume_match=ir.VolumeMatch(
            base=v["base"],
            reference=v["reference"],
            tolerance=float(v["tolerance"]),
            padding_title=" ".join(str(v["padding_title"]).split()),
        ),
    )


def _presentations(doc: YamlDoc) -> tuple[ir.Presentation, ...]:
    """The declared option presentations; a shift belongs to a cyclic shift only."""
    out = []
    seen: set[str] = set()
    for i, p in enumerate(doc.data.get("presentations") or ()):
        if p["id"] in seen or p["id"] == "original":
            what = (
                "declared twice; expected a unique id"
                if p["id"] in seen
                else "reserved for the original order; expected another id"
            )
            raise SpecError(
                f"presentation id '{p['id']}' is {what}",
                doc.location(["presentations", i, "id"], "id"),
            )
        seen.add(p["id"])
        shift = p.get("shift")
        if shift is not None and p["order"] != "cyclic_shift":
            raise SpecError(
                f"presentation '{p['id']}': `shift` applies to order cyclic_shift only, the "
                f"order here is {p['order']}; expected no shift (or order: cyclic_shift)",
                doc.location(["presentations", i, "shift"], "shift"),
            )
        if shift is None and p["order"] == "cyclic_shift":
            raise SpecError(
                f"presentation '{p['id']}': order cyclic_shift needs `shift`; expected the "
                "number of places the options move down (at least 1)",
                doc.location(["presentations", i, "order"], "order"),
            )
        out.append(
            ir.Presentation(
                id=p["id"],
                description=" ".join(str(p["description"]).split()),
                order=p["order"],
                shift=int(shift or 0),
                labels=p.get("labels") or "none",
            )
        )
    return tuple(out)


VERIFY_STEPS = ("generate", "revise", "answer")
# Prompts a verify block may add: the informed reviser's instruction (a declared variant).
VERIFY_OPTIONAL_PROMPTS = ("revise_informed",)


def _verify(doc: YamlDoc, i: int, c: dict[str, Any]) -> ir.Verify | None:
    """A verify-and-revise block; it replaces sections (the graph checks, it does not
    retrieve), so a condition declaring both is a located error."""
    v = c.get("verify")
    if v is None:
        return None
    if c.get("sections"):
        raise SpecError(
            "a verify-and-revise condition has no sections (the graph checks the model's "
            "triplets instead of retrieving a context)",
            doc.location(["conditions", i, "sections"], "sections"),
        )
    extra = [r for r in v["path_roles"] if r not in v["roles"]]
    if extra:
        raise SpecError(
            f"path role '{extra[0]}' is not one of the condition's roles ({', '.join(v['roles'])})",
            doc.location(["conditions", i, "verify", "path_roles"], "path_roles"),
        )
    return ir.Verify(
        max_triplets=int(v["max_triplets"]),
        max_path_length=int(v["max_path_length"]),
        max_revisions=int(v["max_revisions"]),
        fuzzy_threshold=float(v["fuzzy_threshold"]),
        max_name_length=int(v["max_name_length"]),
        roles=tuple(v["roles"]),
        path_roles=tuple(v["path_roles"]),
        prompts=tuple(
            (k, " ".join(str(v["prompts"][k]).split()))
            for k in (*VERIFY_STEPS, *VERIFY_OPTIONAL_PROMPTS)
            if k in v["prompts"]
        ),
        reviser=_reviser(doc, i, v),
    )


def _reviser(doc: YamlDoc, i: int, v: dict[str, Any]) -> str:
    """The declared reviser; the informed one needs its own instruction."""
    reviser = str(v.get("reviser") or "uninformed")
    if reviser == "informed" and "revise_informed" not in v["prompts"]:
        raise SpecError(
            "the informed reviser needs its instruction, prompts.revise_informed",
            doc.location(["conditions", i, "verify", "prompts"], "prompts"),
        )
    return reviser


def _resolve_conditions(
    conditions: tuple[ir.Condition, ...],
    doc: YamlDoc,
    predicates: tuple[ir.Predicate, ...],
    domain: str,
) -> tuple[ir.Condition, ...]:
    """Each section's predicates in this domain's vocabulary.

    Done here rather than in the Cypher backend so that a condition this domain cannot serve
    is a located error of `validate` as much as of `compile` (one pipeline, one message).
    """

    def types(roles: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p.name for p in predicates if p.role in roles)

    out = []
    for i, cond in enumerate(conditions):
        sections = []
        for sec in cond.sections:
            section_types = types(sec.roles)
            if not section_types:
                continue  # the domain has no predicate in these roles: nothing to retrieve
            sections.append(replace(sec, predicates=section_types))
        if cond.verify is not None:
            v = cond.verify
            vocabulary = types(v.roles)
            if not vocabulary:
                raise SpecError(
                    f"condition {cond.id}: domain '{domain}' has no predicate in the verify "
                    f"roles ({', '.join(v.roles)})",
                    doc.location(["conditions", i, "verify", "roles"], "roles"),
                )
            cond = replace(
                cond,
                verify=replace(v, predicates=vocabulary, path_predicates=types(v.path_roles)),
            )
        if cond.sections and not sections:
            raise SpecError(
                f"grounded condition {cond.id} exposes no predicate of domain '{domain}' "
                f"(roles {', '.join(r for s in cond.sections for r in s.roles)})",
                doc.location(["conditions", i, "sections"], "sections"),
            )
        out.append(replace(cond, sections=tuple(sections)))
    return tuple(out)


def _metrics(doc: YamlDoc) -> tuple[ir.Metric, ...]:
    out = []
    seen: set[str] = set()
    for i, m in enumerate(doc.data["metrics"]):
        if m["name"] in seen:
            raise SpecError(
                f"duplicate metric '{m['name']}'", doc.location(["metrics", i, "name"], "name")
            )
        seen.add(m["name"])
        for key, allowed in (
            ("response_field", spec_fields("response.yaml", "ModelResponse")),
            ("gold_field", spec_fields("scenario.yaml", "Gold")),
        ):
            if m[key] not in allowed:
                raise SpecError(
                    f"unknown {key.replace('_', ' ')} '{m[key]}'"
                    + suggest(m[key], allowed)
                    + "; expected one of "
                    + ", ".join(allowed),
                    doc.location(["metrics", i, key], key),
                )
        out.append(
            ir.Metric(
                name=m["name"],
                title=m["title"],
                kind=m["kind"],
                response_field=m["response_field"],
                gold_field=m["gold_field"],
                defined_when=m["defined_when"],
                higher_is_better=bool(m["higher_is_better"]),
                binary=bool(m.get("binary")),
                description=" ".join(str(m["description"]).split()),
                reading=_metric_reading(m, doc, i),
                claim_support=_claim_support(m, doc, i),
            )
        )
    return tuple(out)


CHAIN_KINDS = ("chain_precision", "chain_recall", "chain_f1")


def _metric_reading(m: dict[str, Any], doc: YamlDoc, i: int) -> str | None:
    """A chain kind's reading (required there, and meaningless elsewhere)."""
    reading = m.get("reading")
    if (m["kind"] in CHAIN_KINDS) != (reading is not None):
        raise SpecError(
            f"metric '{m['name']}': `reading` is required for the chain kinds "
            f"({', '.join(CHAIN_KINDS)}) and allowed for no other",
            doc.location(["metrics", i], "reading"),
        )
    return None if reading is None else str(reading)


def _claim_support(m: dict[str, Any], doc: YamlDoc, i: int) -> ir.ClaimSupport | None:
    """The unsupported_claims kind's compatibility table (required there, nowhere else)."""
    table = m.get("claim_support")
    if (m["kind"] == "unsupported_claims") != (table is not None):
        raise SpecError(
            f"metric '{m['name']}': `claim_support` is required for the unsupported_claims "
            "kind and allowed for no other",
            doc.location(["metrics", i], "claim_support"),
        )
    if table is None:
        return None
    kinds = []
    for k, kind in enumerate(table["kinds"]):
        words = tuple(" ".join(str(w).lower().split()) for w in kind["words"])
        if not all(words):
            raise SpecError(
                f"metric '{m['name']}': claim kind '{kind['name']}' has an empty word",
                doc.location(["metrics", i, "claim_support", "kinds", k, "words"], "words"),
            )
        kinds.append(
            ir.ClaimKind(
                name=str(kind["name"]),
                words=words,
                supported_by=tuple(
                    ir.ClaimSupporter(role=str(s["role"]), direction=s.get("direction"))
                    for s in kind["supported_by"]
                ),
            )
        )
    return ir.ClaimSupport(kinds=tuple(kinds))


def _build(
    cfg: dict[str, Any],
    doc: YamlDoc,
    model: SchemaModel,
    tables: dict[str, Table],
    conditions: tuple[ir.Condition, ...],
    metrics: tuple[ir.Metric, ...],
    spec_version: str,
    errors: ErrorList,
    id_schemes: idschemes.IdSchemes,
) -> ir.Domain:
    classes = {c.name: c for c in model.entity_classes}
    class_prefix = id_schemes.entities.class_prefix
    graph = check_graph_tables(model, tables, errors, class_prefix)
    entities, evidence, assertions, supports, category_of = graph

    classes_out = _intervention_classes(
        tables.get("intervention_classes"),
        category_of,
        classes,
        errors,
        {e.id: e.name for e in entities if classes[e.category].is_group},
    )

    prompt = cfg.get("prompt") or {}
    domain_phrase = prompt.get("domain_phrase") or cfg["title"].lower()
    return ir.Domain(
        name=cfg["name"],
        title=cfg["title"],
        version=cfg["version"],
        data_license=cfg.get("data_license") or "",
        description=" ".join(str(cfg.get("description") or "").split()),
        spec_version=spec_version,
        domain_phrase=domain_phrase,
        role_sentence=" ".join(
            str(
                prompt.get("role")
                or f"You are a clinical decision-support assistant for {domain_phrase}."
            ).split()
        ),
        entity_classes=model.entity_classes,
        predicates=model.predicates,
        entities=tuple(sorted(entities, key=itemgetter(0))),  # by id
        assertions=tuple(sorted(assertions, key=itemgetter(0))),  # by assertion_id
        evidence_sources=tuple(sorted(evidence, key=itemgetter(0))),  # by evidence_id
        supports=tuple(sorted(supports, key=itemgetter(0, 1))),  # assertion, evidence
        intervention_classes=classes_out,
        conditions=conditions,
        metrics=metrics,
        expected=_expected(cfg),
        id_schemes=id_schemes,
    )


def _intervention_classes(
    table: Table | None,
    category_of: dict[str, str],
    classes: dict[str, ir.EntityClass],
    errors: ErrorList,
    names: dict[str, str] | None = None,
) -> tuple[ir.InterventionClass, ...]:
    """MEMBER_OF rows: a class (an entity of an intervention_group class) and an intervention."""
    if table is None:
        return ()
    members: dict[str, list[str]] = {}
    links = {(row["class_id"], row["member_id"]) for row in table.rows}
    known = SuggestIndex(category_of)
    for i, row in enumerate(table.rows):
        cid, member = row["class_id"], row["member_id"]
        ok = True
        for ref, field, want_group in ((cid, "class_id", True), (member, "member_id", False)):
            cat = category_of.get(ref)
            if ref in category_of and cat is None:
                ok = False  # already reported on the entity's own row
            elif cat is None:
                errors.add(unknown("entity", ref, known), table.location(i, field))
                ok = False
            elif want_group and not classes[cat].is_group:
                errors.add(
                    f"'{ref}' is a {cat}, not an intervention class "
                    "(annotation intervention_group: true)",
                    table.location(i, field),
                )
                ok = False
            elif not want_group and (ref, cid) in links:
                errors.add(
                    f"membership cycle: '{ref}' is listed as a member of '{cid}', which is "
                    f"listed as a member of '{ref}'; classes cannot be members of classes",
                    table.location(i, field),
                )
                ok = False
            elif not want_group and not classes[cat].is_intervention:
                errors.add(
                    f"'{ref}' is a {cat}, which is not an intervention class "
                    "(annotation intervention: true); classes cannot be members of classes",
                    table.location(i, field),
                )
                ok = False
        if not ok:
            continue
        if member in members.setdefault(cid, []):
            errors.add(
                f"'{member}' is listed twice in class '{cid}'", table.location(i, "member_id")
            )
            continue
        members[cid].append(member)
    names = names or {}
    return tuple(
        ir.InterventionClass(cid, names.get(cid, cid), tuple(sorted(members[cid])))
        for cid in sorted(members)
    )


def _check_expected_counts(domain: ir.Domain, doc: YamlDoc) -> None:
    """The spec states its own scale; a table that drifts from it is an error."""
    _check_counts(
        domain.expected,
        doc,
        set(domain.class_by_name),
        set(domain.predicate_by_name),
        Counter(map(itemgetter(1), domain.entities)),  # by category
        Counter(map(itemgetter(2), domain.assertions)),  # by predicate
        len(domain.evidence_sources),
        sum(1 for e in domain.evidence_sources if e.study_level),
    )


def _check_counts(
    expected: ir.ExpectedCounts,
    doc: YamlDoc,
    class_names: set[str],
    predicate_names: set[str],
    ent: Counter,
    asr: Counter,
    n_evidence: int,
    study: int,
) -> None:
    problems: list[tuple[list, str]] = []
    for cls, n in expected.entities:
        if cls not in class_names:
            problems.append((["expected_counts", "entities", cls], f"unknown class '{cls}'"))
        elif ent[cls] != n:
            problems.append(
                (
                    ["expected_counts", "entities", cls],
                    f"expected {n} {cls} entities, the data has {ent[cls]}",
                )
            )
    for pred, n in expected.assertions:
        if pred not in predicate_names:
            problems.append(
                (["expected_counts", "assertions", pred], f"unknown predicate '{pred}'")
            )
        elif asr[pred] != n:
            problems.append(
                (
                    ["expected_counts", "assertions", pred],
                    f"expected {n} {pred} assertions, the data has {asr[pred]}",
                )
            )
    if expected.evidence_sources is not None and n_evidence != expected.evidence_sources:
        problems.append(
            (
                ["expected_counts", "evidence_sources"],
                f"expected {expected.evidence_sources} evidence sources, the data has {n_evidence}",
            )
        )
    if (
        expected.study_level_evidence_sources is not None
        and study != expected.study_level_evidence_sources
    ):
        problems.append(
            (
                ["expected_counts", "study_level_evidence_sources"],
                f"expected {expected.study_level_evidence_sources} study-level evidence sources, the data has {study}",
            )
        )
    if problems:
        errors = ErrorList()
        for path, message in problems:
            errors.add(message, doc.location(path, path[-1]))
        errors.raise_if_any()


def _input_files(
    domain_dir,
    doc,
    model,
    conditions_doc,
    metrics_doc,
    table_files,
    scenarios_doc=None,
    probe_path: Path | None = None,
) -> tuple[ir.InputFile, ...]:
    paths = {doc.path.resolve(), conditions_doc.path.resolve(), metrics_doc.path.resolve()}
    if scenarios_doc is not None:
        paths.add(scenarios_doc.path.resolve())
    if probe_path is not None:
        paths.add(probe_path)
    # every schema of the spec and every shared declaration (a new file there is a new input)
    paths |= {p.resolve() for p in SPEC_DIR.glob("*.yaml")}
    paths |= {p.resolve() for p in DECLARATIONS_DIR.glob("*.yaml")}
    paths |= set(model.imported_files)
    paths |= {(domain_dir / rel).resolve() for rel in table_files.values()}
    return tuple(
        ir.InputFile(repo_relative(p), sha256_file(p))
        for p in sorted(paths, key=lambda p: repo_relative(p))
    )


def _replace_inputs(domain: ir.Domain, inputs: tuple[ir.InputFile, ...]) -> ir.Domain:
    return replace(domain, inputs=inputs)


def describe(path: Path) -> str:
    return display_path(path)


__all__ = ["Location", "load_domain", "resolve_domain_dir"]

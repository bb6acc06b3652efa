"""Frontend: read a domain's spec and data, validate everything, return the frozen IR.

Order matters for good messages: declarations first (a broken domain.yaml explains itself
before anything else), then the LinkML schema, then each table on its own (types, patterns,
unique ids) and the cross-table rules (references, predicate classes, evidence links) in one
pass, so a file set with bad cells and dangling references reports both at once; then the
semantic checks of the whole graph (integrity, evidence), which need a well-formed graph to
reason about, then the expected counts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from operator import itemgetter
from pathlib import Path
from typing import Any

from kgbench.errors import Location, SpecError
from kgbench.gcpause import gc_paused
from kgbench.heap import give_back, sized_load
from kgbench.io import sha256_file
from kgbench.suggest import SuggestIndex, unknown

from . import biolink_entities, idschemes, ir
from .biolink import load_model
from .conditions import parse_conditions, parse_presentations, resolve_conditions
from .counts import check_expected_counts, expected_counts
from .crosstable import check_graph_tables
from .declarations import as_mapping, load_declaration
from .evidence import EvidenceChecker, parse_provenance, parse_rules
from .lazyrecords import sorted_records
from .metric_panel import parse_metrics
from .paths import (
    DECLARATIONS_DIR,
    SPEC_DIR,
    confined,
    display_path,
    repo_relative,
    resolve_domain_dir,
)
from .prefixes import check_curie_prefix, load_prefix_map
from .schema import SEMVER, SchemaModel, load_schema, suggest
from .standards import apply_standards, check_biolink
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


def load_domain(domain: str | Path, derive: bool = True) -> ir.Domain:
    """Validate a domain and return its IR (`validate` and `compile` both run every check).

    `derive=False` (`kgbench validate`) skips what only the artifacts need and no check
    reads: each assertion's Biolink knowledge level and provenance label, and the hashes of
    the input files (the manifest's).
    """
    with sized_load() as sized:
        with gc_paused():  # the load allocates per row and frees nothing: kgbench.gcpause
            result = _load_domain(domain, derive, sized)
        give_back()  # the tables, gone with the load (kgbench.heap)
    return result


def _load_domain(domain: str | Path, derive: bool, sized: Callable[[int], None]) -> ir.Domain:
    """The IR; `sized` is told the bytes of tables the load reads (`kgbench.heap.sized_load`:
    a small load keeps its freed pages for its next phase rather than hand them back)."""
    domain_dir = resolve_domain_dir(domain)
    doc = _domain_config(domain_dir)
    cfg = doc.data
    spec_version = _spec_version()

    schema_path = confined(domain_dir, cfg["schema"], doc.location(["schema"], "schema")).resolve()
    model = load_schema(
        schema_path, cfg["predicate_enum"], doc.location(["predicate_enum"], "predicate_enum")
    )
    biolink_warnings = check_biolink(model, doc)
    id_schemes = idschemes.resolve(doc, model)
    model = idschemes.apply(model, id_schemes)
    prefix_map = load_prefix_map(DECLARATIONS_DIR / "prefixes.yaml", load_model().prefixes)
    curie_prefix = check_curie_prefix(
        cfg.get("curie_prefix") or f"kgbench.{cfg['name']}",
        model.prefixes,
        prefix_map,
        doc.location(["curie_prefix"] if cfg.get("curie_prefix") else ["name"], "curie_prefix"),
    )

    conditions_doc, metrics_doc, scenarios_doc = _declarations(domain_dir, doc)
    conditions = resolve_conditions(
        parse_conditions(conditions_doc), conditions_doc, model.predicates, cfg["name"]
    )
    metrics = parse_metrics(metrics_doc)

    errors = ErrorList()
    table_files = as_mapping(doc, "tables")
    sized(_table_bytes(domain_dir, doc, table_files))
    tables = _read_tables(domain_dir, doc, model, table_files, errors)

    # `validate` runs exactly what `compile` runs, in the same order, so the two never
    # disagree on a domain; it only skips writing.
    probe_path = (domain_dir / cfg["probe"]).resolve() if cfg.get("probe") else None
    domain = _build(
        cfg, doc, model, tables, conditions, metrics, spec_version, errors, id_schemes, derive
    )
    errors.raise_if_any()
    domain = apply_standards(domain, model, tables, prefix_map, curie_prefix, errors)
    errors.raise_if_any()
    domain = biolink_entities.apply(domain, model, doc, errors)
    errors.raise_if_any()
    domain = replace(
        domain,
        schema_file=str(schema_path),
        evidence_rules=parse_rules(doc),
        provenance_rules=parse_provenance(conditions_doc),
        presentations=parse_presentations(conditions_doc),
        unparseable_policy=str(metrics_doc.data["unparseable_policy"]),
        evidence_levels=next(
            c.enum_values for c in model.tables["assertions"].columns if c.name == "evidence_level"
        ),
    )
    integrity_warnings = _check_integrity(domain, doc, tables)
    give_back()
    evidence_warnings: list[str] = []
    facts = EvidenceChecker(domain, tables, doc, errors, evidence_warnings).run(derive)
    give_back()
    errors.raise_if_any()
    domain = replace(
        domain,
        facts=facts,
        warnings=(*biolink_warnings, *integrity_warnings, *evidence_warnings),
    )
    check_expected_counts(domain, doc)
    if scenarios_doc is not None:
        from .scenarios import check_scenario_rules  # a domain without scenario rules: unread

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


def _domain_config(domain_dir: Path) -> YamlDoc:
    """domain.yaml, read against its schema, with the two checks the schema cannot make."""
    doc = load_declaration(domain_dir / "domain.yaml", "DomainConfig")
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
    return doc


def _declarations(domain_dir: Path, doc: YamlDoc) -> tuple[YamlDoc, YamlDoc, YamlDoc | None]:
    """The conditions, metrics and (optional) scenario-rule declarations domain.yaml names
    (the shared ones of the spec where it names none)."""
    cfg = doc.data
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
    return conditions_doc, metrics_doc, scenarios_doc


def _table_bytes(domain_dir: Path, doc: YamlDoc, table_files: dict[str, Any]) -> int:
    """How many bytes the declared tables hold together (0 for one that cannot be read, or
    is outside the domain: `_read_tables` reports why, in its order)."""
    total = 0
    for name in TABLE_ORDER:
        rel = table_files.get(name)
        if rel is None:
            continue
        with contextlib.suppress(SpecError, OSError):
            path = confined(domain_dir, rel, doc.location(["tables", name], name))
            total += path.stat().st_size
    return total


def _read_tables(
    domain_dir: Path,
    doc: YamlDoc,
    model: SchemaModel,
    table_files: dict[str, Any],
    errors: ErrorList,
) -> dict[str, Table]:
    """Each declared table on its own (types, patterns, unique ids), errors gathered; raises
    at once only when a table nothing can be checked without has no rows."""
    tables: dict[str, Table] = {}
    for name in TABLE_ORDER:
        rel = table_files.get(name)
        if rel is None:
            continue
        spec = model.tables.get(name)
        if spec is None:  # pragma: no cover - the core schema always defines these tables
            raise SpecError(f"the schema defines no table '{name}'", doc.location(["tables", name]))
        path = confined(domain_dir, rel, doc.location(["tables", name], name))
        tables[name] = read_table(spec, path, errors)
        give_back()  # the parse's buffers and raw columns (kgbench.heap)
        if name in NONEMPTY_TABLES and not len(tables[name]) and not errors.errors:
            errors.add(
                f"the table has a header but no rows; expected at least one {spec.class_name} record",
                Location(display_path(path), 2),
            )
    if any(name in tables and not len(tables[name]) for name in NONEMPTY_TABLES):
        errors.raise_if_any()  # nothing can be cross-checked against an empty table
    return tables


def _probe(probe_path: Path, categories, entity_classes, predicates) -> ir.ProbeSpec:
    from .probe import check_probe  # a domain without a probe: unread

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
            rows[table] = tables[table].row_index(keys[table])
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
    derive: bool = True,
) -> ir.Domain:
    """The IR of the rows that pass the cross-table rules. Without `derive` (`validate`) the
    assertions and evidence links stay `lazyrecords.Records`, made only if a check reads
    them one by one; `compile` gets tuples."""
    classes = {c.name: c for c in model.entity_classes}
    class_prefix = id_schemes.entities.class_prefix
    lazy = not derive
    # knowledge levels are filled in as the assertion records are made (derive only)
    graph = check_graph_tables(
        model, tables, errors, class_prefix, model.core if derive else None, lazy=lazy
    )
    give_back()  # the tables' Python columns (kgbench.heap)
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
        assertions=sorted_records(assertions, itemgetter(0), lazy),  # by assertion_id
        evidence_sources=tuple(sorted(evidence, key=itemgetter(0))),  # by evidence_id
        supports=sorted_records(supports, itemgetter(0, 1), lazy),  # assertion, evidence
        intervention_classes=classes_out,
        conditions=conditions,
        metrics=metrics,
        expected=expected_counts(cfg),
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


__all__ = ["Location", "load_domain", "resolve_domain_dir"]

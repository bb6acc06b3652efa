"""Read a domain's LinkML schema with LinkML's own SchemaView and derive what the compiler needs.

From the schema we take: the entity classes (descendants of the core `Entity`), the predicate
enum with its annotations, and one column specification per data table, derived from the
induced slots of the classes the core marks with a `table` annotation. The table
specifications are what the fast row validator runs; nothing about columns is hand-written.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgbench.errors import Location, SpecError
from kgbench.suggest import suggest

from .ir import EntityClass, Predicate
from .paths import PROJECT_ROOT, SPEC_DIR, display_path, shipped_imports
from .yamlfile import read_yaml, read_yaml_once

IDENTIFIER = re.compile(r"^[A-Z][A-Za-z0-9]*$")
PREDICATE_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
# \Z, not $: `$` also matches before a final newline, so "1.0.2\n" would pass; [0-9], not
# \d, which also matches other scripts' digits ("1.0.２").
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")
# A string column without a `max_length` annotation gets this bound: no text reaches Neo4j's
# index (about 8 kB per value) or the scorer's name matching (4,096 characters) unchecked.
DEFAULT_MAX_LENGTH = 2000
RELATION_CLASSES = ("mechanistic", "causal", "associative", "therapeutic", "safety", "modifier")
ROLES = (
    "mechanistic",
    "causal",
    "associative",
    "therapeutic",
    "adverse_effect",
    "contraindication",
    "interaction",
    "modifier",
    "null_effect",
)
# How a class-level claim (an assertion whose subject is an intervention class) reaches the
# class's members: always (every member: a shared target, a class adverse effect), only for
# classes the domain declares homogeneous (the default: outcome claims), or never.
MEMBER_INHERITANCE = ("always", "homogeneous", "never")


@dataclass(frozen=True)
class Column:
    """One CSV column, derived from a LinkML slot."""

    name: str
    range: str  # string | integer | float | boolean | <enum name>
    required: bool
    multivalued: bool
    identifier: bool
    pattern: str | None
    minimum: float | None
    maximum: float | None
    enum_values: tuple[str, ...]
    references: str | None  # the class a value names (`range: Entity`), None for plain values
    max_length: int | None = None  # characters per value (per item of a list)
    single_line: bool = False  # no tab, newline or other control character at all
    # entities | assertions | evidence: the id scheme whose pattern the column follows (the
    # domain may declare its own in domain.yaml `id_schemes`; `pattern` is the default)
    id_scheme: str | None = None


@dataclass(frozen=True)
class TableSpec:
    table: str
    class_name: str
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class SchemaModel:
    name: str
    version: str
    entity_classes: tuple[EntityClass, ...]
    predicates: tuple[Predicate, ...]
    tables: dict[str, TableSpec]
    imported_files: tuple[Path, ...]
    # The domain's LinkML-native narrowing: its assertion class (predicate -> its enum) and
    # its graph container (the tree root the LinkML JSON export instantiates).
    assertion_class: str = ""
    graph_class: str = ""
    # prefix -> expansion, from the schema and everything it imports
    prefixes: dict[str, str] = field(default_factory=dict)
    # The Biolink side of the core: the class_uri of Entity, Assertion and EvidenceSource,
    # SourceType's per-value annotations (biolink_category, knowledge_level, agent_type,
    # precedence), the values of KnowledgeLevel and AgentType, Direction's biolink_value, and
    # the defaults of an assertion without evidence.
    core: dict[str, Any] = field(default_factory=dict)
    # "classes.Drug" / "enums.CardioPredicate" -> the schema file that declares it (messages)
    element_files: dict[str, str] = field(default_factory=dict)


def _ann(element, key: str) -> str | None:
    anns = getattr(element, "annotations", None) or {}
    if key not in anns:
        return None
    value = anns[key].value
    return None if value is None else str(value)


def load_schema(path: Path, predicate_enum: str, where: Location) -> SchemaModel:
    """Load a domain schema (through the on-disk cache when its files are unchanged)."""
    from .cache import cached

    if not path.exists():
        raise SpecError("schema file not found", where)
    # a directory, an alias bomb or a duplicate key is refused before hashing (parsed once:
    # Biolink's findings read the same document for their lines, `biolink._Locator`)
    read_yaml_once(path)
    spec_files = sorted(SPEC_DIR.glob("*.yaml"))

    def build():
        model = _load_schema(path, predicate_enum, where)
        return _to_json(model), model.imported_files

    # "|readings": the model's core gained the Biolink readings and the event classes
    extra = f"{predicate_enum}|readings-events"
    return _from_json(cached("schema-model", [path, *spec_files], extra, build))


def _to_json(model: SchemaModel) -> dict:
    data = asdict(model)
    data["imported_files"] = [str(p) for p in model.imported_files]
    return data


def _from_json(data: dict) -> SchemaModel:
    return SchemaModel(
        name=data["name"],
        version=data["version"],
        entity_classes=tuple(EntityClass(**c) for c in data["entity_classes"]),
        predicates=tuple(
            Predicate(
                **{
                    **p,
                    "subject_classes": tuple(p["subject_classes"]),
                    "object_classes": tuple(p["object_classes"]),
                }
            )
            for p in data["predicates"]
        ),
        tables={
            name: TableSpec(
                t["table"],
                t["class_name"],
                tuple(
                    Column(**{**c, "enum_values": tuple(c["enum_values"])}) for c in t["columns"]
                ),
            )
            for name, t in data["tables"].items()
        },
        imported_files=tuple(Path(p) for p in data["imported_files"]),
        assertion_class=data["assertion_class"],
        graph_class=data["graph_class"],
        prefixes=data["prefixes"],
        core=data["core"],
        element_files=data["element_files"],
    )


def _load_schema(path: Path, predicate_enum: str, where: Location) -> SchemaModel:
    """Load a domain schema with SchemaView; every problem is a SpecError on the schema file."""
    from linkml_runtime.utils.schemaview import SchemaView

    shown = display_path(path)
    if not path.exists():
        raise SpecError("schema file not found", where)
    doc = read_yaml(path)  # malformed YAML gets a message with its line before LinkML sees it
    try:
        view = SchemaView(str(path), importmap=shipped_imports(path, doc.data))
        all_classes = view.all_classes()
        all_enums = view.all_enums()
    except FileNotFoundError as exc:
        raise SpecError(
            f"an imported schema was not found: {exc.filename}", Location(shown)
        ) from None
    except Exception as exc:  # LinkML raises many types for malformed schemas
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SpecError(f"LinkML could not load the schema: {first}", Location(shown)) from None

    schema = view.schema
    version = str(schema.version or "")
    if not SEMVER.match(version):
        raise SpecError(
            f"schema version '{version}' is not semantic (expected MAJOR.MINOR.PATCH, e.g. 1.0.0)",
            Location(shown, field="version"),
        )
    if "Entity" not in all_classes:
        raise SpecError(
            "the schema must import the core (../../spec/kg)", Location(shown, field="imports")
        )

    entity_classes = _entity_classes(view, shown)
    class_names = {c.name for c in entity_classes}
    if predicate_enum not in all_enums:
        raise SpecError(
            f"predicate enum '{predicate_enum}' is not declared in the schema"
            + suggest(predicate_enum, all_enums),
            where,
        )
    predicates = _predicates(all_enums[predicate_enum], class_names, shown)
    tables = _tables(view, shown)
    imported = tuple(
        sorted({Path(p) for p in _import_files(view, path)}, key=lambda p: p.as_posix())
    )
    assertion_class, graph_class = _narrowing(view, predicate_enum, shown)
    return SchemaModel(
        schema.name,
        version,
        entity_classes,
        predicates,
        tables,
        imported,
        assertion_class=assertion_class,
        graph_class=graph_class,
        prefixes={str(k): str(v) for k, v in sorted(view.namespaces().items())},
        core=_core(view)
        | {
            "predicate_enum": predicate_enum,
            "biolink_readings": _biolink_readings(all_enums[predicate_enum]),
            "event_classes": sorted(
                c for c in class_names if (_ann(view.get_class(c), "event") or "").lower() == "true"
            ),
        },
        element_files=_element_files(view, path),
    )


def _biolink_readings(enum) -> dict[str, dict[str, str]]:
    """Each predicate's conditional Biolink readings as declared (compiler/biolink_readings.py)."""
    from .biolink_readings import CONDITIONS

    out = {}
    for name, pv in sorted(enum.permissible_values.items()):
        declared = {ann: _ann(pv, ann) for ann, _ in CONDITIONS if _ann(pv, ann)}
        if declared:
            out[name] = declared
    return out


def _narrowing(view, predicate_enum: str, shown: str) -> tuple[str, str]:
    """The domain's assertion class (predicate narrowed to its enum) and its graph container.

    LinkML's own validators and generated models only know a domain's predicates through
    this narrowing; without it they would accept any predicate string.
    """
    narrowing = sorted(
        name
        for name in view.class_descendants("Assertion", reflexive=False)
        if view.induced_slot("predicate", name).range == predicate_enum
    )
    if len(narrowing) != 1:
        found = f" (found {', '.join(narrowing)})" if narrowing else ""
        raise SpecError(
            f"expected exactly one assertion class narrowing the predicate to '{predicate_enum}'"
            f"{found}: declare a class with `is_a: Assertion` and "
            f"`slot_usage: {{predicate: {{range: {predicate_enum}}}}}`",
            Location(shown, field="classes"),
        )
    assertion_class = narrowing[0]
    roots = sorted(
        name
        for name in view.class_descendants("KnowledgeGraph", reflexive=False)
        if view.get_class(name).tree_root
        and view.induced_slot("assertions", name).range == assertion_class
    )
    if len(roots) != 1:
        raise SpecError(
            f"expected exactly one graph container for '{assertion_class}': declare a class "
            f"with `is_a: KnowledgeGraph`, `tree_root: true` and "
            f"`slot_usage: {{assertions: {{range: {assertion_class}}}}}`",
            Location(shown, field="classes"),
        )
    return assertion_class, roots[0]


def _core(view) -> dict[str, Any]:
    """What the core schema declares about Biolink and provenance (see SchemaModel.core)."""
    enums = view.all_enums()

    def values(enum: str) -> list[str]:
        return list(enums[enum].permissible_values) if enum in enums else []

    source_types = {}
    if "SourceType" in enums:
        for name, pv in enums["SourceType"].permissible_values.items():
            source_types[name] = {
                key: _ann(pv, key)
                for key in ("biolink_category", "knowledge_level", "agent_type", "precedence")
            } | {"meaning": pv.meaning}
    direction = {}
    if "Direction" in enums:
        for name, pv in enums["Direction"].permissible_values.items():
            if _ann(pv, "biolink_value"):
                direction[name] = _ann(pv, "biolink_value")
    slots = view.all_slots()
    return {
        "class_uris": {
            name: view.get_class(name).class_uri
            for name in ("Entity", "Assertion", "EvidenceSource")
            if name in view.all_classes()
        },
        "source_types": source_types,
        "knowledge_levels": values("KnowledgeLevel"),
        "agent_types": values("AgentType"),
        "direction_values": direction,
        "knowledge_level_without_evidence": _ann(
            slots["knowledge_level"], "default_without_evidence"
        )
        if "knowledge_level" in slots
        else None,
        "agent_type_without_evidence": _ann(slots["agent_type"], "default_without_evidence")
        if "agent_type" in slots
        else None,
    }


def _element_files(view, root: Path) -> dict[str, str]:
    """Which schema file declares each class, slot and enum (error messages name that file)."""
    by_id = {}
    for name, schema in view.schema_map.items():
        source = getattr(schema, "source_file", None)
        if not source or ":" in name:
            continue
        p = Path(source)
        if not p.is_absolute():
            p = (Path.cwd() / p) if (Path.cwd() / p).exists() else (root.parent / p.name)
        by_id[str(schema.id)] = str(p.resolve())
    out = {}
    for kind, elements in (
        ("classes", view.all_classes()),
        ("enums", view.all_enums()),
        ("slots", view.all_slots()),
    ):
        for name, element in elements.items():
            file = by_id.get(str(element.from_schema or ""))
            if file:
                out[f"{kind}.{name}"] = file
    return out


def _entity_classes(view, shown: str) -> tuple[EntityClass, ...]:
    out = []
    prefixes: dict[str, str] = {}
    for name in sorted(view.class_descendants("Entity", reflexive=False)):
        cls = view.get_class(name)
        if cls.abstract:
            continue
        loc = Location(shown, field=f"classes.{name}")
        if not IDENTIFIER.match(name):
            raise SpecError(f"class name '{name}' must be CamelCase letters and digits", loc)
        prefix = _ann(cls, "id_prefix")
        if not prefix or not re.fullmatch(r"[A-Z]{2,5}", prefix):
            raise SpecError(
                f"class '{name}' needs an annotation id_prefix of 2-5 capital letters, got {prefix!r}",
                loc,
            )
        if prefix in prefixes:
            raise SpecError(
                f"id_prefix '{prefix}' of class '{name}' is already used by '{prefixes[prefix]}'",
                loc,
            )
        prefixes[prefix] = name
        uri = cls.class_uri or ""
        if not uri.startswith("biolink:"):
            raise SpecError(
                f"class '{name}' needs class_uri mapping it to a Biolink Model class (biolink:...)",
                loc,
            )
        out.append(
            EntityClass(
                name=name,
                biolink=uri,
                id_prefix=prefix,
                is_intervention=(_ann(cls, "intervention") or "").lower() == "true",
                description=cls.description or "",
                is_group=(_ann(cls, "intervention_group") or "").lower() == "true",
                is_population=(_ann(cls, "population") or "").lower() == "true",
            )
        )
    if not out:
        raise SpecError("the schema declares no entity classes (is_a: Entity)", Location(shown))
    return tuple(out)


def _predicates(enum, class_names: set[str], shown: str) -> tuple[Predicate, ...]:
    out = []
    for name, pv in sorted(enum.permissible_values.items()):
        loc = Location(shown, field=f"enums.{enum.name}.{name}")
        if not PREDICATE_NAME.match(name):
            raise SpecError(f"predicate '{name}' must be UPPER_SNAKE_CASE", loc)
        if name in {"HAS_SUBJECT", "HAS_OBJECT", "SUPPORTS"}:
            raise SpecError(f"predicate '{name}' is reserved by the reified-assertion layer", loc)
        sides = {}
        for side in ("subject_classes", "object_classes"):
            raw = _ann(pv, side)
            if not raw:
                raise SpecError(f"predicate '{name}' needs the annotation {side}", loc)
            classes = tuple(raw.split())
            for c in classes:
                if c not in class_names:
                    raise SpecError(
                        f"predicate '{name}' {side} names unknown class '{c}'"
                        + suggest(c, class_names),
                        loc,
                    )
            sides[side] = classes
        relation_class = _ann(pv, "relation_class")
        if relation_class not in RELATION_CLASSES:
            raise SpecError(
                f"predicate '{name}' relation_class {relation_class!r} is not one of "
                + ", ".join(RELATION_CLASSES),
                loc,
            )
        role = _ann(pv, "role") or _default_role(name, relation_class)
        if role not in ROLES:
            raise SpecError(
                f"predicate '{name}' needs a role annotation, one of {', '.join(ROLES)}; got {role!r}",
                loc,
            )
        direction = _ann(pv, "direction")
        if direction not in (None, "increase", "decrease"):
            raise SpecError(f"predicate '{name}' direction must be increase or decrease", loc)
        inherit = _ann(pv, "members_inherit") or "homogeneous"
        if inherit not in MEMBER_INHERITANCE:
            raise SpecError(
                f"predicate '{name}' members_inherit must be one of "
                f"{', '.join(MEMBER_INHERITANCE)}; got {inherit!r}",
                loc,
            )
        if not (pv.meaning or "").startswith("biolink:"):
            raise SpecError(
                f"predicate '{name}' needs meaning: a Biolink predicate (biolink:...)", loc
            )
        out.append(
            Predicate(
                name=name,
                biolink=pv.meaning,
                subject_classes=sides["subject_classes"],
                object_classes=sides["object_classes"],
                relation_class=relation_class,
                role=role,
                direction=direction,
                biolink_qualifier=_ann(pv, "biolink_qualifier"),
                description=pv.description or "",
                members_inherit=inherit,
                biolink_inverse=(_ann(pv, "biolink_inverse") or "").lower() == "true",
                biolink_negated=(_ann(pv, "biolink_negated") or "").lower() == "true",
            )
        )
    if not out:
        raise SpecError(f"predicate enum '{enum.name}' has no values", Location(shown))
    return tuple(out)


def _default_role(name: str, relation_class: str) -> str | None:
    """Safety predicates must say which safety role they play; others default to their class."""
    if relation_class != "safety":
        return relation_class
    if "ADVERSE" in name:
        return "adverse_effect"
    if "CONTRAINDICATED" in name:
        return "contraindication"
    return None


def _tables(view, shown: str) -> dict[str, TableSpec]:
    tables: dict[str, TableSpec] = {}
    enums = view.all_enums()
    for name in sorted(view.all_classes()):
        cls = view.get_class(name)
        table = _ann(cls, "table")
        if not table:
            continue
        columns = []
        classes = view.all_classes()
        for slot in view.class_induced_slots(name):
            rng = slot.range or "string"
            references = rng if rng in classes else None
            enum_values: tuple[str, ...] = ()
            if rng in enums:
                enum_values = tuple(enums[rng].permissible_values)
            elif rng not in ("string", "integer", "float", "boolean"):
                rng = "string"
            is_text = rng == "string" and not enum_values
            max_length = _ann(slot, "max_length")
            if max_length is not None and not re.fullmatch(r"[1-9][0-9]{0,5}", max_length):
                raise SpecError(
                    f"slot '{slot.name}' annotation max_length must be a positive integer, "
                    f"got {max_length!r}",
                    Location(shown, field=f"slots.{slot.name}"),
                )
            columns.append(
                Column(
                    name=slot.name,
                    range=rng,
                    required=bool(slot.required or slot.identifier),
                    multivalued=bool(slot.multivalued),
                    identifier=bool(slot.identifier),
                    # the tables write the local part of an identifier (DRG_0001); the
                    # schema's own pattern describes the CURIE of the LinkML JSON form
                    pattern=_ann(slot, "table_pattern") or slot.pattern,
                    minimum=slot.minimum_value,
                    maximum=slot.maximum_value,
                    enum_values=enum_values,
                    references=references,
                    max_length=int(max_length)
                    if max_length
                    else (DEFAULT_MAX_LENGTH if is_text else None),
                    single_line=(_ann(slot, "single_line") or "").lower() == "true"
                    or bool(slot.identifier or slot.pattern),
                    id_scheme=_ann(slot, "id_scheme"),
                )
            )
        tables[table] = TableSpec(table, name, tuple(columns))
    return tables


def _import_files(view, root: Path) -> list[Path]:
    """Local schema files in the import closure (for input hashing)."""
    files = [root.resolve()]
    for name in view.imports_closure():
        src = view.schema_map.get(name)
        if src is None or not getattr(src, "source_file", None):
            continue
        p = Path(src.source_file).resolve()
        local = p.is_relative_to(PROJECT_ROOT) and "site-packages" not in p.parts
        if p.exists() and (local or p.is_relative_to(SPEC_DIR.resolve())):
            files.append(p)
    return files

"""Read a domain's LinkML schema with LinkML's own SchemaView and derive what the compiler needs.

From the schema we take: the entity classes (descendants of the core `Entity`), the predicate
enum with its annotations, and one column specification per data table, derived from the
induced slots of the classes the core marks with a `table` annotation. The table
specifications are what the fast row validator runs; nothing about columns is hand-written.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path

from kgbench.errors import Location, SpecError
from kgbench.suggest import suggest

from .ir import EntityClass, Predicate
from .paths import REPO_ROOT, display_path
from .yamlfile import read_yaml

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
    references: str | None  # "Entity" when the value must be an entity id
    max_length: int | None = None  # characters per value (per item of a list)
    single_line: bool = False  # no tab, newline or other control character at all


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
    read_yaml(path)  # a directory, an alias bomb or a duplicate key is refused before hashing
    spec_files = sorted((REPO_ROOT / "spec").glob("*.yaml"))

    def build():
        model = _load_schema(path, predicate_enum, where)
        return _to_json(model), model.imported_files

    return _from_json(cached("schema-model", [path, *spec_files], predicate_enum, build))


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
    )


def _load_schema(path: Path, predicate_enum: str, where: Location) -> SchemaModel:
    """Load a domain schema with SchemaView; every problem is a SpecError on the schema file."""
    from linkml_runtime.utils.schemaview import SchemaView

    shown = display_path(path)
    if not path.exists():
        raise SpecError("schema file not found", where)
    read_yaml(path)  # malformed YAML gets a message with its line before LinkML sees it
    try:
        view = SchemaView(str(path))
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
    return SchemaModel(schema.name, version, entity_classes, predicates, tables, imported)


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
        for slot in view.class_induced_slots(name):
            rng = slot.range or "string"
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
                    pattern=slot.pattern,
                    minimum=slot.minimum_value,
                    maximum=slot.maximum_value,
                    enum_values=enum_values,
                    references=_ann(slot, "references"),
                    max_length=int(max_length)
                    if max_length
                    else (DEFAULT_MAX_LENGTH if is_text else None),
                    single_line=(_ann(slot, "single_line") or "").lower() == "true"
                    or bool(slot.identifier or slot.pattern),
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
        if p.exists() and p.is_relative_to(REPO_ROOT) and "site-packages" not in p.parts:
            files.append(p)
    return files

"""The domain's Biolink terms, checked against the Biolink Model of the pinned PyPI package.

Every `biolink:` term a domain uses (class_uri of its classes, the `meaning` of its predicates,
their qualifiers, the Biolink category of each evidence source type, the knowledge-level and
agent-type values, the slot_uri and mappings of the core slots) is looked up in the YAML the
`biolink-model` wheel ships, read offline, so a compile never depends on the network and the
check always means the same pinned version (reported in the manifest).

- an unknown term, a deprecated one, a category that is abstract or a mixin, a term of the
  wrong kind (a class used as a predicate), a non-canonical predicate, a qualifier value
  outside the qualifier's enum: an **error**;
- a class outside a predicate's Biolink domain or range: a **warning**, which a domain may
  declare accepted in domain.yaml (`biolink.accepted_violations`, with a note saying why).

The model is reduced to the few facts these checks need and cached like other derived data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError

from .biolink_readings import CONDITIONS, DEFAULT, Reading, readings_of, sign_conflicts
from .ir import EntityClass, Predicate
from .schema import SchemaModel, suggest
from .yamlfile import YamlDoc, read_yaml_once

DISTRIBUTION = "biolink-model"
MODEL_FILE = "biolink_model/schema/biolink_model.yaml"
PREFIX_MAP_FILE = "biolink_model/prefixmaps/biolink-model-prefix-map.json"
# Edge properties the KGX export writes; the packaged model must know them.
EXPORT_SLOTS = (
    "knowledge_level",
    "agent_type",
    "primary_knowledge_source",
    "has_evidence",
    "publications",
    "negated",
    "has_confidence_score",
    "population_context_qualifier",
    "object_direction_qualifier",
    "object_aspect_qualifier",
    "qualified_predicate",
    "response_context_qualifier",
    "xref",
    "synonym",
    "category",
    "predicate",
    "subject",
    "object",
)


# Node properties the KGX export writes (a class requiring another one cannot be a category).
EXPORT_NODE_SLOTS = ("id", "category", "name", "description", "synonym", "xref", "publication_type")


@dataclass(frozen=True)
class BiolinkModel:
    """The facts of the Biolink Model the checks need (element names as Biolink writes them)."""

    version: str
    classes: dict[str, dict[str, Any]]
    slots: dict[str, dict[str, Any]]
    enums: dict[str, list[str]]
    prefixes: dict[str, str]
    class_by_curie: dict[str, str] = field(default_factory=dict)

    def class_name(self, curie: str) -> str | None:
        return self.class_by_curie.get(curie)

    def slot_name(self, curie: str) -> str | None:
        name = curie.removeprefix("biolink:").replace("_", " ")
        return name if name in self.slots else None

    def class_ancestors(self, name: str) -> set[str]:
        """The class, its is_a ancestors and every mixin along the way."""
        seen: set[str] = set()
        stack = [name]
        while stack:
            cur = stack.pop()
            if cur in seen or cur not in self.classes:
                continue
            seen.add(cur)
            info = self.classes[cur]
            if info["is_a"]:
                stack.append(info["is_a"])
            stack.extend(info["mixins"])
        return seen

    def slot_ancestors(self, name: str) -> list[str]:
        out = []
        cur: str | None = name
        while cur and cur in self.slots and cur not in out:
            out.append(cur)
            cur = self.slots[cur]["is_a"]
        return out

    def slot_inherited(self, name: str, key: str) -> str | None:
        """A slot's domain or range, inherited down the is_a hierarchy as Biolink intends."""
        for cur in self.slot_ancestors(name):
            if self.slots[cur][key]:
                return self.slots[cur][key]
        return None

    def is_predicate(self, name: str) -> bool:
        return "related to" in self.slot_ancestors(name)

    def is_qualifier(self, name: str) -> bool:
        return "qualifier" in self.slot_ancestors(name)

    def canonical_inverse(self, name: str) -> str | None:
        """The canonical inverse when `name` is a non-canonical predicate, else None."""
        info = self.slots[name]
        if info["canonical"] or info["symmetric"]:
            return None
        if info["inverse"] and self.slots.get(info["inverse"], {}).get("canonical"):
            return info["inverse"]
        for other, data in self.slots.items():
            if data["inverse"] == name and data["canonical"]:
                return other
        return None


def _distribution():
    """The installed Biolink Model wheel; an environment without it is a user error (the
    pinned requirements were not installed), never a traceback."""
    from importlib import metadata

    try:
        return metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise UserError(
            f"the Biolink Model package '{DISTRIBUTION}' is not installed in this environment; "
            "run `make venv` (it installs the pinned requirements.lock)"
        ) from None


def _files() -> tuple[Path, Path]:
    """The model YAML and prefix map of the installed wheel, found without importing it."""
    dist = _distribution()
    return Path(str(dist.locate_file(MODEL_FILE))), Path(str(dist.locate_file(PREFIX_MAP_FILE)))


def package_version() -> str:
    return _distribution().version


def _camel(name: str) -> str:
    """Biolink's CURIE form of a class name: 'phenotypic feature' -> 'PhenotypicFeature'."""
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[ _]", name) if w)


@cache
def load_model() -> BiolinkModel:
    """The packaged Biolink Model, reduced and cached on disk by the files' hashes."""
    from .cache import cached

    model_path, prefix_path = _files()

    def build():
        import json

        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(model_path.read_text(encoding="utf-8"), Loader=loader)
        classes = {
            name: {
                "is_a": (body or {}).get("is_a"),
                "mixins": list((body or {}).get("mixins") or ()),
                "abstract": bool((body or {}).get("abstract")),
                "mixin": bool((body or {}).get("mixin")),
                "deprecated": bool((body or {}).get("deprecated")),
                "required": sorted(
                    slot
                    for slot, usage in ((body or {}).get("slot_usage") or {}).items()
                    if (usage or {}).get("required")
                ),
            }
            for name, body in (data.get("classes") or {}).items()
        }
        slots = {
            name: {
                "is_a": (body or {}).get("is_a"),
                "domain": (body or {}).get("domain"),
                "range": (body or {}).get("range"),
                "inverse": (body or {}).get("inverse"),
                "symmetric": bool((body or {}).get("symmetric")),
                "canonical": bool(
                    ((body or {}).get("annotations") or {}).get("canonical_predicate")
                ),
                "deprecated": bool((body or {}).get("deprecated")),
            }
            for name, body in (data.get("slots") or {}).items()
        }
        enums = {
            name: list(((body or {}).get("permissible_values") or {}).keys())
            for name, body in (data.get("enums") or {}).items()
        }
        prefixes = {
            k: v for k, v in json.loads(prefix_path.read_text(encoding="utf-8")).items() if v
        }
        value = {
            "version": str(data.get("version", "")),
            "classes": classes,
            "slots": slots,
            "enums": enums,
            "prefixes": prefixes,
        }
        return value, [model_path, prefix_path]

    value = cached("biolink-model", [model_path, prefix_path], "2", build)
    by_curie = {f"biolink:{_camel(name)}": name for name in value["classes"]}
    return BiolinkModel(**value, class_by_curie=by_curie)


@dataclass(frozen=True)
class Finding:
    message: str
    where: Callable[[], Location]  # resolved only when reported (it reads a YAML file)
    accepted_key: tuple[str, str, str] | None = None  # (predicate, side, class) for warnings

    @property
    def location(self) -> Location:
        return self.where()


@dataclass
class _Locator:
    """Locations of schema elements (file, line, field), reading a YAML file only on demand."""

    model: SchemaModel
    docs: dict[str, YamlDoc] = field(default_factory=dict)

    def __call__(
        self, kind: str, name: str, path: Iterable[str | int], label: str
    ) -> Callable[[], Location]:
        path = list(path)

        def resolve() -> Location:
            from .paths import display_path

            file = self.model.element_files.get(f"{kind}.{name}")
            if not file:
                return Location(display_path(Path(self.model.name)), None, label)
            if file not in self.docs:
                self.docs[file] = read_yaml_once(Path(file))  # the schema: parsed already
            return self.docs[file].location([kind, name, *path], label)

        return resolve


def check(model: SchemaModel) -> tuple[list[Finding], list[Finding]]:
    """Errors and domain/range warnings for one domain schema (see the module docstring)."""
    bl = load_model()
    locate = _Locator(model)
    errors: list[Finding] = []
    warnings: list[Finding] = []
    version = f"Biolink Model {bl.version}"

    def check_class(curie: str, where: Callable[[], Location], concrete: bool = True) -> str | None:
        name = bl.class_name(curie)
        if name is None:
            kind = " (a slot, not a class)" if bl.slot_name(curie) else ""
            errors.append(
                Finding(
                    f"'{curie}' is not a class of the {version}{kind}"
                    + suggest(curie, bl.class_by_curie),
                    where,
                )
            )
            return None
        info = bl.classes[name]
        if info["deprecated"]:
            errors.append(Finding(f"'{curie}' is deprecated in the {version}", where))
        elif concrete and (info["abstract"] or info["mixin"]):
            what = "abstract" if info["abstract"] else "a mixin"
            errors.append(
                Finding(
                    f"'{curie}' is {what} in the {version}; expected a concrete class a node "
                    "can have as its category",
                    where,
                )
            )
        return name

    for cls in model.entity_classes:
        check_class(cls.biolink, locate("classes", cls.name, ["class_uri"], "class_uri"))
    for core_name, curie in sorted(model.core.get("class_uris", {}).items()):
        if curie and curie.startswith("biolink:"):
            check_class(curie, locate("classes", core_name, ["class_uri"], "class_uri"))
    for value, info in sorted(model.core.get("source_types", {}).items()):
        curie = info.get("biolink_category")
        if not curie:
            continue
        where = locate(
            "enums",
            "SourceType",
            ["permissible_values", value, "annotations", "biolink_category"],
            "biolink_category",
        )
        name = check_class(curie, where)
        missing = sorted(
            {
                slot
                for ancestor in (bl.class_ancestors(name) if name else ())
                for slot in bl.classes[ancestor].get("required", ())
                if slot.replace(" ", "_") not in EXPORT_NODE_SLOTS
            }
        )
        if missing:
            errors.append(
                Finding(
                    f"'{curie}' requires {', '.join(missing)} in the {version}, "
                    "which the KGX export cannot write for an evidence source (it has no such "
                    "field); expected a class the source's data supports (biolink:Publication)",
                    where,
                )
            )
        if name and "information content entity" not in bl.class_ancestors(name):
            errors.append(
                Finding(
                    f"'{curie}' is not an information content entity in the {version}; "
                    "expected a class has_evidence can point to (Publication, Article, ...)",
                    where,
                )
            )
    _check_enum_values(bl, model, locate, errors, version)
    for pred in model.predicates:
        _check_predicate(bl, model, pred, locate, errors, warnings, version)
    population = [c for c in model.entity_classes if c.is_population]
    pcq_range = bl.slot_inherited("population context qualifier", "range")
    for cls in population:
        name = bl.class_name(cls.biolink)
        if name and pcq_range and pcq_range not in bl.class_ancestors(name):
            warnings.append(
                Finding(
                    f"population class {cls.name} ({cls.biolink}) is outside the range of "
                    f"biolink:population_context_qualifier ({pcq_range}) in the {version}",
                    locate("classes", cls.name, ["class_uri"], "class_uri"),
                    ("population_id", "object", cls.name),
                )
            )
    for slot in EXPORT_SLOTS:
        if slot.replace("_", " ") not in bl.slots:
            errors.append(
                Finding(
                    f"the packaged {version} has no slot '{slot}', which the KGX export writes",
                    lambda: Location(DISTRIBUTION),
                )
            )
    return errors, warnings


def _check_enum_values(bl, model, locate, errors, version) -> None:
    """KnowledgeLevel, AgentType and Direction's biolink_value against Biolink's enums."""
    core = model.core
    for local_enum, biolink_enum, values in (
        ("KnowledgeLevel", "KnowledgeLevelEnum", core.get("knowledge_levels", [])),
        ("AgentType", "AgentTypeEnum", core.get("agent_types", [])),
    ):
        allowed = bl.enums.get(biolink_enum, [])
        for value in values:
            if value not in allowed:
                errors.append(
                    Finding(
                        f"'{value}' is not a value of biolink:{biolink_enum} in the {version}"
                        + suggest(value, allowed)
                        + "; expected one of "
                        + ", ".join(allowed),
                        locate("enums", local_enum, ["permissible_values", value], value),
                    )
                )
    allowed = bl.enums.get("DirectionQualifierEnum", [])
    for value, biolink_value in sorted(core.get("direction_values", {}).items()):
        if biolink_value not in allowed:
            errors.append(
                Finding(
                    f"'{biolink_value}' is not a value of biolink:DirectionQualifierEnum in the "
                    f"{version}; expected one of {', '.join(allowed)}",
                    locate(
                        "enums",
                        "Direction",
                        ["permissible_values", value, "annotations", "biolink_value"],
                        "biolink_value",
                    ),
                )
            )


def _check_predicate(bl, model, pred: Predicate, locate, errors, warnings, version) -> None:
    """Every Biolink reading of one predicate (compiler/biolink_readings.py)."""
    declared = model.core.get("biolink_readings", {}).get(pred.name, {})
    annotation = {cond: ann for ann, cond in CONDITIONS}
    for reading in readings_of(pred.biolink, pred.biolink_qualifier, declared):
        _check_reading(
            bl,
            model,
            pred,
            reading,
            annotation.get(reading.condition),
            locate,
            errors,
            warnings,
            version,
        )


def _reading_classes(model, pred: Predicate, reading: Reading) -> tuple[list[str], list[str]]:
    """The subject and object classes a reading can meet (its condition narrows them)."""
    classes = {c.name: c for c in model.entity_classes}
    events = set(model.core.get("event_classes", ()))

    def intervention(name: str) -> bool:
        cls = classes.get(name)
        return bool(cls and (cls.is_intervention or cls.is_group))

    subjects, objects = list(pred.subject_classes), list(pred.object_classes)
    if reading.condition in ("event", "risk_event"):
        want = reading.condition == "event"
        subjects = [s for s in subjects if intervention(s) == want]
        objects = [o for o in objects if o in events]
    return subjects, objects


def _check_reading(
    bl, model, pred: Predicate, reading: Reading, ann: str | None, locate, errors, warnings, version
) -> None:
    enum_name = model.core.get("predicate_enum", "")
    base = ["permissible_values", pred.name]
    label = f"predicate {pred.name}" + (f" ({ann})" if ann else "")
    if reading.condition == DEFAULT:
        where = locate("enums", enum_name, [*base, "meaning"], "meaning")
        qwhere = locate(
            "enums", enum_name, [*base, "annotations", "biolink_qualifier"], "biolink_qualifier"
        )
    else:
        where = qwhere = locate("enums", enum_name, [*base, "annotations", ann], ann)
    curie = reading.predicate
    name = bl.slot_name(curie)
    if name is None:
        kind = " (a class, not a predicate)" if bl.class_name(curie) else ""
        options = [f"biolink:{s.replace(' ', '_')}" for s in bl.slots if bl.is_predicate(s)]
        errors.append(
            Finding(
                f"{label}: '{curie}' is not a predicate of the {version}"
                + kind
                + suggest(curie, options),
                where,
            )
        )
        return
    info = bl.slots[name]
    if not bl.is_predicate(name):
        errors.append(
            Finding(
                f"{label}: '{curie}' is a Biolink slot but not a predicate "
                "(not under biolink:related_to)",
                where,
            )
        )
        return
    if info["deprecated"]:
        errors.append(Finding(f"{label}: '{curie}' is deprecated in the {version}", where))
    inverse = bl.canonical_inverse(name)
    if inverse:
        errors.append(
            Finding(
                f"{label}: '{curie}' is not canonical in the {version}; "
                f"expected its canonical inverse biolink:{inverse.replace(' ', '_')} with the "
                "annotation `biolink_inverse: true` (the export swaps subject and object), or "
                "another canonical predicate",
                where,
            )
        )
    for slot, value in reading.qualifiers:
        _check_qualifier(bl, label, slot, value, qwhere, errors, version)
    directions = (
        [reading.condition]
        if reading.condition in ("increase", "decrease")
        else [pred.direction]
        if pred.direction
        else []
    )
    for direction in directions:
        conflicts = sign_conflicts(reading, direction)
        if conflicts:
            errors.append(
                Finding(
                    f"{label}: the reading for direction {direction} says "
                    + ", ".join(f"'{c}'" for c in conflicts)
                    + f", which states the opposite sign in the {version}; expected a term "
                    f"that says {direction}",
                    where,
                )
            )
    subjects, objects = _reading_classes(model, pred, reading)
    if reading.condition in ("event", "risk_event") and not (subjects and objects):
        errors.append(
            Finding(
                f"{label}: no subject and object classes meet this reading (an event reading "
                "needs an object class annotated `event: true` and, for biolink_if_event, an "
                "intervention subject class; for biolink_if_risk_event, another one)",
                where,
            )
        )
        return
    _check_sides(bl, model, pred, reading, name, subjects, objects, locate, warnings, version)


def _check_qualifier(bl, label, slot, value, qwhere, errors, version) -> None:
    qname = slot.replace("_", " ")
    if qname not in bl.slots:
        errors.append(
            Finding(
                f"{label}: qualifier '{slot}' is not a slot of the {version}"
                + suggest(slot, [q.replace(" ", "_") for q in bl.slots if bl.is_qualifier(q)]),
                qwhere,
            )
        )
        return
    if not bl.is_qualifier(qname):
        errors.append(Finding(f"{label}: '{slot}' is not a qualifier in the {version}", qwhere))
        return
    if bl.slots[qname]["deprecated"]:
        errors.append(
            Finding(f"{label}: qualifier '{slot}' is deprecated in the {version}", qwhere)
        )
    rng = bl.slot_inherited(qname, "range")
    if rng in bl.enums and value not in bl.enums[rng]:
        errors.append(
            Finding(
                f"{label}: '{value}' is not a value of {slot} (biolink:{rng}) "
                f"in the {version}"
                + suggest(value, bl.enums[rng])
                + "; expected one of "
                + ", ".join(bl.enums[rng]),
                qwhere,
            )
        )
    if slot == "qualified_predicate":
        target = bl.slot_name(value)
        if target is None or not bl.is_predicate(target):
            errors.append(
                Finding(
                    f"{label}: qualified_predicate '{value}' is not a predicate of the {version}",
                    qwhere,
                )
            )


def _check_sides(bl, model, pred, reading, name, subjects, objects, locate, warnings, version):
    """A class a reading can meet outside its Biolink predicate's domain or range: a warning."""
    enum_name = model.core.get("predicate_enum", "")
    base = ["permissible_values", pred.name]
    classes = {c.name: c for c in model.entity_classes}
    domain = bl.slot_inherited(name, "domain")
    rng = bl.slot_inherited(name, "range")
    # The Biolink edge runs object -> subject when the predicate is declared inverted.
    sides = (
        (("subject", subjects, domain, "domain"), ("object", objects, rng, "range"))
        if not pred.biolink_inverse
        else (("subject", subjects, rng, "range"), ("object", objects, domain, "domain"))
    )
    for side, names, expected, what in sides:
        if not expected:
            continue
        for cname in names:
            cls: EntityClass | None = classes.get(cname)
            if cls is None:
                continue
            bname = bl.class_name(cls.biolink)
            if bname is None or expected in bl.class_ancestors(bname):
                continue
            warnings.append(
                Finding(
                    f"predicate {pred.name} ({reading.predicate}) allows a {cname} "
                    f"({cls.biolink}) as its {side}, outside the Biolink {what} '{expected}' "
                    f"of the {version}",
                    locate(
                        "enums",
                        enum_name,
                        [*base, "annotations", f"{side}_classes"],
                        f"{side}_classes",
                    ),
                    (pred.name, side, cname),
                )
            )

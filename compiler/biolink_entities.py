"""The Biolink facts the KGX export needs beyond the schema, from domain.yaml's `biolink` block.

- `entities`: an entity whose Biolink reading differs from its class's, with a note: another
  category (cigarette smoking is a `Behavior`, not the `PhenotypicFeature` of its RiskFactor
  class) or another `event` reading (blood pressure is an existing quantity although its
  ClinicalOutcome class holds events). Each category must be a concrete Biolink class, and the
  Biolink predicates the entity's claims are exported with must still admit it (domain and
  range), since the schema's class-level check cannot see one entity's category.
- `primary_knowledge_source`: the `infores:` CURIE every exported edge names.

The result is stored on the IR (ir.Domain.biolink_readings, event_classes, entity_biolink,
entity_events, knowledge_source) for compiler/backends/kgx.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from . import ir
from .biolink import load_model
from .biolink_readings import Reading, choose, readings_of
from .schema import SchemaModel
from .tables import ErrorList
from .yamlfile import YamlDoc

DEFAULT_KNOWLEDGE_SOURCE = "infores:kgbench"


def apply(domain: ir.Domain, model: SchemaModel, doc: YamlDoc, errors: ErrorList) -> ir.Domain:
    """The domain with its Biolink readings recorded; every bad declaration is an error."""
    settings = doc.data.get("biolink") or {}
    declared = model.core.get("biolink_readings", {})
    readings = tuple(
        (p.name, readings_of(p.biolink, p.biolink_qualifier, declared.get(p.name, {})))
        for p in domain.predicates
    )
    ids = {e.id: e for e in domain.entities}
    categories: dict[str, str] = {}
    events: dict[str, bool] = {}
    bl = load_model()
    for i, item in enumerate(settings.get("entities") or ()):
        where = doc.location(["biolink", "entities", i], "entities")
        eid = item["id"]
        if eid not in ids:
            errors.add(f"entity '{eid}' is not in the entities table", where)
            continue
        if eid in categories or eid in events:
            errors.add(f"entity '{eid}' is declared twice", where)
            continue
        if "category" not in item and "event" not in item:
            errors.add(f"entity '{eid}' declares neither a category nor an event reading", where)
        if item.get("category"):
            name = bl.class_name(item["category"])
            info = bl.classes.get(name or "", {})
            if not name or info.get("abstract") or info.get("mixin") or info.get("deprecated"):
                errors.add(
                    f"'{item['category']}' is not a concrete class of the Biolink Model "
                    f"{bl.version}; expected a class a node can have as its category",
                    where,
                )
                continue
            categories[eid] = item["category"]
        if "event" in item:
            events[eid] = bool(item["event"])
    domain = replace(
        domain,
        biolink_readings=readings,
        event_classes=tuple(model.core.get("event_classes", ())),
        entity_biolink=tuple(sorted(categories.items())),
        entity_events=tuple(sorted(events.items())),
        knowledge_source=settings.get("primary_knowledge_source") or DEFAULT_KNOWLEDGE_SOURCE,
    )
    _check_overridden(domain, set(categories) | set(events), doc, errors)
    return domain


def category(domain: ir.Domain, entity_id: str, cls: ir.EntityClass) -> str:
    """The Biolink category an entity is exported as."""
    return dict(domain.entity_biolink).get(entity_id, cls.biolink)


def reader(domain: ir.Domain) -> Callable[[ir.Assertion], Reading]:
    """assertion -> the Biolink reading (compiler/biolink_readings.py) that states it; the
    lookups are built once, so reading a whole graph stays linear."""
    classes = domain.class_by_name
    interventions = {c.class_id for c in domain.intervention_classes} | {
        e.id
        for e in domain.entities
        if classes[e.category].is_intervention or classes[e.category].is_group
    }
    events = {e.id for e in domain.entities if e.category in domain.event_classes}
    for eid, is_event in domain.entity_events:
        (events.add if is_event else events.discard)(eid)
    readings = dict(domain.biolink_readings)
    # A reading depends on four facts with few distinct combinations (predicates x directions
    # x 2 x 2): each is chosen once, not once per assertion (millions at scale).
    chosen: dict[tuple[str, str | None, bool, bool], Reading] = {}

    def read(a: ir.Assertion) -> Reading:
        key = (a.predicate, a.direction, a.subject_id in interventions, a.object_id in events)
        reading = chosen.get(key)
        if reading is None:
            reading = chosen[key] = choose(readings[key[0]], *key[1:])
        return reading

    return read


def _check_overridden(domain: ir.Domain, overridden: set[str], doc: YamlDoc, errors) -> None:
    """The claims touching a declared entity, against their Biolink predicate's domain/range."""
    if not overridden:
        return
    bl = load_model()
    classes = domain.class_by_name
    entity_class = {e.id: e.category for e in domain.entities}
    inverse = {p.name: p.biolink_inverse for p in domain.predicates}
    read = reader(domain)
    for a in domain.assertions:
        if a.subject_id not in overridden and a.object_id not in overridden:
            continue
        reading = read(a)
        slot = bl.slot_name(reading.predicate)
        if slot is None:
            continue
        ends = (("subject", a.subject_id, "domain"), ("object", a.object_id, "range"))
        for side, eid, key in ends:
            if inverse[a.predicate]:
                key = "range" if key == "domain" else "domain"
            expected = bl.slot_inherited(slot, key)
            cls = classes.get(entity_class.get(eid, ""))
            if eid not in overridden or not expected or cls is None:
                continue
            name = bl.class_name(category(domain, eid, cls))
            if name and expected not in bl.class_ancestors(name):
                errors.add(
                    f"entity '{eid}' is declared {category(domain, eid, cls)}, outside the "
                    f"Biolink {key} '{expected}' of {reading.predicate}, which exports its "
                    f"claim {a.assertion_id} ({side}); expected a category that predicate admits",
                    doc.location(["biolink", "entities"], "entities"),
                )

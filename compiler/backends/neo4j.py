"""Neo4j artifacts: constraints, transactional load statements with their row files,
validation queries, and CSV files for `neo4j-admin database import full`.

Property sets are built once (`node_properties`, `edge_properties`) and used by both the
transactional rows and the import CSVs, so the two loading paths give identical graphs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from kgbench.contract import LoadPlan
from kgbench.io import RowTexts, json_bytes
from kgbench.jsoncolumns import Col, record_columns, record_layout, rows_texts
from kgbench.textscan import joined_strs

from ..ir import Assertion, AssertionFacts, Domain, Entity, EvidenceSource, Support
from .base import (
    CSV_BATCH,
    Artifact,
    Backend,
    EmitContext,
    csv_artifact,
    facts_in_order,
    render,
    rows_artifact,
)
from .cyphergen import (
    CountNodes,
    CountRelationships,
    CypherGenerator,
    MergeAssertionEdges,
    MergeMembers,
    MergeNodes,
    MergeSupports,
    Neo4j5,
    PropertyIndex,
    ReconcileNodes,
    UnevidencedAssertions,
    UniqueId,
    UnpairedAssertions,
    UnpairedDirectEdges,
)

ARRAY_DELIMITER = "|"
EDGE_FIELDS = ("validated", "causal_status", "evidence_level", "direction", "confidence")
# The declared properties each load statement writes (the MERGE key excepted): every one is
# written on every load, null where a row lacks it, so a property dropped from the data is
# removed from the graph rather than left stale.
ENTITY_PROPERTIES = tuple(f for f in Entity._fields if f != "id")
ASSERTION_PROPERTIES = (*Assertion._fields, "provenance", "member_ids")
EVIDENCE_PROPERTIES = EvidenceSource._fields
EDGE_PROPERTIES = (*EDGE_FIELDS, "member_ids")  # assertion_id is the edge's MERGE key
SUPPORT_PROPERTIES = ("recommendation_class", "level_of_evidence")
# The statement parameter that carries an entity statement's class label
# (`cyphergen.MergeNodes`): every class's statements are then the same texts, planned once.
CLASS_PARAM = "class_label"


def _clean(items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Neo4j stores neither nulls nor (through the import tool) empty lists: drop both.

    Called for every row of every rows file (millions at scale), hence (name, value) pairs
    straight from a record (no `_asdict` first) and class tests instead of `isinstance` and
    `v not in (None, ())` (two equality calls per value)."""
    return {
        k: (list(v) if v.__class__ is tuple else v)
        for k, v in items
        if v is not None and (v.__class__ is not tuple or v)
    }


def entity_properties(e: Entity) -> dict[str, Any]:
    return _clean(zip(Entity._fields, e, strict=True))


def assertion_properties(
    a: Assertion, provenance: str = "", member_ids: tuple[str, ...] = ()
) -> dict[str, Any]:
    props = _clean(zip(Assertion._fields, a, strict=True))
    props["id"] = a.assertion_id
    if provenance:
        props["provenance"] = provenance
    if member_ids:
        props["member_ids"] = list(member_ids)
    return props


def evidence_properties(e: EvidenceSource) -> dict[str, Any]:
    props = _clean(zip(EvidenceSource._fields, e, strict=True))
    props["id"] = e.evidence_id
    return props


def edge_properties(a: Assertion, member_ids: tuple[str, ...] = ()) -> dict[str, Any]:
    """The direct edge's properties; a class-level claim lists the members it applies to, so
    extraction can show it under a member (`member_ids`, absent on other edges)."""
    props = _clean(zip(EDGE_FIELDS, _edge_values(a), strict=True))
    props["assertion_id"] = a.assertion_id
    if member_ids:
        props["member_ids"] = list(member_ids)
    return props


def support_properties(s: Support) -> dict[str, Any]:
    return _clean(
        (("recommendation_class", s.recommendation_class),
         ("level_of_evidence", s.level_of_evidence))
    )  # fmt: skip


_edge_values = itemgetter(*(Assertion._fields.index(f) for f in EDGE_FIELDS))


class Neo4jBackend(Backend):
    """`neo4j/plan.json` (constraints, load statements with their rows files, checks with
    their expected values) in the dialect's Cypher, the `.cypher` files that render it for
    people, the rows, and the `neo4j-admin` import files."""

    name = "neo4j"
    format_version = LoadPlan.FORMAT
    outputs = ("neo4j/*",)
    dialect: CypherGenerator = Neo4j5()

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        gen = self.dialect
        label = domain.neo4j_label
        out: list[Artifact] = []
        statements: list[dict[str, str]] = []

        def statement(
            name: str,
            path: str,
            n: int,
            make: Callable[[], Iterable[dict[str, Any]]],
            construct: Any,
            reconcile: ReconcileNodes | None = None,
            then: tuple[Any, ...] = (),
            texts: Callable[[], RowTexts] | None = None,
            params: dict[str, str] | None = None,
        ) -> None:
            """One load statement; its rows are made when the file is written (`make`, or
            `texts`, the same rows encoded column by column, for a large file). `params`:
            the class label its text reads from a parameter."""
            out.append(rows_artifact(f"neo4j/{path}", n, make, texts))
            stmt: dict[str, Any] = {"name": name, "rows": path, "cypher": gen.generate(construct)}
            if then:
                stmt["then"] = [gen.generate(c) for c in then]
            if reconcile is not None:
                stmt["reconcile"] = gen.generate(reconcile)
            if params:
                stmt["params"] = params
            statements.append(stmt)

        # one pass groups the records (a scan per class or predicate was quadratic-ish)
        entities_of: dict[str, list[Entity]] = defaultdict(list)
        for e in domain.entities:
            entities_of[e.category].append(e)
        assertions_of: dict[str, list[Assertion]] = defaultdict(list)
        facts_of: dict[str, list[AssertionFacts | None]] = defaultdict(list)  # in step
        for a, fact in zip(domain.assertions, facts_in_order(domain), strict=True):
            assertions_of[a.predicate].append(a)
            facts_of[a.predicate].append(fact)

        def entity_rows(members: list[Entity]) -> Iterable[dict[str, Any]]:
            return ({"id": e.id, "props": entity_properties(e)} for e in members)

        def assertion_rows(
            members: list[Assertion], member_facts: list[AssertionFacts | None]
        ) -> Iterable[dict[str, Any]]:
            for a, fact in zip(members, member_facts, strict=True):
                member_ids = fact.member_ids if fact else ()
                yield {
                    "id": a.assertion_id,
                    "subject_id": a.subject_id,
                    "object_id": a.object_id,
                    "props": assertion_properties(a, fact.provenance if fact else "", member_ids),
                    "edge_props": edge_properties(a, member_ids),
                }

        for cls in domain.entity_classes:
            group = entities_of.get(cls.name, [])
            statement(
                f"entity_{cls.name}",
                f"rows/entities_{cls.name}.json",
                len(group),
                lambda group=group: entity_rows(group),
                MergeNodes(label, ("Entity",), ENTITY_PROPERTIES, CLASS_PARAM),
                ReconcileNodes(label, ("Entity",), CLASS_PARAM),
                texts=lambda group=group: _record_rows(_ENTITY_ROW, group),
                params={CLASS_PARAM: cls.name},
            )
        statement(
            "evidence_sources",
            "rows/evidence_sources.json",
            len(domain.evidence_sources),
            lambda: (
                {"id": e.evidence_id, "props": evidence_properties(e)}
                for e in domain.evidence_sources
            ),
            MergeNodes(label, ("EvidenceSource",), EVIDENCE_PROPERTIES),
            ReconcileNodes(label, ("EvidenceSource",)),
            texts=lambda: _record_rows(_EVIDENCE_ROW, domain.evidence_sources),
        )
        for pred in domain.predicates:
            group = assertions_of.get(pred.name, [])
            group_facts = facts_of.get(pred.name, [])
            statement(
                f"assertion_{pred.name}",
                f"rows/assertions_{pred.name}.json",
                len(group),
                lambda group=group, group_facts=group_facts: assertion_rows(group, group_facts),
                MergeNodes(label, ("Assertion",), ASSERTION_PROPERTIES),
                ReconcileNodes(label, ("Assertion",)),
                then=(MergeAssertionEdges(label, pred.name, EDGE_PROPERTIES),),
                texts=lambda group=group, group_facts=group_facts: _assertion_rows(
                    group, group_facts
                ),
            )
        statement(
            "supports",
            "rows/supports.json",
            len(domain.supports),
            lambda: (
                {
                    "assertion_id": s.assertion_id,
                    "evidence_id": s.evidence_id,
                    "props": support_properties(s),
                }
                for s in domain.supports
            ),
            MergeSupports(label, SUPPORT_PROPERTIES),
            texts=lambda: _record_rows(_SUPPORT_ROW, domain.supports),
        )
        statement(
            "members",
            "rows/members.json",
            sum(len(c.member_ids) for c in domain.intervention_classes),
            lambda: (
                {"class_id": c.class_id, "member_id": m}
                for c in domain.intervention_classes
                for m in c.member_ids
            ),
            MergeMembers(label),
        )

        prefix = label.lower()
        constraints = [
            gen.generate(UniqueId(f"{prefix}_id_unique", label)),
            gen.generate(PropertyIndex(f"{prefix}_name", label, "name")),
            gen.generate(PropertyIndex(f"{prefix}_predicate", label, "predicate")),
        ]
        plan = {
            "domain": domain.name,
            "label": label,
            "dialect": gen.NAME,
            "constraints": constraints,
            "statements": statements,
            "checks": [
                {**check, "cypher": gen.generate(construct)} for check, construct in _checks(domain)
            ],
        }
        out.append(self.document(LoadPlan, plan, ctx))
        view = {"domain": domain.name, "label": label, **plan}
        for name in ("constraints", "load", "validate"):
            text = render(f"neo4j/{name}.cypher.j2", ctx, plan=view)
            out.append(Artifact(f"neo4j/{name}.cypher", text))
        out.extend(_import_files(domain))
        return out


BACKEND = Neo4jBackend()

# The rows files' objects as layouts of columns (`kgbench.jsoncolumns`): the rows the dict
# makers in `emit` build, written column by column for a large file. A property is optional
# (left out where None or empty) as `_clean` leaves it out.
_ENTITY_ROW = {"id": Col(0), "props": record_layout(Entity._fields, optional=True)}
_EVIDENCE_ROW = {
    "id": Col(0),
    "props": {**record_layout(EvidenceSource._fields, optional=True), "id": Col(0)},
}
_SUPPORT_ROW = {
    "assertion_id": Col(Support._fields.index("assertion_id")),
    "evidence_id": Col(Support._fields.index("evidence_id")),
    "props": {name: Col(Support._fields.index(name), True) for name in SUPPORT_PROPERTIES},
}
_N = len(Assertion._fields)  # then the provenance (None when empty) and the member ids
_ASSERTION_ROW = {
    "id": Col(0),
    "subject_id": Col(Assertion._fields.index("subject_id")),
    "object_id": Col(Assertion._fields.index("object_id")),
    "props": {
        **record_layout(Assertion._fields, optional=True),
        "id": Col(0),
        "provenance": Col(_N, True),
        "member_ids": Col(_N + 1, True),
    },
    "edge_props": {
        **{name: Col(Assertion._fields.index(name), True) for name in EDGE_FIELDS},
        "assertion_id": Col(0),
        "member_ids": Col(_N + 1, True),
    },
}


def _record_rows(layout: dict[str, Any], records: Sequence[Any]) -> RowTexts:
    return rows_texts(layout, len(records), lambda a, b: record_columns(records, a, b))


def _assertion_rows(
    assertions: Sequence[Assertion], facts: Sequence[AssertionFacts | None]
) -> RowTexts:
    def columns(start: int, stop: int) -> list[Sequence[Any]]:
        batch = facts[start:stop]
        return [
            *record_columns(assertions, start, stop),
            [(f.provenance or None) if f else None for f in batch],
            [f.member_ids if f else () for f in batch],
        ]

    return rows_texts(_ASSERTION_ROW, len(assertions), columns)


def expected_counts(domain: Domain) -> dict[str, int]:
    """Counts the loaded graph must have, derived from the validated data itself."""
    counts: dict[str, int] = {
        "entities": len(domain.entities),
        "assertions": len(domain.assertions),
        "evidence_sources": len(domain.evidence_sources),
        "supports": len(domain.supports),
        "members": sum(len(c.member_ids) for c in domain.intervention_classes),
    }
    for cls, n in sorted(Counter(e.category for e in domain.entities).items()):
        counts[f"entities.{cls}"] = n
    for pred, n in sorted(Counter(a.predicate for a in domain.assertions).items()):
        counts[f"edges.{pred}"] = n
    return counts


def _checks(domain: Domain) -> list[tuple[dict[str, Any], Any]]:
    """Each validation check (name, expected value, description) with the construct that
    counts it in the loaded graph."""
    label = domain.neo4j_label
    counts = expected_counts(domain)
    checks: list[tuple[dict[str, Any], Any]] = [
        (
            {
                "name": "direct_edges_paired",
                "expect": 0,
                "description": "every direct edge has an assertion with the same subject, predicate and object",
            },
            UnpairedDirectEdges(label, tuple(p.name for p in domain.predicates)),
        ),
        (
            {
                "name": "assertions_paired",
                "expect": 0,
                "description": "every assertion has one subject, one object and its direct edge",
            },
            UnpairedAssertions(label, tuple(p.name for p in domain.predicates)),
        ),
        (
            {
                "name": "assertions_evidenced",
                "expect": 0,
                "description": "every assertion is supported by evidence or states why it is not",
            },
            UnevidencedAssertions(label),
        ),
    ]
    for name, kind in (
        ("entities", "Entity"),
        ("assertions", "Assertion"),
        ("evidence_sources", "EvidenceSource"),
    ):
        what = name.replace("_", " ")[:-1] if name != "entities" else "entity"
        checks.append(
            (
                {
                    "name": name,
                    "expect": counts[name],
                    "description": f"{what} count matches the spec",
                },
                CountNodes(label, kind),
            )
        )
    checks.append(
        (
            {
                "name": "supports",
                "expect": counts["supports"],
                "description": "SUPPORTS link count matches the spec",
            },
            CountRelationships(label, "SUPPORTS", "EvidenceSource", "Assertion"),
        )
    )
    checks.append(
        (
            {
                "name": "members",
                "expect": counts["members"],
                "description": "MEMBER_OF link count matches the spec",
            },
            CountRelationships(label, "MEMBER_OF", "Entity", "Entity"),
        )
    )
    for key, n in counts.items():
        if key.startswith("entities."):
            cls = key.split(".", 1)[1]
            checks.append(
                (
                    {
                        "name": f"entities_{cls}",
                        "expect": n,
                        "description": f"{cls} count matches the spec",
                    },
                    CountNodes(label, cls),
                )
            )
        elif key.startswith("edges."):
            pred = key.split(".", 1)[1]
            checks.append(
                (
                    {
                        "name": f"edges_{pred}",
                        "expect": n,
                        "description": f"{pred} direct edge count matches the spec",
                    },
                    CountRelationships(label, pred),
                )
            )
    return checks


def _cell(value: Any) -> Any:
    if value.__class__ is str:  # most cells: the fast path, millions of times at scale
        return value
    if value is None or value == ():
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ARRAY_DELIMITER.join(value)
    return value


_BOOLS = ("false", "true")


def _cells(values: Sequence[Any]) -> Sequence[Any]:
    """`_cell` of each value of a column, by the column's type without a call per cell
    where it has one (every column of the import files at scale)."""
    if joined_strs(values) is not None:  # every cell a str (most columns): as they are
        return values
    kinds = set(map(type, values))
    if kinds == {float} or kinds == {int}:  # written as they are
        return values
    if kinds == {bool}:
        return list(map(_BOOLS.__getitem__, values))
    if kinds <= {str, type(None)}:
        return ["" if v is None else v for v in values]
    if kinds == {tuple}:  # multivalued: few distinct values, each joined once
        joined = {v: ARRAY_DELIMITER.join(v) for v in set(values)}
        return list(map(joined.__getitem__, values))
    return list(map(_cell, values))


def _import_files(domain: Domain) -> list[Artifact]:
    """CSV files in the `neo4j-admin database import full` format (id space = the domain)."""
    space = domain.name
    label = domain.neo4j_label
    d = ARRAY_DELIMITER
    ent_header = [
        f"id:ID({space})",
        ":LABEL",
        "category",
        "name",
        "synonyms:string[]",
        "description",
        "xrefs:string[]",
    ]

    # Each maker runs when its file is written and gives the rows a batch at a time as
    # columns (`csv_column_chunks`), each column's cells made together (`_cells`).
    entity_labels = {c.name: d.join((label, "Entity", c.name)) for c in domain.entity_classes}

    def ent_rows():
        """Per entity [id, labels, category, name, _cell(synonyms), _cell(description),
        _cell(xrefs)]."""
        for batch in _batches(domain.entities):
            ids, categories, names, synonyms, descriptions, xrefs = zip(*batch, strict=True)
            labels = [entity_labels.get(c) or d.join((label, "Entity", c)) for c in categories]
            yield [ids, labels, categories, names, *map(_cells, (synonyms, descriptions, xrefs))]

    asr_fields = [
        ("assertion_id", ""), ("subject_id", ""), ("predicate", ""), ("object_id", ""),
        ("relation_class", ""), ("direction", ""), ("causal_status", ""), ("evidence_level", ""),
        ("confidence", ":double"), ("validated", ":boolean"), ("context", ""), ("population_id", ""),
        ("temporality", ""), ("source_databases", ":string[]"), ("no_evidence_reason", ""),
        ("knowledge_level", ""), ("agent_type", ""),
    ]  # fmt: skip
    facts = facts_in_order(domain)
    assert tuple(n for n, _ in asr_fields) == Assertion._fields
    asr_header = [f"id:ID({space})", ":LABEL"] + [f"{n}{t}" for n, t in asr_fields]
    asr_header += ["provenance", "member_ids:string[]"]

    asr_label = d.join((label, "Assertion"))

    def asr_rows():
        """Per assertion [id, label, *map(_cell, a), provenance, member_ids]."""
        for start in range(0, len(domain.assertions), CSV_BATCH):
            batch = domain.assertions[start : start + CSV_BATCH]
            batch_facts = facts[start : start + CSV_BATCH]
            fields = list(zip(*batch, strict=True))  # asr_fields: Assertion's, in order
            yield [
                fields[0],
                [asr_label] * len(batch),
                *map(_cells, fields),
                _cells([f.provenance or None if f is not None else None for f in batch_facts]),
                _cells([f.member_ids if f is not None else () for f in batch_facts]),
            ]

    ev_fields = [
        ("evidence_id", ""), ("source_type", ""), ("title", ""), ("citation", ""), ("year", ":long"),
        ("evidence_tier", ""), ("study_level", ":boolean"),
        ("studied_interventions", ":string[]"), ("studied_populations", ":string[]"),
    ]  # fmt: skip
    ev_header = [f"id:ID({space})", ":LABEL"] + [f"{n}{t}" for n, t in ev_fields]

    def ev_rows():
        """Per source [id, label, *(_cell of each of ev_fields)]."""
        for batch in _batches(domain.evidence_sources):
            fields = dict(zip(EvidenceSource._fields, zip(*batch, strict=True), strict=True))
            yield [
                fields["evidence_id"],
                [d.join((label, "EvidenceSource"))] * len(batch),
                *(_cells(fields[n]) for n, _ in ev_fields),
            ]

    link_header = [f":START_ID({space})", f":END_ID({space})", ":TYPE"]

    def link(end: str, kind: str):
        """Per assertion [assertion_id, its `end`, kind]."""
        get = itemgetter(Assertion._fields.index("assertion_id"), Assertion._fields.index(end))
        for batch in _batches(domain.assertions):
            ids, ends = zip(*map(get, batch), strict=True)
            yield [ids, ends, [kind] * len(batch)]

    def has_subject():
        return link("subject_id", "HAS_SUBJECT")

    def has_object():
        return link("object_id", "HAS_OBJECT")

    support_header = [*link_header, "recommendation_class", "level_of_evidence"]

    def supports():
        """Per support [evidence_id, assertion_id, SUPPORTS, _cell(recommendation_class),
        _cell(level_of_evidence)]."""
        for batch in _batches(domain.supports):
            assertion_ids, evidence_ids, classes, levels = zip(*batch, strict=True)
            n = len(batch)
            yield [evidence_ids, assertion_ids, ["SUPPORTS"] * n, _cells(classes), _cells(levels)]

    def members():
        pairs = [(m, c.class_id) for c in domain.intervention_classes for m in c.member_ids]
        for batch in _batches(pairs):
            yield [*zip(*batch, strict=True), ["MEMBER_OF"] * len(batch)]

    edge_header = [
        *link_header,
        "assertion_id",
        "validated:boolean",
        "causal_status",
        "evidence_level",
        "direction",
        "confidence:double",
        "member_ids:string[]",
    ]

    edge_columns = itemgetter(
        *(Assertion._fields.index(n) for n in ("subject_id", "object_id", "predicate"))
    )
    edge_props = itemgetter(
        *(
            Assertion._fields.index(n)
            for n in ("assertion_id", "validated", "causal_status", "evidence_level", "direction")
        )
    )
    confidence = itemgetter(Assertion._fields.index("confidence"))

    def edges():
        """Per assertion [subject, object, predicate, assertion_id, _cell(validated),
        causal_status, evidence_level, direction, confidence, _cell(member_ids)]."""
        for start in range(0, len(domain.assertions), CSV_BATCH):
            batch = domain.assertions[start : start + CSV_BATCH]
            batch_facts = facts[start : start + CSV_BATCH]
            yield [
                *zip(*map(edge_columns, batch), strict=True),
                *(_cells(c) for c in zip(*map(edge_props, batch), strict=True)),
                list(map(confidence, batch)),
                _cells([f.member_ids if f is not None else () for f in batch_facts]),
            ]

    n_asr, n_members = (
        len(domain.assertions),
        sum(len(c.member_ids) for c in domain.intervention_classes),
    )
    files = {  # name -> (header, number of rows, maker of the rows)
        "nodes_entities.csv": (ent_header, len(domain.entities), ent_rows),
        "nodes_assertions.csv": (asr_header, n_asr, asr_rows),
        "nodes_evidence_sources.csv": (ev_header, len(domain.evidence_sources), ev_rows),
        "relationships_has_subject.csv": (link_header, n_asr, has_subject),
        "relationships_has_object.csv": (link_header, n_asr, has_object),
        "relationships_supports.csv": (support_header, len(domain.supports), supports),
        "relationships_members.csv": (link_header, n_members, members),
        "relationships_direct.csv": (edge_header, n_asr, edges),
    }
    plan = {
        "tool": "neo4j-admin database import full",
        "array_delimiter": ARRAY_DELIMITER,
        "id_type": "string",
        # a value with a line break is a quoted field spanning lines, which the tool reads
        # only with --multiline-fields=true (slower: it turns off parallel parsing)
        "multiline_fields": _has_line_breaks(domain),
        "nodes": sorted(n for n in files if n.startswith("nodes_")),
        "relationships": sorted(n for n in files if n.startswith("relationships_")),
        "expected_counts": expected_counts(domain),
        "note": "Import creates no constraints or indexes: apply constraints.cypher afterwards.",
    }
    out = [
        csv_artifact(f"neo4j/import/{name}", header, n, make)
        for name, (header, n, make) in files.items()
    ]
    out.append(Artifact("neo4j/import/import.json", json_bytes(plan)))
    return out


def _batches(records: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """`records` in slices of `CSV_BATCH` (none when empty)."""
    for start in range(0, len(records), CSV_BATCH):
        yield records[start : start + CSV_BATCH]


def _has_line_breaks(domain: Domain) -> bool:
    """Whether any value the import files carry holds a line break (CR or LF). The files are
    streamed, never held whole, so this is read from the records rather than the bytes: a
    field at a time, its strings (and the strings of its tuples) joined and searched in C,
    instead of a generator step per value (7 of a 1M-assertion compile's 64 s); a field of
    str alone is joined as it is, one without any str or tuple is skipped."""
    records = (domain.entities, domain.assertions, domain.evidence_sources, domain.supports)
    for table in records:
        if not table:
            continue
        for i in range(len(table[0])):
            values = list(map(itemgetter(i), table))
            kinds = set(map(type, values))
            if kinds == {str}:  # most fields: joined as they are
                joined = "".join(values)
            elif str in kinds or tuple in kinds:
                texts = [v for v in values if v.__class__ is str]
                texts += [
                    t for v in values if v.__class__ is tuple for t in v if t.__class__ is str
                ]
                joined = "".join(texts)
            else:  # numbers, booleans, None: no text
                continue
            if "\n" in joined or "\r" in joined:
                return True
    return False

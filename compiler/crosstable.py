"""The cross-table rules of a domain's data, in one pass over the tables.

Every entity's class is declared and its id carries the class prefix; every assertion names a
known predicate, known entities of the classes the predicate allows, its relation class and
direction; every evidence link names a known assertion and source, once; every assertion has
a link or an explicit reason for having none.

Two halves, one owner of each rule's wording:

- `_suspects` finds, by column with Arrow kernels, the rows that may break a rule. It may
  flag a row that turns out fine (a conservative mask), never miss one that breaks a rule.
- The row checkers (`_entity_row`, `_assertion_row`, `_link_row`) word the message for each
  flagged row, exactly as they would if every row were checked one by one.

Rows nobody flagged become IR records straight from their columns; the assertions' and the
links' only when something reads them (`compiler.lazyrecords`: on valid data `validate` never
does). So valid data costs a few vectorised passes, and a thousand errors cost a thousand row
checks, not a hundred thousand.

Rows the table readers left out for a bad cell (`Table.broken_ids`) exist as far as
references go: a reference to one is neither "unknown" nor checked further, so one typo is
one message, not one per row that names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgbench.heap import give_back
from kgbench.suggest import SuggestIndex, unknown

from . import ir
from .knowledge_level import level_columns
from .lazyrecords import Records, rows_of
from .rules import distinct_count
from .schema import SchemaModel, suggest
from .tables import ErrorList, Table

GRAPH_TABLES = ("entities", "evidence_sources", "assertions", "assertion_evidence")


def check_graph_tables(
    model: SchemaModel,
    tables: dict[str, Table],
    errors: ErrorList,
    class_prefix: bool = True,
    levels_core: dict[str, Any] | None = None,
    lazy: bool = False,
):
    """(entities, evidence, assertions, supports, category_of) of the rows that pass; every
    broken rule is added to `errors`, in table order, then file order.

    `levels_core`: the core schema, to fill in each assertion's knowledge level and agent
    type from its supporting sources (`knowledge_level.level_columns`) before its record is
    made; None (validate) leaves them as the rows have them.

    `lazy` (validate): the assertions and links come back as `lazyrecords.Records`, made only
    if a later check reads them one by one; on valid data none does.

    Memory: each table's Python columns are let go once its records are made, the evidence
    links' assertion ids are the assertions' own str objects, and each assertion record is
    made once, after the links, complete (at 4,000,000 assertions each of these was
    hundreds of MB at the load's peak)."""
    classes = {c.name: c for c in model.entity_classes}
    predicates = {p.name: p for p in model.predicates}
    suspect = _suspects(model, tables, class_prefix)

    ent = tables["entities"]
    cols = ent.columns
    entities_all = _records(ir.Entity, cols)
    category_of: dict[str, str | None] = {i: None for i in ent.broken_ids}
    category_of.update(zip(cols["id"], cols["category"], strict=True))
    rejected: set[int] = set()
    for i in _flagged(suspect["entities"]):
        entity = entities_all[i]
        if not _entity_row(entity, i, ent, classes, errors, class_prefix):
            category_of[entity.id] = None  # exists, but its class is broken (reported)
            rejected.add(i)
    entities = _without(entities_all, rejected)
    entity_ids = cols["id"]  # the assertions' references are made of these str objects
    del cols, entities_all
    ent.drop_columns()

    ev = tables["evidence_sources"]
    evidence = _records(ir.EvidenceSource, ev.columns)
    ev.drop_columns()
    evidence_ids = {e.evidence_id for e in evidence}

    asr = tables["assertions"]
    known_entities = SuggestIndex(category_of)
    flagged = _flagged(suspect["assertions"])
    picked = asr.picked(ir.Assertion, flagged)  # a flagged row's record, made on its own
    if picked:  # the references the row checks may look up
        fields = ("subject_id", "object_id", "population_id")
        refs = (r for a in picked.values() for r in map(a.__getattribute__, fields) if r)
        known_entities.expect(refs, _ids_array(ent, "id"))
    rejected = set()
    for i in flagged:
        if not _assertion_row(picked[i], i, asr, predicates, category_of, known_entities, errors):
            rejected.add(i)
    del picked

    links = tables["assertion_evidence"]
    if not lazy:  # the records will be made: one str object per id
        _share_ids(asr, ent, links, entity_ids)
    del entity_ids
    supports: Sequence[ir.Support]
    # lazy (validate): made only if a later check must walk them (`compiler.lazyrecords`)
    all_links: Sequence[ir.Support] = (
        Records(len(links), lambda: _records(ir.Support, links.columns))
        if lazy
        else _records(ir.Support, links.columns)
    )
    flagged_links = _flagged(suspect["assertion_evidence"])
    to_broken = suspect["links_to_broken_sources"]
    counted: np.ndarray | None = None  # None: every link row counts as its assertion's link
    if not flagged_links and not rejected and not to_broken.any():  # all SUPPORTS links
        supports = all_links
    else:
        # Id sets only where a row needs judging: at 4,000,000 rows each one is ~0.25 GB,
        # and on valid data they were three, alive at the domain's peak memory.
        # every assertion id, the broken rows' included: as Arrow, a Python set made only
        # if a lookup needs one
        ids_array = _ids_array(asr, "assertion_id")
        all_asr_ids = None
        if ids_array is None:
            all_asr_ids = set(asr.column("assertion_id")) | asr.broken_ids
        gone_ids = _gone_ids(asr.arrow["assertion_id"], rejected)
        supports, counted = _links(
            all_links, flagged_links, to_broken, links, all_asr_ids, gone_ids,
            evidence_ids, ev.broken_ids, suspect["duplicate_links"],
            suspect["repeated_link_rows"], errors, ids_array,
        )  # fmt: skip
    del all_links
    if not lazy:
        supports = rows_of(supports)  # made now, before the columns they are made of go
        links.drop_columns()
        give_back()  # before the largest allocation of the load, the assertion records

    unlinked = _without_evidence_rule(asr, counted, links, suspect.get("link_assertion_rows"))
    for i, reason in zip(unlinked, asr.cells("no_evidence_reason", unlinked), strict=True):
        if not reason:
            errors.add(
                "assertion has no evidence link in assertion_evidence and no no_evidence_reason; "
                "expected at least one SUPPORTS link or an explicit reason",
                asr.location(i, "no_evidence_reason"),
            )
        else:
            errors.add(
                "no_evidence_reason must be empty when the assertion has evidence links",
                asr.location(i, "no_evidence_reason"),
            )
    if levels_core is not None and not errors.errors:  # with errors, no record is compiled
        levels = level_columns(
            asr.column("assertion_id"), asr.column("knowledge_level"), asr.column("agent_type"),
            supports, evidence, levels_core,
        )  # fmt: skip
        asr.use_column("knowledge_level", levels[0])
        asr.use_column("agent_type", levels[1])
        del levels
    if lazy:
        assertions = _without(Records(len(asr), lambda: asr.records(ir.Assertion)), rejected)
    else:
        assertions = _without(asr.records(ir.Assertion), rejected)
        asr.drop_columns()
    return entities, evidence, assertions, supports, category_of


def _share_ids(asr: Table, ent: Table, links: Table, entity_ids: list[Any]) -> None:
    """The assertions' subject and object ids made the entities' own str objects, and the
    links' assertion ids the assertions' own (`_shared`): the IR then holds one copy of each
    id, not one per table (hundreds of MB at 4,000,000 assertions)."""
    asr_ids = asr.column("assertion_id")
    if asr.arrow is not None and ent.arrow is not None:
        for side in ("subject_id", "object_id"):
            asr.use_column(side, _shared(asr.arrow[side], ent.arrow["id"], entity_ids))
    if links.arrow is not None and asr.arrow is not None:
        links.use_column(
            "assertion_id", _shared(links.arrow["assertion_id"], asr.arrow["assertion_id"], asr_ids)
        )


def _shared(refs, ids, id_values: list[Any]) -> list[Any]:
    """The Python values of a reference column (`refs`, Arrow), each one that names a row of
    `ids` (Arrow) being that row's own str object in `id_values`; any other value is its own
    str (None when empty), as the column's conversion makes it."""
    rows = pc.index_in(refs, value_set=ids)
    if not rows.null_count:
        return list(map(id_values.__getitem__, rows.to_numpy(zero_copy_only=False).tolist()))
    own = refs.to_pylist()
    return [
        v or None if j is None else id_values[j] for j, v in zip(rows.to_pylist(), own, strict=True)
    ]


def _records(record: type, columns: dict[str, list[Any]]) -> list:
    """One IR record per row, made by `tuple.__new__` in C (the named tuple's own `__new__`
    is a Python function: a call per row); every field has its column, so none is missing."""
    rows = zip(*(columns[f] for f in record._fields), strict=True)
    return list(map(partial(tuple.__new__, record), rows))


def _ids_array(table: Table, name: str) -> Any:
    """Every id of a table as one Arrow array, the rows left out for a bad cell included (the
    ids a reference may name: `SuggestIndex.expect`), or None without Arrow columns."""
    if table.arrow is None:
        return None
    broken = pa.array(sorted(table.broken_ids), pa.string())
    return pa.concat_arrays([table.arrow[name], broken])


def _gone_ids(ids: Any, rejected: set[int]) -> Any:
    """The Arrow ids of the rejected rows that no kept row shares (a repeated id's other row
    may pass), or None where no row was rejected: a link to one of them supports nothing."""
    if not rejected:
        return None
    rows = np.zeros(len(ids), dtype=bool)
    rows[list(rejected)] = True
    rejected_ids = ids.filter(pa.array(rows))
    shared = _mask(pc.is_in(ids, value_set=rejected_ids)) & ~rows  # a kept row's id
    kept_too = ids.filter(pa.array(shared))
    return rejected_ids.filter(pc.invert(pc.is_in(rejected_ids, value_set=kept_too)))


def _flagged(mask: np.ndarray) -> list[int]:
    """The row indexes a suspect mask flags, in file order (none on valid data)."""
    return np.flatnonzero(mask).tolist()


def _without(rows: Sequence, rejected: set[int]) -> Sequence:
    """The rows but the rejected ones; of `Records`, as `Records` (the rejections are
    errors, so a validation ends before anything reads them)."""
    if not rejected:
        return rows
    if isinstance(rows, Records) and not rows.made:
        return Records(
            len(rows) - len(rejected),
            lambda: [r for i, r in enumerate(rows) if i not in rejected],
        )
    return [r for i, r in enumerate(rows) if i not in rejected]


def _links(
    all_links: Sequence[ir.Support],
    flagged: list[int],
    to_broken: np.ndarray,
    links: Table,
    all_asr_ids: set[str] | None,
    gone_ids: Any,
    evidence_ids: set[str],
    broken_evidence: frozenset[str],
    duplicate_links: bool,
    repeated: np.ndarray,
    errors: ErrorList,
    asr_ids_array: Any = None,
) -> tuple[Sequence[ir.Support], np.ndarray]:
    """(SUPPORTS links of assertions that passed, which link rows count as their assertion's
    link) when some link rows are flagged, some cite a broken source (`to_broken`: linked,
    supporting nothing) or some assertions were rejected: the flagged rows are checked one
    by one, in file order, and every other row is decided by column (`gone_ids`: the Arrow
    ids that only rejected assertion rows have, None if none was rejected; `asr_ids_array`:
    every assertion id, as Arrow, where `all_asr_ids`, their set, is None)."""
    # the ids of the rows read here only, not the columns (two lists of every link's ids)
    looked_at = sorted(set(flagged).union(_flagged(repeated)) if duplicate_links else flagged)
    aids = dict(zip(looked_at, links.cells("assertion_id", looked_at), strict=True))
    eids = dict(zip(looked_at, links.cells("evidence_id", looked_at), strict=True))
    first_index = _first_occurrence(aids, eids, repeated) if duplicate_links else {}
    flagged_aids = [aids[i] for i in flagged]
    if all_asr_ids is None:
        known_asr = SuggestIndex.of_array(asr_ids_array)
        known = pc.is_in(pa.array(flagged_aids, pa.string()), value_set=asr_ids_array)
        unknown_asr = {a for a, k in zip(flagged_aids, known.to_pylist(), strict=True) if not k}
    else:
        known_asr = SuggestIndex(all_asr_ids)
        unknown_asr = {a for a in flagged_aids if a not in all_asr_ids}
    known_ev = SuggestIndex(evidence_ids)
    known_asr.expect(flagged_aids, asr_ids_array)
    known_ev.expect(eids[i] for i in flagged)
    counted = np.ones(len(links), dtype=bool)
    supporting = ~to_broken
    for i in flagged:
        verdict = _link_row(
            aids[i], eids[i], i, links, unknown_asr, known_asr, evidence_ids, broken_evidence,
            known_ev, first_index, errors,
        )  # fmt: skip
        if verdict != "ok":
            supporting[i] = False
            counted[i] = verdict != "skip"
    if gone_ids is not None and len(gone_ids):
        # a link of an unknown assertion is flagged and judged above ("skip"), so only the
        # ids of the rejected assertions are looked up: a small set, where the ids of every
        # assertion that passed were copied and hashed (10,000 planted errors: ~0.6k faults)
        supporting &= ~_mask(pc.is_in(links.arrow["assertion_id"], value_set=gone_ids))
    supports = Records(
        int(supporting.sum()),
        lambda: [link for link, keep in zip(all_links, supporting.tolist(), strict=True) if keep],
    )
    return supports, counted


def _without_evidence_rule(
    asr: Table, counted: np.ndarray | None, links: Table, link_rows: Any = None
) -> list[int]:
    """Rows breaking "a link or a reason, not both", in file order: with Arrow columns, one
    vectorised pass (`counted`: which link rows count as their assertion's link; None:
    every one). `link_rows`: each link's assertion row (`_suspects`' lookup, null where no
    assertion has its id), which answers "has a link" without hashing every link's id again
    where the assertion ids are distinct (`_distinct_ids`)."""
    if asr.arrow is None or links.arrow is None:
        cols = asr.columns
        link_ids = links.columns["assertion_id"]
        linked = set(
            link_ids
            if counted is None
            else (a for a, c in zip(link_ids, counted, strict=True) if c)
        )
        return [
            i
            for i, (aid, reason) in enumerate(
                zip(cols["assertion_id"], cols["no_evidence_reason"], strict=True)
            )
            if (aid in linked) == bool(reason)
        ]
    ids = asr.arrow["assertion_id"]
    if link_rows is not None and _distinct_ids(asr, "assertion_id"):
        rows = pc.fill_null(link_rows, -1).to_numpy(zero_copy_only=False)
        counts = _known(link_rows) if counted is None else _known(link_rows) & counted
        has_link = np.zeros(len(ids), dtype=bool)
        has_link[rows[counts]] = True
        with_reason = _mask(pc.not_equal(asr.arrow["no_evidence_reason"], ""))
        return _flagged(has_link == with_reason)
    value_set = links.arrow["assertion_id"]
    if counted is not None and not counted.all():
        value_set = value_set.filter(pa.array(counted))
    has_link = pc.is_in(ids, value_set=value_set)
    has_reason = pc.not_equal(asr.arrow["no_evidence_reason"], "")
    return _flagged(_mask(pc.equal(has_link, has_reason)))


def _distinct_ids(table: Table, name: str) -> bool:
    """Whether a column's kept values are distinct by the column rules: an identifier that
    is not a list keeps only the first row of each value (`rules._repeated` flags the rest,
    and `tables._validated` leaves flagged rows out)."""
    return any(c.name == name and c.identifier and not c.multivalued for c in table.spec.columns)


def _entity_row(
    entity: ir.Entity,
    i: int,
    table: Table,
    classes: dict[str, ir.EntityClass],
    errors: ErrorList,
    class_prefix: bool,
) -> bool:
    cls = classes.get(entity.category)
    if cls is None:
        errors.add(
            f"unknown class '{entity.category}'"
            + suggest(entity.category, classes)
            + "; expected one of "
            + ", ".join(classes),
            table.location(i, "category"),
        )
        return False
    if class_prefix and not entity.id.startswith(cls.id_prefix + "_"):
        errors.add(
            f"id '{entity.id}' of a {entity.category} must start with '{cls.id_prefix}_' "
            "(its class's id_prefix; a domain with its own entity ids declares "
            "`id_schemes: {entities: {pattern: ...}}` in domain.yaml)",
            table.location(i, "id"),
        )
        return False
    return True


def _assertion_row(
    a: ir.Assertion,
    i: int,
    table: Table,
    predicates: dict[str, ir.Predicate],
    category_of: dict[str, str | None],
    known_entities: SuggestIndex,
    errors: ErrorList,
) -> bool:
    pred = predicates.get(a.predicate)
    if pred is None:
        errors.add(
            f"unknown predicate '{a.predicate}'"
            + suggest(a.predicate, predicates)
            + "; expected one of "
            + ", ".join(predicates),
            table.location(i, "predicate"),
        )
        return False
    ok = True
    for side, ref, allowed in (
        ("subject_id", a.subject_id, pred.subject_classes),
        ("object_id", a.object_id, pred.object_classes),
    ):
        cat = category_of.get(ref)
        if ref in category_of and cat is None:
            ok = False  # already reported on the entity's own row
        elif cat is None:
            errors.add(unknown("entity", ref, known_entities), table.location(i, side))
            ok = False
        elif cat not in allowed:
            errors.add(
                f"{pred.name} does not allow a {cat} as its {side.split('_')[0]} "
                f"('{ref}'); expected {' or '.join(allowed)}",
                table.location(i, side),
            )
            ok = False
    pop = a.population_id
    if pop is not None and pop not in category_of:
        errors.add(unknown("entity", pop, known_entities), table.location(i, "population_id"))
        ok = False
    if a.relation_class != pred.relation_class:
        errors.add(
            f"relation_class of a {pred.name} assertion must be '{pred.relation_class}', "
            f"got '{a.relation_class}'",
            table.location(i, "relation_class"),
        )
        ok = False
    if pred.direction and a.direction != pred.direction:
        errors.add(
            f"direction of a {pred.name} assertion must be '{pred.direction}', got '{a.direction}'",
            table.location(i, "direction"),
        )
        ok = False
    return ok


def _link_row(
    aid: str,
    eid: str,
    i: int,
    table: Table,
    unknown_asr: set[str],
    known_asr: SuggestIndex,
    evidence_ids: set[str],
    broken_evidence: frozenset[str],
    known_ev: SuggestIndex,
    first_index: dict[tuple[str, str], int],
    errors: ErrorList,
) -> str:
    """'ok' (a SUPPORTS link), 'linked' (counts as the assertion's link, supports nothing:
    its source row is broken and reported), or 'skip'."""
    if aid in unknown_asr:  # no assertion has this id
        errors.add(unknown("assertion", aid, known_asr), table.location(i, "assertion_id"))
        return "skip"
    broken = eid in broken_evidence and eid not in evidence_ids
    if eid not in evidence_ids and not broken:
        errors.add(
            unknown("evidence source", eid, known_ev) + " (not in evidence_sources)",
            table.location(i, "evidence_id"),
        )
        return "skip"
    first = first_index.get((aid, eid), i)
    if first != i:
        errors.add(
            f"duplicate SUPPORTS link {eid} -> {aid} (first on line {table.lines[first]})",
            table.location(i, "evidence_id"),
        )
        return "linked"
    return "linked" if broken else "ok"


def _first_occurrence(
    aids: dict[int, str], eids: dict[int, str], repeated: np.ndarray
) -> dict[tuple[str, str], int]:
    """The first row of each (assertion, source) pair among the rows `repeated` may flag (a
    superset of every row whose pair repeats): a pair absent here occurs once, so its first
    row is its own. Looking only at those rows keeps a few repeated links from costing a
    Python pass over every link."""
    first: dict[tuple[str, str], int] = {}
    for i in _flagged(repeated):
        first.setdefault((aids[i], eids[i]), i)
    return first


def _suspects(model: SchemaModel, tables: dict[str, Table], class_prefix: bool) -> dict[str, Any]:
    """Per table, a boolean numpy mask of the rows the row checkers must look at (every row
    when a table has no Arrow columns), and whether any evidence link is repeated; with Arrow
    columns, also each link's assertion row ("link_assertion_rows", null where none)."""
    if any(tables[n].arrow is None for n in GRAPH_TABLES):
        return {
            **{n: np.ones(len(tables[n]), dtype=bool) for n in GRAPH_TABLES},
            "duplicate_links": True,
            "repeated_link_rows": np.ones(len(tables["assertion_evidence"]), dtype=bool),
            "links_to_broken_sources": np.zeros(len(tables["assertion_evidence"]), dtype=bool),
        }
    classes = {c.name: c for c in model.entity_classes}
    predicates = {p.name: p for p in model.predicates}

    ent = tables["entities"].arrow
    ids, cats = ent["id"], ent["category"]
    class_names = pa.array(list(classes))
    bad_ent = pc.invert(pc.is_in(cats, value_set=class_names))
    if class_prefix:
        prefixes = pa.array([c.id_prefix for c in classes.values()])
        expected = pc.take(prefixes, pc.index_in(cats, value_set=class_names))
        stem = pc.replace_substring_regex(ids, "_[0-9]+$", "")
        bad_ent = pc.or_(bad_ent, pc.invert(pc.fill_null(pc.equal(stem, expected), False)))
    bad_ent = pc.fill_null(bad_ent, True)
    good_ids = pc.filter(ids, pc.invert(bad_ent))
    good_cats = pc.filter(cats, pc.invert(bad_ent))

    asr = tables["assertions"].arrow
    subj, pred, obj = asr["subject_id"], asr["predicate"], asr["object_id"]
    # Every rule on a predicate's row is a table lookup by integer codes: the predicate's
    # index (-1, unknown, picks the last, all-False row of each table) and the code of the
    # value it constrains (-1, unknown, picks the last, all-False column).
    names = list(predicates)
    p = _codes(pred, names)
    bad = p < 0
    good_codes = np.append(_codes(good_cats, list(classes)), -1)  # [-1]: not a good entity
    class_index = {c: i for i, c in enumerate(classes)}
    for side, col in (("subject_classes", subj), ("object_classes", obj)):
        cat = good_codes[_codes(col, good_ids)]
        allowed = np.zeros((len(names) + 1, len(classes) + 1), dtype=bool)
        for i, pr in enumerate(predicates.values()):
            allowed[i, [class_index[c] for c in getattr(pr, side) if c in class_index]] = True
        bad |= ~allowed[p, cat]
    pop = asr["population_id"]
    bad |= _mask(pc.and_(pc.not_equal(pop, ""), pc.invert(pc.is_in(pop, value_set=ids))))
    relations = sorted({pr.relation_class for pr in predicates.values()})
    want = np.array([relations.index(pr.relation_class) for pr in predicates.values()] + [-2])
    bad |= _codes(asr["relation_class"], relations) != want[p]
    directions = ["increase", "decrease", "none"]
    directions += sorted({pr.direction for pr in predicates.values()} - {"", None, *directions})
    allowed = np.zeros((len(names) + 1, len(directions) + 1), dtype=bool)
    for i, pr in enumerate(predicates.values()):
        allowed[i, [directions.index(pr.direction)] if pr.direction else [0, 1, 2]] = True
    bad |= ~allowed[p, _codes(asr["direction"], directions)]

    links = tables["assertion_evidence"].arrow
    link_a, link_e = links["assertion_id"], links["evidence_id"]
    ev_ids = tables["evidence_sources"].arrow["evidence_id"]
    # each link's assertion row and source row (null: none has its id), looked up once for
    # every rule below that asks whether a link's assertion or source is known
    a_row = pc.index_in(link_a, value_set=asr["assertion_id"])
    e_row = pc.index_in(link_e, value_set=ev_ids)
    known_a, known_e = _known(a_row), _known(e_row)
    duplicates = _pairs_repeat(link_a, link_e, a_row, e_row, len(ev_ids))
    repeated_rows = np.zeros(len(link_a), dtype=bool)
    if duplicates:  # every row of a repeated pair: the checker keeps the first silently
        pairs = _joined(link_a, link_e)
        counts = pc.value_counts(pairs)
        repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
        repeated_rows = _mask(pc.is_in(pairs, value_set=repeated))
    bad_link = ~(known_a & known_e) | repeated_rows
    # A link of a known assertion to a source whose row was left out for a bad cell (that
    # cell is reported) counts as the assertion's link and supports nothing, with no message
    # of its own (`_link_row`'s "linked"): decided here by column, so a bad cell in a source
    # cited by thousands of links costs no row check per link.
    to_broken = bad_link & ~repeated_rows & known_a & ~known_e
    if to_broken.any():  # a link to an unknown source: is it a broken one?
        broken_sources = pa.array(sorted(tables["evidence_sources"].broken_ids), pa.string())
        to_broken &= _mask(pc.is_in(link_e, value_set=broken_sources))
    return {
        "link_assertion_rows": a_row,
        "entities": _mask(bad_ent),
        "assertions": bad,
        "assertion_evidence": bad_link & ~to_broken,
        "duplicate_links": duplicates,
        "repeated_link_rows": repeated_rows,
        "links_to_broken_sources": to_broken,
    }


def _codes(values, options) -> np.ndarray:
    """Each value's index among `options` (a list or an Arrow array of distinct strings), -1
    where it is not one of them."""
    value_set = options if isinstance(options, pa.Array) else pa.array(options, pa.string())
    found = pc.fill_null(pc.index_in(values, value_set=value_set), -1)
    return found.to_numpy(zero_copy_only=False).astype(np.int64)


def _joined(a, b):
    return pc.binary_join_element_wise(a, b, "|")


def _known(rows) -> np.ndarray:
    """Where an `index_in` lookup found its value (the rows `is_in` says are in the set)."""
    return np.asarray(pc.is_valid(rows).to_numpy(zero_copy_only=False), dtype=bool)


def _pairs_repeat(link_a, link_e, a_row, e_row, n_sources: int) -> bool:
    """Whether some (assertion, source) pair of the links occurs twice, as the joined keys
    `_joined` say: there, "a|b" + "c" and "a" + "b|c" are one key.

    Where every link names a known assertion and a known source and no id holds the
    separator, two links' keys are equal exactly when their rows in those tables are (a row
    holds one id; equal ids find the same row), so each pair is one int64 and a sort finds
    a repeat: no string per link and no hash table of them (~10 ms, a 2 MB copy and its
    page faults at 100,000 links). Anywhere else the joined keys are counted, as before."""
    if (
        not a_row.null_count
        and not e_row.null_count
        and not _holds_separator(link_a)
        and not _holds_separator(link_e)
    ):
        keys = a_row.to_numpy(zero_copy_only=False).astype(np.int64) * max(n_sources, 1)
        keys += e_row.to_numpy(zero_copy_only=False)
        keys.sort()
        return bool((keys[1:] == keys[:-1]).any())
    pairs = _joined(link_a, link_e)
    return distinct_count(pairs) != len(pairs)


def _holds_separator(values) -> bool:
    """Whether a cell of a string column holds "|" (a scan of its bytes, no copy)."""
    if values.type != pa.string():
        return bool(pc.any(pc.match_substring(values, "|")).as_py())
    data = values.buffers()[2]
    if data is None:
        return False  # every cell is empty
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)
    start, end = offsets[values.offset], offsets[values.offset + len(values)]
    return bool((np.frombuffer(data, dtype=np.uint8)[start:end] == ord("|")).any())


def _mask(flags) -> np.ndarray:
    return np.asarray(pc.fill_null(flags, True).to_numpy(zero_copy_only=False), dtype=bool)

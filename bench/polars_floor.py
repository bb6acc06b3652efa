"""The practical floor of validating a domain's tables: the same rules, vectorised in polars.

`python -m bench.polars_floor RULES.json DATA_DIR` reads the four graph tables and checks
every column rule `kgbench validate` checks (required, pattern, enum, integer/float/boolean,
range, unique, length, control characters), the cross-table rules (known class and id
prefix, known predicate, known subject/object/population of an allowed class, relation class,
direction, links to known assertions and sources, no repeated link, a link or a reason), the
graph's integrity rules (`compiler.integrity`: no repeated claim, no self-loop, no causal
cycle, no pair both raised and lowered, no two entities a reader cannot tell apart by name or
synonym, a population_id that names a population) and the evidence rules that apply to these
tables (`compiler.evidence`: a null-effect predicate if and only if causal_status no_effect;
no benefit claim beside a no-effect or harm claim on one intervention, outcome and
population). Rules that read declarations the synthetic domain has none of (study scope of
trials, intervention classes and their members, declared conflicts) are not re-implemented.
It then prints how many rows break a rule per table. It words no messages and builds no
graph: it is what a minimal checker of the same rules costs, the baseline `compile_bench`
holds `kgbench validate` to. The rules come from the compiled schema (`rules_json`, written
outside the timed region), so both check exactly the same thing; `bad_lines` gives the
(file, line) of every row it flags, which `tests/test_bench_polars_floor.py` holds to the
errors planted in a synthetic domain (kgbench reports exactly those).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import polars as pl

TABLES = {
    "entities": "entities.csv",
    "evidence_sources": "evidence_sources.csv",
    "assertions": "assertions.csv",
    "assertion_evidence": "assertion_evidence.csv",
}
CONTROL = r"[\x00-\x1f\x7f-\x{9f}]"
TEXT_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x{9f}]"


def rules_json(model: Any) -> dict[str, Any]:
    """The rule parameters of a `compiler.schema.SchemaModel`, as plain data."""
    return {
        "tables": {
            name: [
                {
                    "name": c.name,
                    "range": c.range,
                    "required": c.required,
                    "multivalued": c.multivalued,
                    "identifier": c.identifier,
                    "pattern": c.pattern,
                    "minimum": c.minimum,
                    "maximum": c.maximum,
                    "enum": list(c.enum_values),
                    "max_length": c.max_length,
                    "single_line": c.single_line,
                }
                for c in model.tables[name].columns
            ]
            for name in TABLES
        },
        "classes": {c.name: c.id_prefix for c in model.entity_classes},
        "population_classes": [c.name for c in model.entity_classes if c.is_population],
        "intervention_classes": [
            c.name for c in model.entity_classes if c.is_intervention or c.is_group
        ],
        "predicates": {
            p.name: {
                "subject": list(p.subject_classes),
                "object": list(p.object_classes),
                "relation_class": p.relation_class,
                "direction": p.direction,
                "role": p.role,
            }
            for p in model.predicates
        },
    }


def _column_bad(col: dict[str, Any]) -> pl.Expr:
    """True where a cell breaks one of its column's rules."""
    v = pl.col(col["name"]).str.strip_chars()
    empty = v == ""
    bad = empty if col["required"] else pl.lit(False)
    items = v.str.split("|") if col["multivalued"] else None

    def each(expr_of) -> pl.Expr:
        if items is None:
            return ~empty & expr_of(v)
        return ~empty & items.list.eval(expr_of(pl.element().str.strip_chars())).list.any()

    if col["pattern"]:
        bad = bad | each(lambda x: ~x.str.contains(col["pattern"]))
    if col["enum"]:
        bad = bad | each(lambda x: ~x.is_in(col["enum"]))
    if col["range"] in ("integer", "float"):
        dtype = pl.Int64 if col["range"] == "integer" else pl.Float64
        number = v.cast(dtype, strict=False)
        bad = bad | (~empty & number.is_null())
        if col["minimum"] is not None:
            bad = bad | (number < col["minimum"])
        if col["maximum"] is not None:
            bad = bad | (number > col["maximum"])
    if col["range"] == "boolean":
        bad = bad | (~empty & ~v.is_in(["true", "false"]))
    if col["identifier"]:  # a repeat is the error, not the first occurrence
        bad = bad | (~empty & ~v.is_first_distinct())
    if col["max_length"]:
        bad = bad | each(lambda x: x.str.len_chars() > col["max_length"])
    control = CONTROL if col["single_line"] else TEXT_CONTROL
    return (bad | v.str.contains(control)).fill_null(True)


CHAIN_ROLES = ("mechanistic", "causal")  # compiler.integrity.CHAIN_ROLES
MAX_PRUNING_ROUNDS = 64


def _norm(column: str) -> pl.Expr:
    """compiler.integrity._norm: lowercase, runs of anything but [0-9a-z] as one space."""
    return pl.col(column).str.to_lowercase().str.replace_all(r"[^0-9a-z]+", " ").str.strip_chars()


def _names_bad(ents: pl.DataFrame) -> pl.Series:
    """Entities a reader cannot tell apart: a repeated normalised name, or a synonym that is
    another entity's name (the first entity of that name) or an earlier entity's synonym
    (integrity duplicate_name, synonym_collision)."""
    names = ents.select(pl.col("_row"), _norm("name").alias("key"))
    first = pl.col("key").is_first_distinct()
    repeated = names.filter(~first)["_row"]
    owners = names.filter(first & (pl.col("key") != "")).rename({"_row": "owner"})
    synonyms = (
        ents.select(pl.col("_row"), pl.col("synonyms").str.split("|").alias("key"))
        .explode("key")
        .with_columns(_norm("key").alias("key"))
        .filter(pl.col("key") != "")
        .unique(maintain_order=True)
        .join(owners, on="key", how="left", maintain_order="left")
    )
    named = pl.col("owner").is_not_null() & (pl.col("owner") != pl.col("_row"))
    clash = synonyms.filter(named)["_row"]
    shared = synonyms.filter(~named).filter(~first)["_row"]
    return pl.concat([repeated, clash, shared])


def _cyclic(edges: pl.DataFrame) -> pl.Series:
    """Rows of edges that may lie on a cycle: edges out of a node nothing enters, or into a
    node nothing leaves, dropped round by round (compiler.integrity._acyclic)."""
    for _ in range(MAX_PRUNING_ROUNDS):
        kept = edges.filter(
            pl.col("subject_id").is_in(edges["object_id"].implode())
            & pl.col("object_id").is_in(edges["subject_id"].implode())
        )
        if kept.height == edges.height:
            break
        edges = kept
    return edges["_row"]


def bad_rows(rules: dict[str, Any], data: Path) -> dict[str, pl.Series]:
    """The row numbers (0-based, header excluded) that break a rule, per table."""
    frames = {
        name: pl.read_csv(
            data / file, infer_schema=False, empty_string_is_null=False
        ).with_row_index("_row")
        for name, file in TABLES.items()
    }
    bad = {
        name: frames[name].select(
            pl.any_horizontal(
                [_column_bad(c) for c in rules["tables"][name] if c["name"] in frames[name].columns]
            ).alias("bad")
        )["bad"]
        for name in TABLES
    }
    ents = frames["entities"].filter(~bad["entities"])
    classes = pl.DataFrame(
        {"category": list(rules["classes"]), "prefix": list(rules["classes"].values())}
    )
    ents = ents.join(classes, on="category", how="left")
    ent_bad = ents["prefix"].is_null() | (
        ents["id"].str.replace(r"_[0-9]+$", "") != ents["prefix"]
    ).fill_null(True)
    good = ents.filter(~ent_bad).select("id", "category")
    populations = good.filter(pl.col("category").is_in(rules["population_classes"]))["id"]
    interventions = good.filter(pl.col("category").is_in(rules["intervention_classes"]))["id"]

    asr = frames["assertions"].filter(~bad["assertions"])
    preds = rules["predicates"]
    allowed = pl.DataFrame(
        [
            {"predicate": n, "side": side, "category": c}
            for n, p in preds.items()
            for side in ("subject", "object")
            for c in p[side]
        ]
    )
    fixed = pl.DataFrame(
        {
            "predicate": list(preds),
            "want_relation": [p["relation_class"] for p in preds.values()],
            "want_direction": [p["direction"] or "" for p in preds.values()],
            "role": [p["role"] or "" for p in preds.values()],
        }
    )
    checked = asr.join(fixed, on="predicate", how="left", maintain_order="left")
    for side in ("subject", "object"):
        cats = good.rename({"id": f"{side}_id", "category": f"{side}_cat"})
        checked = checked.join(cats, on=f"{side}_id", how="left", maintain_order="left")
        ok = allowed.filter(pl.col("side") == side).select(
            pl.col("predicate"), pl.col("category").alias(f"{side}_cat"), pl.lit(True).alias(side)
        )
        checked = checked.join(
            ok, on=["predicate", f"{side}_cat"], how="left", maintain_order="left"
        )
    links = frames["assertion_evidence"].filter(~bad["assertion_evidence"])
    ev_ids = frames["evidence_sources"]["evidence_id"]
    link_bad = (
        ~links["assertion_id"].is_in(frames["assertions"]["assertion_id"].implode())
        | ~links["evidence_id"].is_in(ev_ids.implode())
        | ~links.select(pl.struct("assertion_id", "evidence_id").is_first_distinct())[:, 0]
    )
    linked = links.filter(~link_bad)["assertion_id"].implode()
    population = pl.col("population_id")
    row_bad = checked.select(
        (
            pl.col("want_relation").is_null()
            | pl.col("subject").is_null()
            | pl.col("object").is_null()
            | ((population != "") & ~population.is_in(ents["id"].implode()))
            | ((population != "") & ~population.is_in(populations.implode()))
            | (pl.col("relation_class") != pl.col("want_relation"))
            | ((pl.col("want_direction") != "") & (pl.col("direction") != pl.col("want_direction")))
            | (pl.col("assertion_id").is_in(linked) == (pl.col("no_evidence_reason") != ""))
            | ((pl.col("role") == "null_effect") != (pl.col("causal_status") == "no_effect"))
            | (pl.col("subject_id") == pl.col("object_id"))
        ).fill_null(True)
    )[:, 0]
    # integrity and evidence rules over the assertions that passed the row rules
    graph = checked.filter(~row_bad)
    triple = ["subject_id", "object_id", "population_id"]
    repeated = graph.filter(~pl.struct(*triple, "predicate").is_first_distinct())["_row"]
    chain = graph.filter(pl.col("role").is_in(CHAIN_ROLES))
    signed = chain.filter(pl.col("direction").is_in(["increase", "decrease"]))
    first_sign = pl.col("direction").first().over(triple)
    contrary = signed.filter(pl.col("direction") != first_sign)["_row"]
    cyclic = _cyclic(chain.select("_row", "subject_id", "object_id"))
    effect = (
        pl.when(pl.col("role") == "null_effect")
        .then(pl.lit("no_effect"))
        .when((pl.col("role") == "causal") & (pl.col("direction") == "decrease"))
        .then(pl.lit("benefit"))
        .when((pl.col("role") == "causal") & (pl.col("direction") == "increase"))
        .then(pl.lit("harm"))
    )
    claims = graph.filter(pl.col("subject_id").is_in(interventions.implode())).with_columns(
        effect.alias("effect")
    )
    claims = claims.filter(pl.col("effect").is_not_null())
    benefit_at = claims.filter(pl.col("effect") == "benefit").select(triple).unique()
    contradicted = claims.filter(pl.col("effect") != "benefit").join(
        benefit_at, on=triple, how="semi"
    )["_row"]
    return {
        "entities": pl.concat(
            [
                frames["entities"].filter(bad["entities"])["_row"],
                ents.filter(ent_bad)["_row"],
                _names_bad(good.join(ents.select("id", "_row", "name", "synonyms"), on="id")),
            ]
        ).unique(),
        "evidence_sources": frames["evidence_sources"].filter(bad["evidence_sources"])["_row"],
        "assertions": pl.concat(
            [
                frames["assertions"].filter(bad["assertions"])["_row"],
                checked.filter(row_bad)["_row"],
                repeated,
                contrary,
                cyclic,
                contradicted,
            ]
        ).unique(),
        "assertion_evidence": pl.concat(
            [
                frames["assertion_evidence"].filter(bad["assertion_evidence"])["_row"],
                links.filter(link_bad)["_row"],
            ]
        ).unique(),
    }


def check(rules: dict[str, Any], data: Path) -> dict[str, int]:
    """How many rows of each table break a rule."""
    return {name: len(rows) for name, rows in bad_rows(rules, data).items()}


def bad_lines(rules: dict[str, Any], data: Path) -> set[tuple[str, int]]:
    """(file name, line) of every row that breaks a rule: line 1 is the header, and no cell
    of these tables spans lines."""
    return {(TABLES[name], row + 2) for name, rows in bad_rows(rules, data).items() for row in rows}


def main() -> None:
    rules = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps(check(rules, Path(sys.argv[2]))))


if __name__ == "__main__":
    main()

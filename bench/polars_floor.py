"""The practical floor of validating a domain's tables: the same rules, vectorised in polars.

`python -m bench.polars_floor RULES.json DATA_DIR` reads the four graph tables and checks
every column rule `kgbench validate` checks (required, pattern, enum, integer/float/boolean,
range, unique, length, control characters) and the cross-table rules (known class and id
prefix, known predicate, known subject/object/population of an allowed class, relation class,
direction, links to known assertions and sources, no repeated link, a link or a reason), then
prints how many rows break a rule per table. It words no messages and builds no graph: it is
what a minimal checker of the same rules costs, the baseline `compile_bench` holds `kgbench
validate` to. The rules come from the compiled schema (`rules_json`, written outside the
timed region), so both check exactly the same thing.
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
        "predicates": {
            p.name: {
                "subject": list(p.subject_classes),
                "object": list(p.object_classes),
                "relation_class": p.relation_class,
                "direction": p.direction,
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
    if col["identifier"]:
        bad = bad | (~empty & v.is_duplicated())
    if col["max_length"]:
        bad = bad | each(lambda x: x.str.len_chars() > col["max_length"])
    control = CONTROL if col["single_line"] else TEXT_CONTROL
    return (bad | v.str.contains(control)).fill_null(True)


def check(rules: dict[str, Any], data: Path) -> dict[str, int]:
    frames = {
        name: pl.read_csv(data / file, infer_schema=False, empty_string_is_null=False)
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
        }
    )
    checked = asr.join(fixed, on="predicate", how="left")
    for side in ("subject", "object"):
        cats = good.rename({"id": f"{side}_id", "category": f"{side}_cat"})
        checked = checked.join(cats, on=f"{side}_id", how="left")
        ok = allowed.filter(pl.col("side") == side).select(
            pl.col("predicate"), pl.col("category").alias(f"{side}_cat"), pl.lit(True).alias(side)
        )
        checked = checked.join(ok, on=["predicate", f"{side}_cat"], how="left")
    links = frames["assertion_evidence"].filter(~bad["assertion_evidence"])
    ev_ids = frames["evidence_sources"]["evidence_id"]
    link_bad = (
        ~links["assertion_id"].is_in(asr["assertion_id"].implode())
        | ~links["evidence_id"].is_in(ev_ids.implode())
        | links.select(pl.struct("assertion_id", "evidence_id").is_duplicated())[:, 0]
    )
    linked = links.filter(~link_bad)["assertion_id"].implode()
    asr_bad = checked.select(
        pl.col("want_relation").is_null()
        | pl.col("subject").is_null()
        | pl.col("object").is_null()
        | ((pl.col("population_id") != "") & ~pl.col("population_id").is_in(ents["id"].implode()))
        | (pl.col("relation_class") != pl.col("want_relation"))
        | ((pl.col("want_direction") != "") & (pl.col("direction") != pl.col("want_direction")))
        | (pl.col("assertion_id").is_in(linked) == (pl.col("no_evidence_reason") != ""))
    )[:, 0]
    return {
        "entities": int(bad["entities"].sum() + ent_bad.sum()),
        "evidence_sources": int(bad["evidence_sources"].sum()),
        "assertions": int(bad["assertions"].sum() + asr_bad.fill_null(True).sum()),
        "assertion_evidence": int(bad["assertion_evidence"].sum() + link_bad.sum()),
    }


def main() -> None:
    rules = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps(check(rules, Path(sys.argv[2]))))


if __name__ == "__main__":
    main()

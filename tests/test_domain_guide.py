"""Issue 29 item 8: the curator's guide (domains/README.md) is the code's.

Every key the compiler accepts in `domain.yaml` and `scenarios.yaml` (the declaration classes
of spec/declarations.yaml reachable from `DomainConfig` and `ScenarioRules`) is documented in
the guide's reference, and the reference names no key the compiler does not accept; every
column of every table is in the guide's table headers, in order.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from compiler.schema import load_schema
from kgbench.errors import Location

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "domains" / "README.md"
ROOTS = ("DomainConfig", "ScenarioRules")


def _classes() -> dict:
    return yaml.safe_load((REPO / "spec" / "declarations.yaml").read_text())["classes"]


def _keys(classes: dict, name: str) -> dict:
    c = classes[name]
    out = dict(_keys(classes, c["is_a"])) if c.get("is_a") in classes else {}
    out.update(c.get("attributes") or {})
    return out


def accepted() -> dict[str, set[str]]:
    """Declaration class -> its keys, for every class a domain's YAML files can reach."""
    classes = _classes()
    out: dict[str, set[str]] = {}

    def walk(name: str) -> None:
        if name in out or name == "Any":
            return
        keys = _keys(classes, name)
        out[name] = set(keys)
        for spec in keys.values():
            target = (spec or {}).get("range")
            if target in classes:
                walk(target)

    for root in ROOTS:
        walk(root)
    return out


def documented() -> dict[str, set[str]]:
    """Class -> the keys its reference table in the guide lists."""
    text = GUIDE.read_text(encoding="utf-8")
    reference = text.split("## Reference: every key the compiler accepts", 1)[1]
    out: dict[str, set[str]] = {}
    current = None
    for line in reference.splitlines():
        heading = re.match(r"^#### (\w+)", line)
        if heading:
            current = heading[1]
            out[current] = set()
            continue
        row = re.match(r"^\| `(\w+)`", line)
        if row and current:
            out[current].add(row[1])
    return out


def test_every_accepted_key_is_documented_and_no_other() -> None:
    want, have = accepted(), documented()
    assert "IdScheme" in want and "class_prefix" in want["IdScheme"]  # the walk reaches them
    missing = {c: sorted(k - have.get(c, set())) for c, k in want.items() if k - have.get(c, set())}
    assert not missing, (
        f"keys the compiler accepts but domains/README.md does not document: {missing}"
    )
    extra = {c: sorted(k - want.get(c, set())) for c, k in have.items() if k - want.get(c, set())}
    assert not extra, f"keys domains/README.md documents but the compiler does not accept: {extra}"


def test_every_table_column_is_in_the_guide() -> None:
    model = load_schema(
        REPO / "domains" / "cardio" / "schema" / "cardio.yaml", "CardioPredicate", Location("x")
    )
    text = GUIDE.read_text(encoding="utf-8")
    headers = dict(re.findall(r"^`(\w+)\.csv`(?: \([^)]*\))?: `([\w,]+)`", text, flags=re.M))
    for table, spec in model.tables.items():
        columns = [c.name for c in spec.columns]
        assert table in headers, f"domains/README.md has no header line for {table}.csv"
        listed = headers[table].split(",")
        optional = [c for c in columns if c not in listed]
        assert listed == [c for c in columns if c in listed], (table, listed, columns)
        for column in optional:  # optional columns documented in the table's own bullets
            assert f"`{column}`" in text, (table, column)


def test_the_guide_names_id_schemes_and_what_gold_needs() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    for phrase in (
        "## Identifier schemes (`id_schemes`)",
        "`class_prefix`",
        "## What gold needs",
        "A mechanism chain never qualifies",
        "`recommendation_class` in `outcome_evidence.guideline_classes`",
        "generated/<name>/scenarios/scenarios.jsonl",
        "is_a:\nInterventionClass",
    ):
        assert phrase in text, phrase

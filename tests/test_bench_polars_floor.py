"""The polars floor of `kgbench validate` (bench/polars_floor.py, issue 33 item 5) checks the
same rules: on a synthetic domain with every kind of planted error it flags exactly the rows
kgbench reports (the planted ones), and on its valid twin none, so the bench's floor ratio
compares like with like."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from bench.polars_floor import bad_lines, check, rules_json
from bench.synth import ERROR_KINDS, evidence_sources_for, make_domain
from compiler.frontend import load_domain
from compiler.schema import load_schema
from kgbench.errors import Location, UserErrors

REPORTED = re.compile(r"data/(\w+\.csv), line (\d+), field '\w+'")
N, PLANTED = 2_000, 4 * len(ERROR_KINDS)


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list, dict]:
    root = tmp_path_factory.mktemp("floor")
    sources = evidence_sources_for(N, PLANTED)
    valid, _ = make_domain(root / "valid", N, evidence_sources=sources)
    broken, planted = make_domain(
        root / "broken", N, inject_errors=PLANTED, evidence_sources=sources
    )
    model = load_schema(valid / "schema" / "synth.yaml", "SynthPredicate", Location("synth"))
    rules = json.loads(json.dumps(rules_json(model)))  # as the bench hands it over: JSON
    return valid, broken, planted, rules


def test_the_floor_flags_exactly_what_kgbench_reports(twins) -> None:
    _, broken, planted, rules = twins
    with pytest.raises(UserErrors) as caught:
        load_domain(broken, derive=False)
    reported = {
        (m.group(1), int(m.group(2)))
        for m in (REPORTED.search(str(p)) for p in caught.value.problems)
        if m
    }
    assert {p.kind for p in planted} == set(ERROR_KINDS)  # every kind is in play
    assert reported == {(p.file, p.line) for p in planted}
    assert bad_lines(rules, broken / "data") == reported


def test_the_floor_flags_nothing_in_the_valid_twin(twins) -> None:
    valid, _, _, rules = twins
    load_domain(valid, derive=False)  # kgbench: valid
    counts = check(rules, valid / "data")
    assert set(counts) == {"entities", "evidence_sources", "assertions", "assertion_evidence"}
    assert not any(counts.values())


def _edit_assertions(rows: list[dict[str, str]]) -> None:
    """A causal claim repeated (duplicate_triple)."""
    first, second = [r for r in rows if r["predicate"] == "CAUSES_INCREASE_IN"][:2]
    for field in ("subject_id", "object_id", "population_id"):
        second[field] = first[field]


def _self_loop(rows: list[dict[str, str]]) -> None:
    row = next(r for r in rows if r["predicate"] == "CAUSES_INCREASE_IN")
    row["object_id"] = row["subject_id"]


def _null_status(rows: list[dict[str, str]]) -> None:
    """causal_status no_effect on a causal predicate (the evidence rule on null claims)."""
    next(r for r in rows if r["predicate"] == "CAUSES_INCREASE_IN")["causal_status"] = "no_effect"


def _same_name(rows: list[dict[str, str]]) -> None:
    rows[1]["name"] = rows[0]["name"].upper() + "!"  # the same once normalised


def _shared_synonym(rows: list[dict[str, str]]) -> None:
    rows[3]["synonyms"] = rows[2]["synonyms"]  # synonym_collision, the later entity


def _synonym_is_a_name(rows: list[dict[str, str]]) -> None:
    rows[5]["synonyms"] += "|" + rows[4]["name"]


@pytest.mark.parametrize(
    ("table", "edit"),
    [
        ("assertions.csv", _edit_assertions),
        ("assertions.csv", _self_loop),
        ("assertions.csv", _null_status),
        ("entities.csv", _same_name),
        ("entities.csv", _shared_synonym),
        ("entities.csv", _synonym_is_a_name),
    ],
)
def test_the_floor_sees_the_integrity_and_evidence_rules(twins, tmp_path, table, edit) -> None:
    """Rules no planted kind exercises (a repeated claim, a self-loop, a null-effect status,
    names a reader cannot tell apart): the floor flags the rows kgbench reports."""
    valid, _, _, rules = twins
    root = tmp_path / "copy"
    shutil.copytree(valid.parent.parent, root, symlinks=True)
    domain = root / "domains" / "synth"
    path = domain / "data" / table
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, list(reader)
    edit(rows)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(UserErrors) as caught:
        load_domain(domain, derive=False)
    reported = {
        (m.group(1), int(m.group(2)))
        for m in (REPORTED.search(str(p)) for p in caught.value.problems)
        if m
    }
    assert reported
    assert bad_lines(rules, domain / "data") == reported

"""The shortcuts of `kgbench validate` on valid data never hide an error.

Each shortcut answers "can this check find anything?" with vectorised kernels and skips the
row-by-row walk only on "no": the integrity prechecks over the tables' Arrow columns
(`integrity._clear_checks`) and the byte scan before the control-character expression
(`rules._may_hold_control`). On many small random inputs, a check a shortcut clears must find
nothing when walked in full, and the control-character rule must flag exactly the rows the
expression alone flags.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.compute as pc

from compiler import integrity, ir, rules
from kgbench.errors import Location

PREDICATES = {
    name: SimpleNamespace(name=name, role=role)
    for name, role in (
        ("CAUSES_INCREASE_IN", "causal"),
        ("TARGETS", "mechanistic"),
        ("ASSOCIATED_WITH", "association"),
    )
}
NAMES = ["Alpha", "alpha!", "Beta", "Gamma-1", "gamma 1", "Delta", "Épsilon", "Zeta", " ", "Eta"]


def _locate(*_: str) -> Location:
    return Location("x.csv", 2)


def _graph(rng: random.Random):
    nodes = [f"N_{i}" for i in range(rng.randint(2, 6))]
    rows = [
        (
            f"A_{i}",
            rng.choice(nodes),
            rng.choice(list(PREDICATES)),
            rng.choice(nodes),
            rng.choice(["increase", "decrease", "none"]),
            rng.choice([None, None, "N_0"]),
        )
        for i in range(rng.randint(1, 8))
    ]
    people = [
        (n, rng.choice(NAMES) + ("" if rng.random() < 0.5 else str(i)), rng.sample(NAMES, 2)[: rng.randint(0, 2)])
        for i, n in enumerate(nodes)
    ]  # fmt: skip
    assertions = [
        ir.Assertion(a, s, p, o, "r", d, "c", "e", 0.5, True, None, pop, "t", (), None)
        for a, s, p, o, d, pop in rows
    ]
    categories = [rng.choice(["C", "Pop"]) for _ in nodes]
    entities = [
        ir.Entity(n, cat, name, tuple(syn), None, ())
        for (n, name, syn), cat in zip(people, categories, strict=True)
    ]
    fields = ("assertion_id", "subject_id", "predicate", "object_id", "direction", "population_id")
    columns = {
        "assertions": {
            f: pa.array(["" if v is None else v for v in values], pa.string())
            for f, values in zip(fields, zip(*rows, strict=True), strict=True)
        },
        "entities": {
            "id": pa.array(nodes, pa.string()),
            "category": pa.array(categories, pa.string()),
            "name": pa.array([p[1] for p in people], pa.string()),
            "synonyms": pa.array(["|".join(p[2]) for p in people], pa.string()),
        },
    }
    return assertions, entities, columns


def test_a_cleared_integrity_check_finds_nothing_when_walked() -> None:
    rng = random.Random(17)
    cleared = 0
    seen_clear: set[str] = set()
    for _ in range(1500):
        assertions, entities, columns = _graph(rng)
        cycling = set(rng.sample(list(PREDICATES), rng.randint(0, 1)))
        classes = [SimpleNamespace(name="C", is_population=False)]
        if rng.random() < 0.8:
            classes.append(SimpleNamespace(name="Pop", is_population=True))
        population_classes = {c.name for c in classes if c.is_population}
        clear = integrity._clear_checks(
            columns, len(entities), len(assertions), PREDICATES, cycling, population_classes
        )
        walked = {
            "triples": integrity._triples(assertions, _locate),
            "cycles": integrity._cycles(assertions, PREDICATES, cycling, _locate),
            "signs": integrity._signs(assertions, PREDICATES, _locate),
            "names": integrity._names(entities, _locate),
            "references": integrity._references(
                assertions, {e.id: e for e in entities}, classes, _locate
            ),
        }
        for check in clear:
            assert not walked[check], (check, assertions, entities)
        cleared += len(clear)
        seen_clear |= clear
    assert cleared > 1500  # the shortcut does take effect
    assert seen_clear >= {"triples", "cycles", "signs", "names", "references"}


def test_the_control_byte_scan_agrees_with_the_expression() -> None:
    rng = random.Random(5)
    cells = [
        "abc",
        "d\x85x",
        "tab\there",
        "nl\nx",
        "é",
        "\x7f",
        "\u00a0",
        "\x00",
        "x\x1fy",
        "\r",
        "a\x0bb",
        "",
    ]
    for _ in range(1500):
        values = pa.array(rng.choices(cells, k=rng.randint(1, 6)), pa.string())
        values = values.slice(rng.randint(0, len(values) - 1))
        for single_line in (True, False):
            col = SimpleNamespace(single_line=single_line)
            forbidden = rules.RE2_CONTROL if single_line else rules.RE2_TEXT_CONTROL
            expected = rules._where(pc.match_substring_regex(values, forbidden))
            assert list(rules._has_control(col, values)) == list(expected), values

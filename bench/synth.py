"""A synthetic domain of any size, for benchmarks: the cardio schema over generated tables.

Shape: interventions -> targets -> processes -> outcomes, so causal chains exist at scale.
`inject_errors` plants that many errors, round-robin over every kind the validator checks
(`ERROR_KINDS`: bad enum value, pattern, range, empty required value, dangling subject,
object and population, class and predicate mismatches, unknown class and id prefix, repeated
ids and links, links to missing assertions or sources, an assertion without evidence, a bad
cell in another table); their (file, line, field) positions are returned, so a benchmark can
check that validation reports exactly the planted set, in one pass.
"""

from __future__ import annotations

import csv
import os
import random
import shutil
from pathlib import Path
from typing import NamedTuple

from kgbench.locations import CHECKOUT as REPO_ROOT

CLASSES = [
    ("Drug", "DRG"), ("ProteinTarget", "PRT"), ("BiologicalProcess", "BPR"),
    ("ClinicalOutcome", "OUT"), ("Disease", "DIS"), ("AdverseEffect", "ADE"),
    ("Contraindication", "CTI"), ("Population", "POP"), ("RiskFactor", "RSK"), ("Intervention", "INT"),
]  # fmt: skip
ASSERTION_HEADER = [
    "assertion_id", "subject_id", "predicate", "object_id", "relation_class", "direction",
    "causal_status", "evidence_level", "confidence", "validated", "context", "population_id",
    "temporality", "source_databases", "no_evidence_reason",
]  # fmt: skip
HEADERS = {
    "entities.csv": ["id", "category", "name", "synonyms", "description", "xrefs"],
    "evidence_sources.csv": [
        "evidence_id", "source_type", "title", "citation", "year", "evidence_tier", "study_level",
    ],
    "assertions.csv": ASSERTION_HEADER,
    "assertion_evidence.csv": ["assertion_id", "evidence_id"],
}  # fmt: skip


class Planted(NamedTuple):
    """One planted error: where validation must report it, and its kind."""

    file: str
    line: int
    field: str
    kind: str


# Every kind of data error `kgbench validate` checks, cell rules and cross-table rules alike.
ERROR_KINDS = (
    "enum", "pattern", "range", "required", "dangling_subject", "dangling_object",
    "dangling_population", "class_mismatch", "unknown_predicate", "relation_class_mismatch",
    "direction_mismatch", "no_evidence", "unknown_class", "id_prefix", "duplicate_id",
    "missing_assertion", "missing_source", "duplicate_link", "source_year",
)  # fmt: skip


def make_domain(
    root: Path,
    n_assertions: int,
    seed: int = 7,
    inject_errors: int = 0,
    id_width: int = 6,
    evidence_sources: int | None = None,
) -> tuple[Path, list[Planted]]:
    """Write domains/synth under `root` (with a spec link beside it); returns (dir, planted
    errors, sorted by (file name, line, field)).

    `id_width`: digits of every id's number (7 for the PrimeKG-scale benchmark).
    `evidence_sources`: how many (default one per 1,000 assertions, at least 100); at most
    `len(ERROR_KINDS)` errors can be planted per evidence source (`evidence_sources_for`)."""
    rng = random.Random(seed)
    domain = root / "domains" / "synth"
    if domain.exists():
        shutil.rmtree(domain)
    (domain / "data").mkdir(parents=True)
    spec_link = root / "spec"
    if not spec_link.exists():
        os.symlink(REPO_ROOT / "spec", spec_link)
    schema = (REPO_ROOT / "domains" / "cardio" / "schema" / "cardio.yaml").read_text()
    schema = (
        schema.replace("domains/cardio", "domains/synth")
        .replace("kgbench.cardio", "kgbench.synth")
        .replace("name: cardio", "name: synth")
    )
    (domain / "schema").mkdir()
    (domain / "schema" / "synth.yaml").write_text(
        schema.replace("CardioPredicate", "SynthPredicate")
    )
    (domain / "domain.yaml").write_text(
        "name: synth\ntitle: Synthetic benchmark domain\nversion: 1.0.0\nschema: schema/synth.yaml\n"
        "predicate_enum: SynthPredicate\ntables:\n  entities: data/entities.csv\n"
        "  assertions: data/assertions.csv\n  evidence_sources: data/evidence_sources.csv\n"
        "  assertion_evidence: data/assertion_evidence.csv\n"
        "prompt:\n  domain_phrase: synthetic cardiology\n"
    )
    per_class = max(10, n_assertions // 40)
    ids = {
        cls: [f"{pfx}_{i:0{id_width}d}" for i in range(1, per_class + 1)] for cls, pfx in CLASSES
    }
    # databases: a trial would have to name what it studied
    n_ev = evidence_sources or max(100, n_assertions // 1000)
    shapes = [
        ("TARGETS", "Drug", "ProteinTarget", "mechanistic", "decrease", "causal"),
        ("PARTICIPATES_IN", "ProteinTarget", "BiologicalProcess", "mechanistic", "none", "causal"),
        (
            "CAUSES_INCREASE_IN",
            "BiologicalProcess",
            "ClinicalOutcome",
            "causal",
            "increase",
            "causal",
        ),
        ("CAUSES_DECREASE_IN", "Intervention", "RiskFactor", "causal", "decrease", "causal"),
        ("MAY_CAUSE_ADVERSE_EFFECT", "Drug", "AdverseEffect", "safety", "none", "not_applicable"),
        ("INDICATED_FOR", "Drug", "Disease", "therapeutic", "none", "not_applicable"),
    ]
    rows = []
    triples: set[tuple[str, str, str]] = set()  # compile refuses a claim made twice
    for i in range(1, n_assertions + 1):
        pred, s, o, rel, direction, status = shapes[i % len(shapes)]
        subject, obj = rng.choice(ids[s]), rng.choice(ids[o])
        while (subject, pred, obj) in triples:
            subject, obj = rng.choice(ids[s]), rng.choice(ids[o])
        triples.add((subject, pred, obj))
        rows.append([
            f"ASR_{i:0{id_width}d}", subject, pred, obj, rel, direction, status,
            rng.choice(["high", "moderate", "low"]), f"{rng.random():.3f}", rng.choice(["true", "false"]),
            "synthetic", "", "long_term", "DrugBank", "",
        ])  # fmt: skip
    entity_rows = [[eid, cls, f"{cls} {i}", f"{cls.lower()}-{i}", "", ""]
                   for cls, _ in CLASSES for i, eid in enumerate(ids[cls])]  # fmt: skip
    links = [
        [f"ASR_{i:0{id_width}d}", f"EV_{(i % n_ev) + 1:0{id_width}d}"]
        for i in range(1, n_assertions + 1)
    ]
    evidence_rows = [
        [f"EV_{i:0{id_width}d}", "database", f"Database {i}", f"Group {i}, Journal, 2020", "2020",
         "tier_4", "false"]
        for i in range(1, n_ev + 1)
    ]  # fmt: skip
    tables = {
        "entities.csv": entity_rows,
        "assertions.csv": rows,
        "assertion_evidence.csv": links,
        "evidence_sources.csv": evidence_rows,
    }
    planted = _plant(tables, inject_errors, per_class, rng, id_width)
    for name, header in HEADERS.items():
        with (domain / "data" / name).open("w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(tables[name])
    return domain, planted


def evidence_sources_for(n_assertions: int, errors: int) -> int:
    """Enough evidence sources to plant `errors` errors in a domain of `n_assertions` (the
    default count when that is enough), so a valid twin can be made the same size."""
    return max(100, n_assertions // 1000, -(-errors // len(ERROR_KINDS)))


def _plant(
    tables: dict[str, list[list[str]]],
    count: int,
    per_class: int,
    rng: random.Random,
    id_width: int,
) -> list[Planted]:
    """Plant `count` errors, round-robin over `ERROR_KINDS`, at most one per row, so each is
    reported exactly once at the (file, line, field) returned; nothing else is broken (an
    appended link names a clean assertion, a dropped link a clean assertion)."""
    rows, links = tables["assertions.csv"], tables["assertion_evidence.csv"]
    if count > len(ERROR_KINDS) * len(tables["evidence_sources.csv"]):
        raise ValueError(f"at most {len(ERROR_KINDS)} errors per evidence source can be planted")
    col = {name: ASSERTION_HEADER.index(name) for name in ASSERTION_HEADER}
    by_shape: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_shape.setdefault(row[col["predicate"]], []).append(index)
    for indices in by_shape.values():
        rng.shuffle(indices)
    used: set[int] = set()
    planted: list[Planted] = []
    kind = ""
    beyond = per_class + 1  # ids past every generated one: well-formed, and unknown

    def pick(predicate: str = "TARGETS") -> int:
        index = by_shape[predicate].pop()
        while index in used:
            index = by_shape[predicate].pop()
        used.add(index)
        return index

    def on_assertion(field: str, value: str, predicate: str = "TARGETS") -> None:
        index = pick(predicate)
        rows[index][col[field]] = value
        planted.append(Planted("assertions.csv", index + 2, field, kind))

    def append(table: str, row: list[str], field: str) -> None:
        tables[table].append(row)
        planted.append(Planted(table, len(tables[table]) + 1, field, kind))

    for k in range(count):
        kind, n = ERROR_KINDS[k % len(ERROR_KINDS)], beyond + k
        if kind == "enum":
            on_assertion("evidence_level", "hihg")
        elif kind == "pattern":
            on_assertion("predicate", "targets")
        elif kind == "range":
            on_assertion("confidence", "1.7")
        elif kind == "required":
            on_assertion("temporality", "")
        elif kind == "dangling_subject":
            on_assertion("subject_id", f"DRG_{n:0{id_width}d}")
        elif kind == "dangling_object":
            on_assertion("object_id", f"PRT_{n:0{id_width}d}")
        elif kind == "dangling_population":
            on_assertion("population_id", f"POP_{n:0{id_width}d}")
        elif kind == "class_mismatch":
            on_assertion("subject_id", "PRT_000001")
        elif kind == "unknown_predicate":
            on_assertion("predicate", "TARGETZ")
        elif kind == "relation_class_mismatch":
            on_assertion("relation_class", "causal")
        elif kind == "direction_mismatch":
            on_assertion("direction", "decrease", "CAUSES_INCREASE_IN")
        elif kind == "no_evidence":
            index = pick()
            links[index][1] = ""  # emptied now, left out when written
            planted.append(Planted("assertions.csv", index + 2, "no_evidence_reason", kind))
        elif kind == "unknown_class":
            append(
                "entities.csv", [f"DRG_{n:0{id_width}d}", "Drugg", f"x{n}", "", "", ""], "category"
            )
        elif kind == "id_prefix":
            append("entities.csv", [f"PRT_{n:0{id_width}d}", "Drug", f"y{n}", "", "", ""], "id")
        elif kind == "duplicate_id":
            append("entities.csv", ["DRG_000001", "Drug", f"z{n}", "", "", ""], "id")
        elif kind == "missing_assertion":
            missing = f"ASR_{len(rows) + 1 + k:0{id_width}d}"
            append("assertion_evidence.csv", [missing, "EV_000001"], "assertion_id")
        elif kind == "missing_source":
            aid = f"ASR_{pick() + 1:0{id_width}d}"
            unknown_source = f"EV_{len(tables['evidence_sources.csv']) + 1 + k:0{id_width}d}"
            append("assertion_evidence.csv", [aid, unknown_source], "evidence_id")
        elif kind == "duplicate_link":
            index = pick()
            append("assertion_evidence.csv", list(links[index]), "evidence_id")
        elif kind == "source_year":
            index = k // len(ERROR_KINDS)  # a row of its own each time
            tables["evidence_sources.csv"][index][4] = "2300"
            planted.append(Planted("evidence_sources.csv", index + 2, "year", kind))
    # an emptied link is a link left out (its assertion has none)
    emptied = [i for i, link in enumerate(links) if not link[1]]
    for i in reversed(emptied):
        del links[i]
    for j, p in enumerate(planted):
        if p.file == "assertion_evidence.csv":  # appended after the rows just left out
            planted[j] = p._replace(line=p.line - len(emptied))
    return sorted(planted)

"""A synthetic domain of any size, for benchmarks: the cardio schema over generated tables.

Shape: interventions -> targets -> processes -> outcomes, so causal chains exist at scale.
`inject_errors` plants known bad cells of kinds both validators must catch (bad enum value,
bad id pattern, out-of-range number, empty required value); their (line, field) positions
are returned so a benchmark can check that both validators found the same errors.
"""

from __future__ import annotations

import csv
import os
import random
import shutil
from pathlib import Path

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


def make_domain(
    root: Path, n_assertions: int, seed: int = 7, inject_errors: int = 0, id_width: int = 6
) -> tuple[Path, list[tuple[int, str]]]:
    """Write domains/synth under `root` (with a spec link beside it); returns (dir, planted errors).

    `id_width`: digits of every id's number (7 for the PrimeKG-scale benchmark)."""
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
    with (domain / "data" / "entities.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "category", "name", "synonyms", "description", "xrefs"])
        for cls, _ in CLASSES:
            for i, eid in enumerate(ids[cls]):
                w.writerow([eid, cls, f"{cls} {i}", f"{cls.lower()}-{i}", "", ""])
    n_ev = max(10, n_assertions // 1000)
    with (domain / "data" / "evidence_sources.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(
            [
                "evidence_id",
                "source_type",
                "title",
                "citation",
                "year",
                "evidence_tier",
                "study_level",
            ]
        )
        for i in range(1, n_ev + 1):
            w.writerow(
                [
                    f"EV_{i:0{id_width}d}",
                    "database",  # a trial would have to name what it studied
                    f"Database {i}",
                    f"Group {i}, Journal, 2020",
                    2020,
                    "tier_4",
                    "false",
                ]
            )
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
    planted: list[tuple[int, str]] = []
    kinds = [
        ("evidence_level", "hihg"),
        ("predicate", "targets"),
        ("confidence", "1.7"),
        ("temporality", ""),
    ]
    for k in range(inject_errors):
        index = (k * 7919 + 13) % n_assertions
        field, bad = kinds[k % len(kinds)]
        if any(line == index + 2 for line, _ in planted):
            continue
        rows[index][ASSERTION_HEADER.index(field)] = bad
        planted.append((index + 2, field))
    with (domain / "data" / "assertions.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(ASSERTION_HEADER)
        w.writerows(rows)
    with (domain / "data" / "assertion_evidence.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["assertion_id", "evidence_id"])
        for i in range(1, n_assertions + 1):
            w.writerow([f"ASR_{i:0{id_width}d}", f"EV_{(i % n_ev) + 1:0{id_width}d}"])
    return domain, sorted(planted)

"""Cross-reference coverage of a domain: how many entities that have a standard concept cite it.

    .venv/bin/python tools/xref_coverage.py cardio afib

Denominator: the domain's entities minus those judged to have no standard concept in the
declared vocabularies (spec/declarations/prefixes.yaml), listed with a reason in
tools/xref_coverage.yaml (composites such as "stroke or systemic embolism", unions of findings,
guideline- or trial-defined subgroups and populations, management strategies). An entity not
listed there counts as having a concept, so an entity added later without an xref lowers the
figure until someone curates it. Numerator: those with at least one xref (either the entities
table's column or data/xrefs.csv), as the compiled domain has them.

Beside that curated figure the tool reports **raw** coverage, over all entities with nothing
excluded, per class: any xref, an exact match (an xref the xrefs table does not declare broad,
narrow or close, SSSOM match types: the only kind a consumer may treat as the entity's id),
and an xref in the vocabulary a KG of that class is usually joined on (STANDARD below: drugs CHEBI/RxNorm/DrugBank, targets HGNC/UniProt, processes GO,
conditions MONDO/HP). The curated figure alone hides the entities judged to have no concept.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
# kgbench class -> the prefixes a consumer joins that class on (ecosystem review E9's scope).
CONDITIONS = ("MONDO", "HP")
STANDARD = {
    "Drug": ("CHEBI", "RXNORM", "DRUGBANK"),
    "ProteinTarget": ("HGNC", "UniProtKB", "NCBIGene"),
    "BiologicalProcess": ("GO",),
    "Disease": CONDITIONS,
    "RiskFactor": CONDITIONS,
    "ClinicalOutcome": CONDITIONS,
    "AdverseEffect": CONDITIONS,
    "Contraindication": CONDITIONS,
}


def coverage(domain_name: str) -> dict:
    sys.path.insert(0, str(REPO))
    from compiler.api import validate_domain

    domain = validate_domain(domain_name)
    judged = yaml.safe_load((Path(__file__).with_suffix(".yaml")).read_text())
    none = judged.get(domain_name, {}).get("no_standard_concept", {}) or {}
    ids = {e.id for e in domain.entities}
    unknown = sorted(set(none) - ids)
    with_concept = [e for e in domain.entities if e.id not in none]
    covered = [e for e in with_concept if e.xrefs]
    missing = [e.id for e in with_concept if not e.xrefs]
    matches = domain.xref_matches
    per_class: dict[str, dict[str, int]] = {}
    for e in domain.entities:
        exact = [x for x in e.xrefs if (e.id, x) not in matches]
        row = per_class.setdefault(
            e.category, {"entities": 0, "any": 0, "exact": 0, "standard": 0, "standard_exact": 0}
        )
        row["entities"] += 1
        row["any"] += bool(e.xrefs)
        row["exact"] += bool(exact)
        wanted = STANDARD.get(e.category)
        if wanted is not None:
            row["standard"] += any(x.split(":", 1)[0] in wanted for x in e.xrefs)
            row["standard_exact"] += any(x.split(":", 1)[0] in wanted for x in exact)
    return {
        "domain": domain_name,
        "raw_any": sum(bool(e.xrefs) for e in domain.entities),
        "raw_exact": sum(row["exact"] for row in per_class.values()),
        "inexact": len(domain.inexact_xrefs),
        "per_class": dict(sorted(per_class.items())),
        "entities": len(domain.entities),
        "no_standard_concept": len(ids & set(none)),
        "with_concept": len(with_concept),
        "covered": len(covered),
        "coverage": len(covered) / len(with_concept) if with_concept else 1.0,
        "no_confident_id": missing,
        "stale_judgements": unknown,
    }


def main(argv: list[str]) -> int:
    for name in argv or ["cardio", "afib"]:
        c = coverage(name)
        print(
            f"{c['domain']}: {c['covered']}/{c['with_concept']} entities with a standard concept "
            f"cite it ({c['coverage']:.1%}); {c['no_standard_concept']} of {c['entities']} judged "
            "to have none"
        )
        raw = c["raw_any"] / c["entities"] if c["entities"] else 1.0
        exact = c["raw_exact"] / c["entities"] if c["entities"] else 1.0
        print(
            f"  raw: {c['raw_any']}/{c['entities']} entities cite any xref ({raw:.1%}), "
            f"{c['raw_exact']}/{c['entities']} an exact match ({exact:.1%}); "
            f"{c['inexact']} xrefs declared broad, narrow or close"
        )
        for cls, row in c["per_class"].items():
            std = STANDARD.get(cls)
            line = f"    {cls}: {row['any']}/{row['entities']} any ({row['exact']} exact)"
            if std:
                line += (
                    f", {row['standard']}/{row['entities']} in {'/'.join(std)} "
                    f"({row['standard_exact']} exact)"
                )
            print(line)
        print(f"  no confident id yet: {' '.join(c['no_confident_id']) or '-'}")
        if c["stale_judgements"]:
            print(f"  judged but not in the domain: {' '.join(c['stale_judgements'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

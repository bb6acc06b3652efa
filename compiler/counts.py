"""Expected counts: the scale a domain states for itself in domain.yaml, and the check that
its tables still have it (a table that drifts from the stated scale is an error)."""

from __future__ import annotations

from collections import Counter
from operator import itemgetter
from typing import Any

from . import ir
from .tables import ErrorList
from .yamlfile import YamlDoc


def _by_key(item: tuple[Any, Any]) -> str:
    return str(item[0])


def expected_counts(cfg: dict[str, Any]) -> ir.ExpectedCounts:
    counts = cfg.get("expected_counts") or {}
    return ir.ExpectedCounts(
        # keyed by str: a hand-edited file may hold an int key (a TypeError found by make fuzz)
        entities=tuple(sorted((counts.get("entities") or {}).items(), key=_by_key)),
        assertions=tuple(sorted((counts.get("assertions") or {}).items(), key=_by_key)),
        evidence_sources=counts.get("evidence_sources"),
        study_level_evidence_sources=counts.get("study_level_evidence_sources"),
    )


def check_expected_counts(domain: ir.Domain, doc: YamlDoc) -> None:
    """The spec states its own scale; a table that drifts from it is an error."""
    _check_counts(
        domain.expected,
        doc,
        set(domain.class_by_name),
        set(domain.predicate_by_name),
        Counter(map(itemgetter(1), domain.entities)),  # by category
        # by predicate, where counts are declared: read one by one, the assertions would be
        # made for nothing (`compiler.lazyrecords`)
        Counter(map(itemgetter(2), domain.assertions)) if domain.expected.assertions else Counter(),
        len(domain.evidence_sources),
        sum(1 for e in domain.evidence_sources if e.study_level),
    )


def _check_counts(
    expected: ir.ExpectedCounts,
    doc: YamlDoc,
    class_names: set[str],
    predicate_names: set[str],
    ent: Counter,
    asr: Counter,
    n_evidence: int,
    study: int,
) -> None:
    problems: list[tuple[list, str]] = []
    for cls, n in expected.entities:
        if cls not in class_names:
            problems.append((["expected_counts", "entities", cls], f"unknown class '{cls}'"))
        elif ent[cls] != n:
            problems.append(
                (
                    ["expected_counts", "entities", cls],
                    f"expected {n} {cls} entities, the data has {ent[cls]}",
                )
            )
    for pred, n in expected.assertions:
        if pred not in predicate_names:
            problems.append(
                (["expected_counts", "assertions", pred], f"unknown predicate '{pred}'")
            )
        elif asr[pred] != n:
            problems.append(
                (
                    ["expected_counts", "assertions", pred],
                    f"expected {n} {pred} assertions, the data has {asr[pred]}",
                )
            )
    if expected.evidence_sources is not None and n_evidence != expected.evidence_sources:
        problems.append(
            (
                ["expected_counts", "evidence_sources"],
                f"expected {expected.evidence_sources} evidence sources, the data has {n_evidence}",
            )
        )
    if (
        expected.study_level_evidence_sources is not None
        and study != expected.study_level_evidence_sources
    ):
        problems.append(
            (
                ["expected_counts", "study_level_evidence_sources"],
                f"expected {expected.study_level_evidence_sources} study-level evidence sources, the data has {study}",
            )
        )
    if problems:
        errors = ErrorList()
        for path, message in problems:
            errors.add(message, doc.location(path, path[-1]))
        errors.raise_if_any()

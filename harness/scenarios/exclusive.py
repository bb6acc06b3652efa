"""Findings a patient cannot hold together: the one reading of a domain's exclusions.

Two declarations say it (scenarios.yaml): `incompatible_with` on an entity profile (one-sided:
a finding and the populations, targets or findings it rules out) and `exclusive_findings`
groups (symmetric: the listed members, or every entity of a named class, exclude one another).
The generator skips an instance whose final patient would hold an excluded pair, and
check-scenarios refuses a hand-written one, both through `clashes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .kg import KnowledgeGraph
from .rules import Rules


def exclusions(rules: Rules, kg: KnowledgeGraph) -> dict[str, frozenset[str]]:
    """Entity id -> the ids a patient holding it cannot also have (or be asked about)."""
    out: dict[str, set[str]] = {}
    for entity, prof in rules.entity_profiles.items():
        out.setdefault(entity, set()).update(prof.get("incompatible_with") or ())
    for group in rules.exclusive_findings:
        members = _members(group, kg)
        for m in members:
            out.setdefault(m, set()).update(members - {m})
    return {k: frozenset(v) for k, v in out.items() if v}


def _members(group: dict[str, Any], kg: KnowledgeGraph) -> set[str]:
    if group.get("members"):
        return set(group["members"])
    kind = group.get("entity_class")
    return {e for e, ent in kg.entities.items() if ent["category"] == kind}


def clashes(
    excluded: dict[str, frozenset[str]], findings: Iterable[str], context: Iterable[str | None]
) -> list[tuple[str, tuple[str, ...]]]:
    """(finding, the present ids it excludes) for each finding that excludes something present
    among the findings or the context (population, target), in the findings' order."""
    findings = tuple(findings)
    present = {*findings, *(c for c in context if c)}
    out = []
    for f in findings:
        hit = excluded.get(f, frozenset()) & present
        if hit:
            out.append((f, tuple(sorted(hit))))
    return out

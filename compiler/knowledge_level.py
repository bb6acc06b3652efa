"""Biolink's knowledge level and agent type of every assertion.

Biolink requires both on every association. Curators rarely want to type them per row, and
they follow from the evidence: a claim asserted by a guideline, a trial or a curated database
is a knowledge assertion by a manual agent, a claim resting only on a cohort is a statistical
association. So the core schema declares defaults per evidence source type (SourceType's
annotations), an assertion takes those of its strongest supporting source (`precedence` 1 is
strongest), an assertion without evidence takes `default_without_evidence`, and a row may
override either value in its own `knowledge_level` / `agent_type` cells.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from . import ir

# The two derived fields close the record, so a filled-in assertion is its first fields and
# these two; `tuple.__new__` builds it in C (what `_make` does, minus a Python frame).
assert ir.Assertion._fields[-2:] == ("knowledge_level", "agent_type")
_make = tuple.__new__


def resolve(
    assertions: tuple[ir.Assertion, ...],
    supports: tuple[ir.Support, ...],
    evidence: tuple[ir.EvidenceSource, ...],
    core: dict[str, Any],
) -> tuple[ir.Assertion, ...]:
    """The assertions with knowledge_level and agent_type filled in (row values kept)."""
    types = core.get("source_types") or {}
    if not types:  # a core without the defaults (an old spec copy in a test): leave as is
        return assertions
    rank = {name: int(info.get("precedence") or 99) for name, info in types.items()}
    source_type = {e.evidence_id: e.source_type for e in evidence}
    strongest: dict[str, str] = {}
    by_assertion: dict[str, list[str]] = defaultdict(list)
    for s in supports:
        by_assertion[s.assertion_id].append(source_type[s.evidence_id])
    for aid, kinds in by_assertion.items():
        strongest[aid] = min(kinds, key=lambda k: (rank.get(k, 99), k))
    kl_none = core.get("knowledge_level_without_evidence") or "not_provided"
    at_none = core.get("agent_type_without_evidence") or "not_provided"
    out = []
    for a in assertions:
        kind = strongest.get(a.assertion_id)
        info = types.get(kind, {}) if kind else {}
        kl = a.knowledge_level or (info.get("knowledge_level") if kind else kl_none)
        at = a.agent_type or (info.get("agent_type") if kind else at_none)
        if kl != a.knowledge_level or at != a.agent_type:
            a = _make(ir.Assertion, (*a[:-2], kl, at))  # `_replace`, without its kwargs
        out.append(a)
    return tuple(out)

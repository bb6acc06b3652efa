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

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import ir


def level_columns(
    assertion_ids: Sequence[str],
    knowledge_levels: Sequence[str | None],
    agent_types: Sequence[str | None],
    supports: Sequence[ir.Support],
    evidence: Sequence[ir.EvidenceSource],
    core: dict[str, Any],
) -> tuple[list[str | None], list[str | None]]:
    """The knowledge_level and agent_type columns of the assertion rows, filled in (row
    values kept), before any record is made.

    Filled by column so the records are made once, already complete: filling made records
    built a second tuple per assertion while the first was alive, plus a list of source
    types per assertion, the peak of a 4,000,000-assertion load (~1 GB). Each source type
    is ranked by (`precedence`, name), so an assertion's strongest source is the minimum of
    its links' ranks (`np.minimum.at`), the same choice as a `min` over its source types.
    """
    types = core.get("source_types") or {}
    if not types:  # a core without the defaults (an old spec copy in a test): leave as is
        return list(knowledge_levels), list(agent_types)
    rank = {name: int(info.get("precedence") or 99) for name, info in types.items()}
    kinds = sorted({*types, *(e.source_type for e in evidence)}, key=lambda k: (rank.get(k, 99), k))
    code_of_kind = {k: i for i, k in enumerate(kinds)}
    code_of_source = {e.evidence_id: code_of_kind[e.source_type] for e in evidence}
    none = len(kinds)  # no supporting source: the defaults without evidence
    n = len(assertion_ids)
    best = np.full(n + 1, none, dtype=np.int64)  # [n]: where a link's assertion is unknown
    if supports:
        linked = pa.array([s.assertion_id for s in supports], pa.string())
        rows = pc.fill_null(pc.index_in(linked, value_set=pa.array(assertion_ids, pa.string())), n)
        codes = np.fromiter(
            (code_of_source[s.evidence_id] for s in supports), np.int64, len(supports)
        )
        np.minimum.at(best, rows.to_numpy(zero_copy_only=False).astype(np.int64), codes)
    kl_of = [types.get(k, {}).get("knowledge_level") for k in kinds]
    at_of = [types.get(k, {}).get("agent_type") for k in kinds]
    kl_of.append(core.get("knowledge_level_without_evidence") or "not_provided")
    at_of.append(core.get("agent_type_without_evidence") or "not_provided")
    chosen = best[:n].tolist()
    return (
        [v or kl_of[c] for v, c in zip(knowledge_levels, chosen, strict=True)],
        [v or at_of[c] for v, c in zip(agent_types, chosen, strict=True)],
    )

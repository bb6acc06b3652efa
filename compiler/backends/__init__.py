"""Backends: each maps the frozen IR to a set of files under generated/<domain>/.

A backend is a `base.Backend`: a name, the format version of what it writes, the paths it may
write, and `emit(domain, ctx) -> list[Artifact]`. Adding an output family means adding a
subclass and listing its instance in `BACKENDS`; the manifest comes last (it hashes the rest).
"""

from __future__ import annotations

from . import (
    cypher,
    graph,
    kgx,
    manifest,
    metrics,
    neo4j,
    probe,
    prompts,
    scenario_rules,
    schemas,
    scorer,
)
from .base import Artifact, Backend, EmitContext

BACKENDS: tuple[Backend, ...] = (
    graph.BACKEND,
    neo4j.BACKEND,
    cypher.BACKEND,
    metrics.BACKEND,
    prompts.BACKEND,
    schemas.BACKEND,
    scorer.BACKEND,
    scenario_rules.BACKEND,
    probe.BACKEND,
    kgx.BACKEND,
)

__all__ = ["BACKENDS", "Artifact", "Backend", "EmitContext", "manifest"]

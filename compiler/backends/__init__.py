"""Backends: each maps the frozen IR to a set of files under generated/<domain>/.

A backend is a small module with one entry point, `emit(domain, ctx) -> list[Artifact]`.
Adding an output family means adding a module here and listing it in `BACKENDS`.
"""

from __future__ import annotations

from . import cypher, graph, manifest, neo4j, probe, prompts, scenario_rules, schemas, scorer
from .base import Artifact, EmitContext

BACKENDS = (graph, neo4j, cypher, prompts, schemas, scorer, scenario_rules, probe)

__all__ = ["BACKENDS", "Artifact", "EmitContext", "manifest"]

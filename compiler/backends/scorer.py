"""`scorer.py`: a thin stub over kgbench's public scoring API, for people who score in Python.

The panel is data (metrics.json beside it); the stub imports only `kgbench.scoring`, a small
versioned API, so it does not break when the harness's internals change. The harness itself
reads metrics.json and never runs this file.
"""

from __future__ import annotations

from kgbench.contract import SCORING_API_VERSION

from ..ir import Domain
from .base import Artifact, Backend, EmitContext, render


class ScorerBackend(Backend):
    name = "scorer"
    format_version = "2.0.0"  # 2: a stub over kgbench.scoring reading metrics.json
    outputs = ("scorer.py",)

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        text = render("python/scorer.py.j2", ctx, domain=domain.name, api=SCORING_API_VERSION)
        return [Artifact("scorer.py", text)]


BACKEND = ScorerBackend()

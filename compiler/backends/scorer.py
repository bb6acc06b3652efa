"""`scorer.py`: the declared metric panel bound to the harness's metric kinds."""

from __future__ import annotations

from ..ir import Domain
from .base import Artifact, EmitContext, render


def emit(domain: Domain, ctx: EmitContext) -> list[Artifact]:
    text = render(
        "python/scorer.py.j2",
        ctx,
        domain=domain.name,
        spec_version=domain.spec_version,
        metrics=domain.metrics,
        unparseable_policy=domain.unparseable_policy,
    )
    return [Artifact("scorer.py", text)]

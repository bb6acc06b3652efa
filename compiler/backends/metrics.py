"""`metrics.json`: the declared metric panel as data (spec/declarations/metrics.yaml after validation).

The harness binds each metric's `kind` to its implementation; which response field meets
which gold field, when a metric is defined and how unparseable answers count are all here.
"""

from __future__ import annotations

from dataclasses import asdict

from kgbench.contract import MetricPanel

from ..ir import Domain
from .base import Artifact, Backend, EmitContext


class MetricsBackend(Backend):
    name = "metrics"
    format_version = MetricPanel.FORMAT
    outputs = (MetricPanel.PATH,)

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        data = {
            "domain": domain.name,
            "unparseable_policy": domain.unparseable_policy,
            # a metric's optional declarations (reading, claim_support) only where given
            "metrics": [
                {k: v for k, v in asdict(m).items() if v is not None} for m in domain.metrics
            ],
        }
        return [self.document(MetricPanel, data, ctx)]


BACKEND = MetricsBackend()

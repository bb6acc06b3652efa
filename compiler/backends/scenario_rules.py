"""`scenario_rules.json`: the validated scenario-generation rules, for `kgbench generate`.

The generator lives in the harness, which reads only generated/<domain>/; this artifact is how
the domain's scenarios.yaml reaches it, after the frontend has checked every id, class and
template field in it. A domain without scenario rules gets no file.
"""

from __future__ import annotations

import json

from kgbench.io import json_bytes

from ..ir import Domain
from .base import Artifact, EmitContext

RULES_FORMAT_VERSION = "1.0.0"


def emit(domain: Domain, ctx: EmitContext) -> list[Artifact]:
    rules = domain.scenario_rules
    if rules is None:
        return []
    data = {
        "format_version": RULES_FORMAT_VERSION,
        "domain": domain.name,
        "source": rules.source,
        "scenario_schema_version": rules.scenario_schema_version,
        "rules": json.loads(rules.document),
    }
    return [Artifact("scenario_rules.json", json_bytes(data))]

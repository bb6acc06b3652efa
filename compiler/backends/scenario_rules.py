"""`scenario_rules.json`: the validated scenario-generation rules, for `kgbench generate`.

The generator lives in the harness, which reads only generated/<domain>/; this artifact is how
the domain's scenarios.yaml reaches it, after the frontend has checked every id, class and
template field in it. A domain without scenario rules gets no file.
"""

from __future__ import annotations

import json

from kgbench.contract import ScenarioRules

from ..ir import Domain
from .base import Artifact, Backend, EmitContext


class ScenarioRulesBackend(Backend):
    name = "scenario_rules"
    format_version = ScenarioRules.FORMAT
    outputs = (ScenarioRules.PATH,)

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        rules = domain.scenario_rules
        if rules is None:
            return []
        data = {
            "domain": domain.name,
            "source": rules.source,
            "scenario_schema_version": rules.scenario_schema_version,
            "rules": json.loads(rules.document),
        }
        return [self.document(ScenarioRules, data, ctx)]


BACKEND = ScenarioRulesBackend()

"""Access to a compiled domain (generated/<domain>/): the harness's only view of the spec.

Every document is read through `kgbench.contract`: opening a domain checks the manifest and
the format version of every artifact it lists, and each document is checked against its model
when first read, so a domain compiled by another kgbench or a hand-edited file is one message
naming the file and `make compile DOMAIN=<d>`, never a KeyError deep inside a command.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from kgbench import contract
from kgbench.errors import UserError
from kgbench.locations import GENERATED_DIR

GENERATED = GENERATED_DIR  # module attribute, so tests can point it at another root


@dataclass(frozen=True)
class CompiledDomain:
    name: str
    root: Path

    @classmethod
    def open(cls, domain: str, generated: Path | None = None) -> CompiledDomain:
        root = (generated or GENERATED) / domain
        if not (root / "manifest.json").exists():
            raise UserError(
                f"domain '{domain}' is not compiled ({root} has no manifest.json); "
                f"run `make compile DOMAIN={domain}` first"
            )
        compiled = cls(domain, root)
        compiled.check()
        return compiled

    def check(self) -> None:
        """The manifest and the format of every artifact it lists (no artifact is read)."""
        contract.check_formats(self.manifest, self.root)

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def json(self, rel: str) -> Any:
        """A compiled JSON document as plain data (one message if damaged; see contract)."""
        return contract.read_json(self.root / rel, self.name)

    def document(self, model: type[contract.D]) -> contract.D:
        return contract.read(model, self.root / model.PATH, self.name)

    @cached_property
    def manifest(self) -> contract.Manifest:
        return self.document(contract.Manifest)

    @cached_property
    def graph(self) -> dict[str, Any]:
        """kg.json as plain data (checked against `contract.KnowledgeGraph` first): the graph's
        rows are read by many stages as dicts, and stay so."""
        data = self.json(contract.KnowledgeGraph.PATH)
        contract.parse(contract.KnowledgeGraph, data, self.root / "kg.json", self.name)
        return data

    @cached_property
    def label(self) -> str:
        return self.graph["neo4j_label"]

    @cached_property
    def entities(self) -> dict[str, dict[str, Any]]:
        return {e["id"]: e for e in self.graph["entities"]}

    @cached_property
    def conditions(self) -> list[contract.Condition]:
        return list(self.document(contract.Conditions).conditions)

    @property
    def default_conditions(self) -> list[contract.Condition]:
        """The conditions a run has unless told otherwise: every declared one except the
        optional ones (the volume-matched controls), which run only when asked for by id."""
        return [c for c in self.conditions if not c.optional]

    @property
    def presentations(self) -> list[contract.Presentation]:
        """The declared option presentations (order sensitivity), in declared order."""
        return list(self.document(contract.Conditions).presentations)

    @cached_property
    def evidence_rank(self) -> dict[str, int]:
        """Evidence level -> rank (higher is stronger), from the compiled scale."""
        levels = self.document(contract.Conditions).evidence_levels
        return {level: len(levels) - i for i, level in enumerate(levels)}

    def condition(self, condition_id: str) -> contract.Condition:
        for c in self.conditions:
            if c.id == condition_id:
                return c
        known = ", ".join(c.id for c in self.conditions)
        raise UserError(f"unknown condition '{condition_id}'; this domain declares {known}")

    @cached_property
    def default_population(self) -> str | None:
        """The population of a scenario that names none (scenarios.yaml default_population);
        None for a domain without scenario rules or without populations."""
        if not (self.root / "scenario_rules.json").exists():
            return None
        return self.document(contract.ScenarioRules).rules.get("default_population")

    @cached_property
    def goal_outcomes(self) -> dict[str, str]:
        """Goal finding -> the outcome it points to (scenarios.yaml `goals`); empty for a
        domain that declares none."""
        if not (self.root / "scenario_rules.json").exists():
            return {}
        goals = self.document(contract.ScenarioRules).rules.get("goals") or ()
        return {g["finding"]: g["outcome"] for g in goals}

    def population_of(self, scenario: dict[str, Any]) -> str | None:
        """The one reading of a scenario's population: its own `population_id`, else the
        domain's default (None when the domain declares no population)."""
        return scenario.get("population_id") or self.default_population

    @cached_property
    def plan(self) -> contract.LoadPlan:
        return self.document(contract.LoadPlan)

    @cached_property
    def metrics(self) -> contract.MetricPanel:
        return self.document(contract.MetricPanel)

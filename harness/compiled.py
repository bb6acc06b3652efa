"""Access to a compiled domain (generated/<domain>/): the harness's only view of the spec.

Every document is read through `kgbench.contract`: opening a domain checks the manifest and
the format version of every artifact it lists, and each document is checked against its model
when first read, so a domain compiled by another kgbench or a hand-edited file is one message
naming the file and `make compile DOMAIN=<d>`, never a KeyError deep inside a command.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from kgbench import contract
from kgbench.errors import UserError
from kgbench.locations import GENERATED_DIR


@dataclass(frozen=True)
class CompiledDomain:
    name: str
    root: Path

    @classmethod
    def open(
        cls, domain: str | Path | CompiledDomain, generated: Path | None = None
    ) -> CompiledDomain:
        """The one opener: a handle already open (returned as is), a name (the project's
        generated/<name>/, or `generated`/<name>/ when the caller names another root), or the
        path of a compiled folder (named by its manifest). The manifest and every artifact's
        format are checked once, here.

        There is no module-level root to patch: a name always means the project's compile
        unless `generated` says otherwise, so a command, a test or a benchmark that works on
        another compile passes that root (or the folder) explicitly and nothing else can
        silently read another tree."""
        if isinstance(domain, CompiledDomain):
            return domain
        text = str(domain)
        path = Path(domain)
        if generated is None:
            if path.is_dir() and (path / "kg.json").exists():
                return cls._checked(None, path)
            if isinstance(domain, Path) or os.sep in text or "/" in text:
                raise UserError(
                    f"{domain} is not a compiled domain folder (no kg.json); run `kgbench compile`"
                )
        root = (GENERATED_DIR if generated is None else generated) / text
        if not (root / "manifest.json").exists():
            raise UserError(
                f"domain '{text}' is not compiled ({root} has no manifest.json); "
                f"run `make compile DOMAIN={text}` first"
            )
        return cls._checked(text, root)

    @classmethod
    def _checked(cls, name: str | None, root: Path) -> CompiledDomain:
        """A checked handle on `root`; a folder opened by path is named by its manifest."""
        if name is None:
            name = contract.read(contract.Manifest, root / contract.Manifest.PATH, root.name).domain
        compiled = cls(name, root)
        compiled.check()
        return compiled

    @property
    def is_project_compile(self) -> bool:
        """Whether this is the project's generated/<name>/ (which the name alone finds)."""
        return self.root.resolve() == (GENERATED_DIR / self.name).resolve()

    # --- paths inside the compiled folder (the only place that joins them) -----------------------

    def path_of(self, rel: str | Path) -> Path:
        """The path of a compiled file, given relative to the compiled folder."""
        return self.root / rel

    @property
    def manifest_path(self) -> Path:
        return self.root / contract.Manifest.PATH

    @property
    def graph_path(self) -> Path:
        return self.root / contract.KnowledgeGraph.PATH

    def schema_path(self, kind: str) -> Path:
        """schemas/<kind>.schema.json (kind: response, scenario, gold, ...)."""
        return self.root / "schemas" / f"{kind}.schema.json"

    @property
    def prompts_dir(self) -> Path:
        return self.root / "prompts"

    def neo4j_path(self, rel: str | Path) -> Path:
        """A file of the Neo4j load plan (its statements name them relative to neo4j/)."""
        return self.root / "neo4j" / rel

    @property
    def import_dir(self) -> Path:
        """neo4j/import/: the CSV files of a bulk import."""
        return self.neo4j_path("import")

    @property
    def gold_dir(self) -> Path:
        """gold/: the released gold sets, one folder per version."""
        return self.root / "gold"

    @property
    def generated_scenarios(self) -> Path:
        """scenarios/scenarios.jsonl: the scenario set the compiler generated."""
        return self.root / "scenarios" / "scenarios.jsonl"

    @property
    def probe_path(self) -> Path:
        return self.root / "probe" / "probe.json"

    @property
    def scenario_rules_path(self) -> Path:
        return self.root / contract.ScenarioRules.PATH

    @property
    def has_scenario_rules(self) -> bool:
        return self.scenario_rules_path.exists()

    def check(self) -> None:
        """The manifest and the format of every artifact it lists (no artifact is read)."""
        contract.check_formats(self.manifest, self.root)

    def read(self, rel: str) -> str:
        return self.path_of(rel).read_text(encoding="utf-8")

    def json(self, rel: str) -> Any:
        """A compiled JSON document as plain data (one message if damaged; see contract)."""
        return contract.read_json(self.path_of(rel), self.name)

    def document(self, model: type[contract.D]) -> contract.D:
        return contract.read(model, self.path_of(model.PATH), self.name)

    @cached_property
    def manifest(self) -> contract.Manifest:
        return self.document(contract.Manifest)

    @cached_property
    def graph(self) -> dict[str, Any]:
        """kg.json as plain data (checked against `contract.KnowledgeGraph` first): the graph's
        rows are read by many stages as dicts, and stay so."""
        data = self.json(contract.KnowledgeGraph.PATH)
        contract.parse(contract.KnowledgeGraph, data, self.graph_path, self.name)
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
        if not self.has_scenario_rules:
            return None
        return self.document(contract.ScenarioRules).rules.get("default_population")

    @cached_property
    def goal_outcomes(self) -> dict[str, str]:
        """Goal finding -> the outcome it points to (scenarios.yaml `goals`); empty for a
        domain that declares none."""
        if not self.has_scenario_rules:
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

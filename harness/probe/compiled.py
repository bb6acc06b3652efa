"""The compiled probe of a domain (generated/<d>/probe/): settings, roots, prompts, schemas.

The harness never reads the spec: everything here comes from `kgbench compile`. Prompts are
rendered with StrictUndefined, so a template and the fields the harness passes can never
drift apart silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from kgbench.contract import Probe
from kgbench.errors import UserError

from ..compiled import CompiledDomain

STEPS = ("expand_effects", "expand_causes", "edge_check", "verify_mapping")


@dataclass(frozen=True)
class CompiledProbe:
    domain: CompiledDomain

    @classmethod
    def open(cls, domain: str, generated: Path | None = None) -> CompiledProbe:
        compiled = CompiledDomain.open(domain, generated)
        if not compiled.probe_path.exists():
            raise UserError(
                f"domain '{domain}' has no compiled probe; declare `probe: probe.yaml` in "
                f"domains/{domain}/domain.yaml and run `make compile DOMAIN={domain}`"
            )
        return cls(compiled)

    @property
    def name(self) -> str:
        return self.domain.name

    @cached_property
    def data(self) -> dict[str, Any]:
        """probe/probe.json, checked against `kgbench.contract.Probe`."""
        return self.domain.document(Probe).model_dump(by_alias=True, exclude_none=True)

    @property
    def settings(self) -> dict[str, Any]:
        return self.data["settings"]

    @property
    def roots(self) -> list[dict[str, str]]:
        return self.data["roots"]

    @property
    def domain_phrase(self) -> str:
        return self.data["domain_phrase"]

    @property
    def reference_predicates(self) -> list[str]:
        return self.data["reference"]["predicates"]

    @property
    def reference_excluded_directions(self) -> list[str]:
        """Assertion directions the reference leaves out (decrease: "A prevents B")."""
        return list(self.data["reference"].get("excluded_directions") or ())

    def reference_graph(self) -> Any:
        """The reference graph this probe declares (harness.probe.reference)."""
        from .reference import ReferenceGraph

        return ReferenceGraph.from_kg(
            self.domain.graph, self.reference_predicates, self.reference_excluded_directions
        )

    @property
    def noise(self) -> dict[str, Any]:
        return self.data["noise"]

    def template_text(self, step: str) -> str:
        return self.domain.read("probe/" + self.data["steps"][step]["template"])

    @cached_property
    def _templates(self) -> dict[str, Any]:
        import jinja2

        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
        return {step: env.from_string(self.template_text(step)) for step in self.data["steps"]}

    @cached_property
    def _schemas(self) -> dict[str, dict[str, Any]]:
        out = {}
        for step, entry in self.data["steps"].items():
            if "schema" in entry:
                out[step] = self.domain.json("probe/" + entry["schema"])
        return out

    def schema(self, step: str) -> dict[str, Any]:
        return self._schemas[step]

    def schema_name(self, step: str) -> str:
        return self.data["steps"][step]["schema_name"]

    def render(self, step: str, **fields: Any) -> str:
        return self._templates[step].render(domain_phrase=self.domain_phrase, **fields).strip()

    def messages(self, step: str, **fields: Any) -> list[dict[str, str]]:
        """The chat messages of one probe step: the declared system prompt, then the step."""
        return [
            {"role": "system", "content": self.render("system")},
            {"role": "user", "content": self.render(step, **fields)},
        ]

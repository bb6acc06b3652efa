"""Access to a compiled domain (generated/<domain>/): the harness's only view of the spec."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from kgbench.errors import UserError
from kgbench.locations import GENERATED_DIR

GENERATED = GENERATED_DIR  # module attribute, so tests can point it at another root

_MARKER = re.compile(r"^// @(statement|check) (\S+) (rows|expect)=(\S+)$", re.M)


@dataclass(frozen=True)
class Statement:
    name: str
    cypher: str
    rows: str | None = None
    expect: int | None = None


def split_marked(text: str) -> list[Statement]:
    """Split a compiled Cypher file at its `// @statement` / `// @check` markers."""
    marks = list(_MARKER.finditer(text))
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = "\n".join(
            ln
            for ln in text[m.end() : end].splitlines()
            if ln.strip() and not ln.lstrip().startswith("//")
        )
        kind, name, _, value = m.groups()
        out.append(
            Statement(
                name=name,
                cypher=body.strip().rstrip(";"),
                rows=value if kind == "statement" else None,
                expect=int(value) if kind == "check" else None,
            )
        )
    return out


def plain_statements(text: str) -> list[str]:
    """Statements of a file without markers (constraints): `;`-terminated, comments dropped."""
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))
    return [s.strip() for s in body.split(";") if s.strip()]


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
        return cls(domain, root)

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def json(self, rel: str) -> Any:
        return json.loads(self.read(rel))

    @cached_property
    def graph(self) -> dict[str, Any]:
        return self.json("kg.json")

    @cached_property
    def label(self) -> str:
        return self.graph["neo4j_label"]

    @cached_property
    def entities(self) -> dict[str, dict[str, Any]]:
        return {e["id"]: e for e in self.graph["entities"]}

    @cached_property
    def conditions(self) -> list[dict[str, Any]]:
        return self.json("cypher/conditions.json")

    def condition(self, condition_id: str) -> dict[str, Any]:
        for c in self.conditions:
            if c["id"] == condition_id:
                return c
        known = ", ".join(c["id"] for c in self.conditions)
        raise UserError(f"unknown condition '{condition_id}'; this domain declares {known}")

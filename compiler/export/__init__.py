"""Exports of a validated domain graph into other ecosystems' formats.

Like the compile backends, each format is a small module with one pure emit function over
the frozen IR. `export_domain` validates the domain exactly as `compile` does first, so bad
input (an unknown Biolink term, an undeclared CURIE prefix, a malformed xref) is one message
and nothing is written; the files are then written one by one, each atomically.

- `kgx`: KGX nodes and edges (TSV and JSON Lines) with CURIE ids, Biolink categories,
  predicates and qualifiers, knowledge level, agent type and evidence, for Translator tools
  (written by compiler/backends/kgx.py, which also compiles its TSV files with every domain).
- `linkml-json`: the graph as an instance of the domain's LinkML tree root, with the files
  `linkml-validate` needs to check it, references included (see linkml_json.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgbench.locations import RUNS_DIR

from ..backends.base import Artifact
from ..ir import Domain

FORMATS = ("kgx", "linkml-json")


@dataclass(frozen=True)
class ExportResult:
    domain: str
    fmt: str
    out_dir: Path
    files: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def default_out_dir(domain: str, fmt: str) -> Path:
    return RUNS_DIR / "export" / domain / fmt


def artifacts(domain: Domain, fmt: str, out_dir: Path) -> list[Artifact]:
    """The files of one format (LinkML is imported only for the format that needs it)."""
    if fmt == "kgx":
        from ..backends import kgx

        return kgx.emit(domain)
    if fmt == "linkml-json":
        from . import linkml_json

        return linkml_json.emit(domain, out_dir)
    raise ValueError(f"unknown export format {fmt!r}")  # pragma: no cover - the CLI checks


def export_domain(domain: str | Path, fmt: str, out_dir: Path | None = None) -> ExportResult:
    import os

    from kgbench.io import atomic_write_files

    from ..frontend import load_domain

    ir = load_domain(domain)  # what `compile` validates (compiler.api.validate_domain)
    target = out_dir or default_out_dir(ir.name, fmt)
    arts = artifacts(ir, fmt, target)
    umask = os.umask(0)
    os.umask(umask)
    # all files or none (an ordinary file's mode, not the temporary file's 0600)
    atomic_write_files({target / art.path: art.content for art in arts}, mode=0o666 & ~umask)
    notes: tuple[str, ...] = ()
    if fmt == "kgx":
        from ..backends import kgx

        notes = tuple(kgx.warnings(ir))
    return ExportResult(ir.name, fmt, target, tuple(a.path for a in arts), ir.warnings + notes)

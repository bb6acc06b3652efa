"""Where kgbench finds its own files and the project's: the one owner of these paths.

Two kinds of place, which coincide in a clone and part in an installed kgbench:

- **Shipped with kgbench**: `spec/` (the domain-independent schemas and declarations) and
  `templates/` (the compile-time templates). In a clone they sit at the repository root (the
  layout the design card fixes); a wheel carries them as package data under `kgbench/`, so
  an installed kgbench compiles outside any clone.
- **The project**: `domains/`, `generated/`, `runs/`. In a clone, the repository root; for
  an installed kgbench, the working directory it was started in. Caches go under
  `$KGBENCH_HOME/.cache/` when that is set, else under the project's `.cache/`.

Paths are computed here once so that no module guesses a root from its own `__file__`.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKOUT = PACKAGE_DIR.parent
"""The folder holding the `kgbench` package: a clone's root, or site-packages."""


def _is_checkout(root: Path) -> bool:
    return (root / "pyproject.toml").is_file() and (root / "compiler").is_dir()


IN_CHECKOUT = _is_checkout(CHECKOUT) and (CHECKOUT / "spec").is_dir()
SHIPPED_ROOT = CHECKOUT if IN_CHECKOUT else PACKAGE_DIR
SPEC_DIR = SHIPPED_ROOT / "spec"
TEMPLATES_DIR = SHIPPED_ROOT / "templates"
DECLARATIONS_DIR = SPEC_DIR / "declarations"
"""Declarations validated against spec/declarations.yaml (conditions, metrics, probe defaults,
the CURIE prefix map): data, not schemas, so linkml-lint is given schema files, never this folder."""

PROJECT_ROOT = CHECKOUT if IN_CHECKOUT else Path.cwd().resolve()
DOMAINS_DIR = PROJECT_ROOT / "domains"
GENERATED_DIR = PROJECT_ROOT / "generated"
RUNS_DIR = PROJECT_ROOT / "runs"
TOOLS_DIR = CHECKOUT / "tools"
"""Sources built on first use (the embedded Neo4j's Java launcher); only in a clone."""

HOME_ENV = "KGBENCH_HOME"


def cache_dir(name: str) -> Path:
    """`$KGBENCH_HOME/.cache/<name>`, else `<project>/.cache/<name>` (read at each call, so a
    test or a second workspace can move the caches with the environment variable)."""
    home = os.environ.get(HOME_ENV)
    return (Path(home).expanduser() if home else PROJECT_ROOT) / ".cache" / name


def shipped_name(path: Path) -> str | None:
    """`spec/<rel>` or `templates/<rel>` for a file kgbench ships, wherever it is installed,
    so records of it (a manifest's inputs) read the same in a clone and in a wheel."""
    resolved = Path(path).resolve()
    for folder in (SPEC_DIR, TEMPLATES_DIR):
        if resolved.is_relative_to(folder.resolve()):
            return f"{folder.name}/{resolved.relative_to(folder.resolve()).as_posix()}"
    return None

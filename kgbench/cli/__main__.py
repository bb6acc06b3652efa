"""`python -m kgbench.cli ...`: the typer command line itself, as it ran when kgbench/cli.py
was a module (no no-op shortcut; `python -m kgbench` and the `kgbench` script take that)."""

from __future__ import annotations

from kgbench.cli.main import app

if __name__ == "__main__":  # pragma: no cover
    app()

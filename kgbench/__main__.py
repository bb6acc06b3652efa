"""`python -m kgbench ...`: the same command line as the `kgbench` script."""

from __future__ import annotations

from kgbench.cli import app

if __name__ == "__main__":
    app(prog_name="kgbench")

"""`python -m kgbench ...`: the same command line as the `kgbench` script."""

from __future__ import annotations

from kgbench.cli.entry import main

if __name__ == "__main__":
    main(prog_name="kgbench")

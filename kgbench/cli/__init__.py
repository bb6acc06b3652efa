"""The top of the stack: the `kgbench` command line and what composes the two halves for it.

`kgbench/` is two layers in one package, and this folder is the line between them. Its root
modules are the kernel (errors, io, locations, suggest, contract, ...) that compiler/ and
harness/ both import, plus the public scoring facade (`kgbench.scoring`, and the adapters in
`kgbench.integrations`); this sub-package is the only code that imports both halves:

- `main`: the typer app, every command mounted on one root group (the one error boundary);
- `entry`: the console script (`kgbench`, `python -m kgbench`), which answers a no-op compile
  before `main` is imported;
- `pilot`: `kgbench pilot`, the whole pipeline end to end;
- `study`: a study file read with the compiler's declaration reader, then the study's checks.

Nothing below imports this package (tests/test_import_graph.py holds every layer to that).
This file stays light, because the console entry's no-op path imports `kgbench.cli.entry`
through it: `app` is loaded on its first use, so `from kgbench.cli import app` still works.
"""

from __future__ import annotations

from kgbench.lazy import lazy_exports

__all__ = ["app"]
__getattr__ = lazy_exports(__name__, {"app": ".main"})

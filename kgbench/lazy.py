"""Lazy package attributes: a package names what it exports and from which submodule, and a
name's submodule is imported on its first use.

Why: the root command line imports every command's package to mount it, and `kgbench
validate` must not pay for the neo4j driver or the reference server behind commands it does
not run (the sqlglot pattern).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # `typing` only for a type checker: the console entry imports this module
if TYPE_CHECKING:
    from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `exports` maps each name to the relative module
    that defines it; a resolved name is stored in the package, so it is looked up once."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    return __getattr__

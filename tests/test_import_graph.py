"""The import graph of kgbench's own code: no cycles, between files or between sub-packages,
and the layers the design card fixes, read from the folders.

Every `import` and `from ... import` in compiler/, harness/ and kgbench/ counts, including
those inside functions: an import hidden in a function body is still a dependency, and the
first person to hoist it to the top of the file would meet the cycle at import time.

Units: a sub-package (`harness.scenarios`, `compiler.backends`, `kgbench.contract`) or a root
module (`harness.runfolder`, `compiler.api`, `kgbench.io`). Two units that import each other
form a cycle even when no file imports itself back (the 2026-12 review found one through five
harness sub-packages that the file-level check could not see), so both levels are checked.

Layers, decided by name prefix so the folders show them:
- cli: `kgbench.cli` (the package kgbench/cli/: the command line, the pilot, the study
  reader, the console entry) and `kgbench.__main__`: the only code that composes the two
  halves, and nothing else imports it;
- facade: `kgbench.scoring` (the stable scoring API of generated scorer.py stubs) and
  `kgbench.integrations` (the inspect-ai and lm-eval adapters): public fronts of the harness;
- kernel: the rest of kgbench/ (errors, io, locations, cliutil, contract, ...), which imports
  neither half;
- compiler and harness: each imports the kernel, never the other (the contract between them
  is generated/<domain>/), never the facade or the cli.
No import runs upward except from kgbench/cli/.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("compiler", "harness", "kgbench")
CLI = ("kgbench.cli", "kgbench.__main__")
FACADES = ("kgbench.scoring", "kgbench.integrations")
# Which layers each layer may import (its own included).
ALLOWED = {
    "kernel": {"kernel"},
    "compiler": {"compiler", "kernel"},
    "harness": {"harness", "kernel"},
    "facade": {"facade", "harness", "kernel"},
    "cli": {"cli", "facade", "compiler", "harness", "kernel"},
}


def modules(root: Path = REPO) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package __init__)."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            found[".".join(parts)] = (path, is_package)
    return found


def import_graph(found: Mapping[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """module -> the modules of ours it imports (resolved to the longest known name)."""

    def resolve(name: str) -> str | None:
        while name and name not in found:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {}
    for module, (path, is_package) in found.items():
        package = module if is_package else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    stem = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    stem = node.module or ""
                names = [f"{stem}.{alias.name}" for alias in node.names]
            else:
                continue
            targets |= {t for t in map(resolve, names) if t is not None}
        edges[module] = targets - {module}
    return edges


def cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


GRAPH = import_graph(modules())


def _under(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def layer(module: str) -> str:
    """The layer of a module, by its dotted name (kgbench.cliutil is the kernel: a prefix is
    a whole name part, not a string prefix)."""
    if _under(module, CLI):
        return "cli"
    if _under(module, FACADES):
        return "facade"
    top = module.split(".")[0]
    return "kernel" if top == "kgbench" else top


def unit(module: str) -> str:
    """The sub-package or root module a module belongs to (a top package is its own unit)."""
    return ".".join(module.split(".")[:2])


def units(edges: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """The graph summed up to units: unit -> the other units its modules import."""
    summed: dict[str, set[str]] = {}
    for module, targets in edges.items():
        summed.setdefault(unit(module), set()).update(
            unit(t) for t in targets if unit(t) != unit(module)
        )
    return summed


def wrong_imports(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import the layer table does not allow, as "module -> target"."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in edges.items()
        for target in targets
        if layer(target) not in ALLOWED[layer(module)]
    )


def test_the_graph_is_read() -> None:
    """The walk sees the code (a broken walk would find no cycle in nothing)."""
    assert len(GRAPH) > 100
    assert "harness.runfolder" in GRAPH["harness.evaluation.prompts"]
    assert "compiler.api" in GRAPH["kgbench.cli.pilot"]  # a function-level import counts
    assert "harness.release" in units(GRAPH)["kgbench.cli"]


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": {"e"}}
    assert sorted(cycles(graph)) == [["a", "b", "c"], ["e", "e2"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    assert cycles(GRAPH) == []


def test_units_are_sub_packages_and_root_modules() -> None:
    assert unit("harness.scenarios.chains") == "harness.scenarios"
    assert unit("kgbench.contract.models") == "kgbench.contract"
    assert unit("kgbench.integrations.lm_eval_tasks.kgbench.utils") == "kgbench.integrations"
    assert unit("harness.runfolder") == "harness.runfolder"
    assert unit("kgbench.io") == "kgbench.io"
    assert unit("compiler") == "compiler"
    found = modules()
    for name in units(GRAPH):
        path, is_package = found[name]  # every unit is a module of ours
        assert is_package or path.parent.name in PACKAGES, name


def test_a_sub_package_cycle_is_found_where_no_file_cycle_is() -> None:
    """The planted case: no file imports itself back, but the two packages import each other."""
    planted = {
        "harness.a.x": {"harness.b.y"},
        "harness.b.z": {"harness.a.w"},
        "harness.a.w": set(),
        "harness.b.y": set(),
    }
    assert cycles(planted) == []
    assert cycles(units(planted)) == [["harness.a", "harness.b"]]


def test_no_sub_package_cycles() -> None:
    assert cycles(units(GRAPH)) == []


def test_layers_are_decided_by_name_prefix() -> None:
    assert layer("kgbench.cli") == layer("kgbench.cli.pilot") == "cli"
    assert layer("kgbench.__main__") == "cli"
    assert layer("kgbench.cliutil") == "kernel"  # a prefix is a whole name part
    assert layer("kgbench.scoring") == layer("kgbench.integrations.inspect") == "facade"
    assert layer("kgbench.contract.models") == layer("kgbench") == "kernel"
    assert layer("harness.scenarios.cli") == "harness"
    assert layer("compiler.api") == "compiler"


def test_the_layer_check_finds_upward_imports() -> None:
    planted = {
        "kgbench.io": {"kgbench.cli.main"},  # the kernel importing the command line
        "harness.graph.cli": {"kgbench.cli"},  # a half importing it
        "harness.evaluation.scoring": {"kgbench.scoring"},  # a half importing its own facade
        "compiler.api": {"harness.runfolder"},  # one half importing the other
        "kgbench.cli.main": {"harness.graph.cli", "compiler.api", "kgbench.io"},  # allowed
        "kgbench.scoring": {"harness.evaluation.scoring"},  # allowed
    }
    assert wrong_imports(planted) == [
        "compiler.api -> harness.runfolder",
        "harness.evaluation.scoring -> kgbench.scoring",
        "harness.graph.cli -> kgbench.cli",
        "kgbench.io -> kgbench.cli.main",
    ]


def test_the_layers_hold() -> None:
    assert wrong_imports(GRAPH) == []


def test_only_the_cli_imports_upward() -> None:
    """Folders show the layers: every module of the cli layer but `python -m kgbench`'s
    __main__ lives in kgbench/cli/, and every kgbench/ root module that imports a half is a
    facade."""
    found = modules()
    for module in GRAPH:
        if layer(module) == "cli" and module != "kgbench.__main__":
            assert (REPO / "kgbench" / "cli") in found[module][0].parents, module
    composing = {
        m
        for m, targets in GRAPH.items()
        if m.startswith("kgbench") and {layer(t) for t in targets} & {"compiler", "harness"}
    }
    assert {layer(m) for m in composing} <= {"cli", "facade"}, composing

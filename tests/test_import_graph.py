"""The import graph of kgbench's own code: no cycles, and the layers the design card fixes.

Every `import` and `from ... import` in compiler/, harness/ and kgbench/ counts, including
those inside functions: an import hidden in a function body is still a dependency, and the
first person to hoist it to the top of the file would meet the cycle at import time.

Layers:
- the compiler never imports the harness, and the harness never imports the compiler (the
  contract between them is generated/<domain>/; kgbench.pilot and kgbench.study compose them,
  and kgbench.scoring, the stable scoring API of generated scorer.py stubs, fronts the harness);
- both may import the kernel (kgbench.errors, .io, .locations, .cliutil, .scope, .version),
  never the command line (kgbench.cli, kgbench.pilot, kgbench.__main__);
- the kernel imports neither half.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("compiler", "harness", "kgbench")
# The command line and the modules that compose the two halves for it (the pilot, a study
# file read with the compiler's declaration reader), and the public scoring API that the
# generated scorer.py stubs call (a facade over the harness, imported by neither half).
CLI_MODULES = {
    "kgbench.cli",
    "kgbench.pilot",
    "kgbench.study",
    "kgbench.scoring",
    "kgbench.__main__",
    "kgbench.entry",  # the console script: a no-op compile answered before kgbench.cli loads
    # the harness adapters (inspect-ai, lm-eval): like kgbench.scoring, facades over the harness
    "kgbench.integrations.core",
    "kgbench.integrations.inspect",
    "kgbench.integrations.lm_eval_tasks.kgbench.utils",
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


def _layer(module: str) -> str:
    if module in CLI_MODULES:
        return "cli"
    return module.split(".")[0] if not module.startswith("kgbench") else "kernel"


def test_the_graph_is_read() -> None:
    """The walk sees the code (a broken walk would find no cycle in nothing)."""
    assert len(GRAPH) > 100
    assert "harness.runfolder" in GRAPH["harness.prompts"]
    assert "compiler.api" in GRAPH["kgbench.pilot"]  # a function-level import counts


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": {"e"}}
    assert sorted(cycles(graph)) == [["a", "b", "c"], ["e", "e2"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    assert cycles(GRAPH) == []


def test_the_layers_hold() -> None:
    allowed = {
        "compiler": {"compiler", "kernel"},
        "harness": {"harness", "kernel"},
        "kernel": {"kernel"},
        "cli": {"cli", "kernel", "compiler", "harness"},
    }
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if _layer(target) not in allowed[_layer(module)]
    )
    assert wrong == []

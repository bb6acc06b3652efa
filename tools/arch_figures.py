"""The import graph of kgbench's own code and the size figures the architecture reviews ask for.

    python -m tools.arch_figures          # the figures, one per line, then the long files
    python -m tools.arch_figures --json   # the same, as one JSON object

This module owns the walk: tests/test_import_graph.py imports it and asserts on it (no cycle,
the layers hold), and an architecture note quotes what this prints, so the figures in a note
and the test's verdict come from one reading of the code.

Every `import` and `from ... import` in compiler/, harness/ and kgbench/ counts, including
those inside functions: an import hidden in a function body is still a dependency, and the
first person to hoist it to the top of the file would meet the cycle at import time.

Units: a sub-package (`harness.scenarios`, `compiler.backends`, `kgbench.contract`) or a root
module (`harness.runfolder`, `compiler.api`, `kgbench.io`). Two units that import each other
form a cycle even when no file imports itself back, so cycles are counted at both levels.

Layers, decided by name prefix so the folders show them:
- cli: `kgbench.cli` (the package kgbench/cli/) and `kgbench.__main__`: the only code that
  composes the two halves, and nothing else imports it;
- facade: `kgbench.scoring` and `kgbench.integrations`: public fronts of the harness;
- kernel: the rest of kgbench/ (errors, io, locations, cliutil, contract, ...), which imports
  neither half;
- compiler and harness: each imports the kernel, never the other (the contract between them
  is generated/<domain>/), never the facade or the cli.
An edge "runs upward" when the layer table does not allow it (`wrong_imports`).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
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
# The review's thresholds: a file or function past these is a room worth splitting.
LONG_FILE = 600
LONG_FUNCTION = 80


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


def long_functions(path: Path, tree: ast.AST) -> list[tuple[int, str]]:
    """(length, "file:line name") of every function or method over LONG_FUNCTION lines,
    nested ones included (a closure is as hard to read as a function)."""
    return [
        (node.end_lineno - node.lineno + 1, f"{path}:{node.lineno} {node.name}")
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LONG_FUNCTION
    ]


def _edge_count(edges: Mapping[str, Iterable[str]]) -> int:
    return sum(len(set(targets)) for targets in edges.values())


@dataclass
class Figures:
    """What `python -m tools.arch_figures` prints; every count is of the walk above."""

    modules: int
    file_edges: int
    units: int
    unit_edges: int
    file_cycles: list[list[str]]
    unit_cycles: list[list[str]]
    upward_file_edges: list[str]
    upward_unit_edges: list[str]
    source_lines: int
    long_files: list[tuple[int, str]] = field(default_factory=list)
    long_functions: list[tuple[int, str]] = field(default_factory=list)


def figures(root: Path = REPO) -> Figures:
    """Read the code under `root` once and count."""
    found = modules(root)
    graph = import_graph(found)
    summed = units(graph)
    lines = 0
    files: list[tuple[int, str]] = []
    functions: list[tuple[int, str]] = []
    for path, _ in found.values():
        text = path.read_text(encoding="utf-8")
        count = len(text.splitlines())
        lines += count
        relative = path.relative_to(root)
        if count > LONG_FILE:
            files.append((count, str(relative)))
        functions += long_functions(relative, ast.parse(text))
    return Figures(
        modules=len(found),
        file_edges=_edge_count(graph),
        units=len(summed),
        unit_edges=_edge_count(summed),
        file_cycles=cycles(graph),
        unit_cycles=cycles(summed),
        upward_file_edges=wrong_imports(graph),
        upward_unit_edges=wrong_imports(summed),
        source_lines=lines,
        long_files=sorted(files, reverse=True),
        long_functions=sorted(functions, reverse=True),
    )


def report(found: Figures) -> str:
    """The figures as text: the counts first, then what the long counts are made of."""
    rows = [
        f"modules (files): {found.modules}",
        f"file edges: {found.file_edges}",
        f"units (sub-packages and root modules): {found.units}",
        f"unit edges: {found.unit_edges}",
        f"file-level cycles: {len(found.file_cycles)}",
        f"unit-level cycles: {len(found.unit_cycles)}",
        f"upward edges, file level: {len(found.upward_file_edges)}",
        f"upward edges, unit level: {len(found.upward_unit_edges)}",
        f"lines of source ({', '.join(PACKAGES)}): {found.source_lines}",
        f"files over {LONG_FILE} lines: {len(found.long_files)}",
        f"functions over {LONG_FUNCTION} lines: {len(found.long_functions)}",
    ]
    for title, items in (
        ("file cycle", [" ".join(c) for c in found.file_cycles]),
        ("unit cycle", [" ".join(c) for c in found.unit_cycles]),
        ("upward", found.upward_file_edges),
        ("long file", [f"{n:5d} {name}" for n, name in found.long_files]),
        ("long function", [f"{n:5d} {name}" for n, name in found.long_functions]),
    ):
        rows += [f"  {title}: {item}" for item in items]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    found = figures()
    print(json.dumps(asdict(found), indent=2) if args.json else report(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())

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

The walk and the layer table live in tools/arch_figures.py, which also prints the figures an
architecture note quotes; this file holds them to the rules.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tools.arch_figures import (
    PACKAGES,
    REPO,
    cycles,
    figures,
    import_graph,
    layer,
    modules,
    report,
    unit,
    units,
    wrong_imports,
)

GRAPH = import_graph(modules())


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


def test_the_figures_tool_counts_the_walk() -> None:
    """`python -m tools.arch_figures` counts the same graph the tests above judge."""
    found = figures()
    summed = units(GRAPH)
    assert found.modules == len(modules()) == len(GRAPH)
    assert found.file_edges == sum(len(t) for t in GRAPH.values()) > found.modules
    assert found.units == len(summed)
    assert found.unit_edges == sum(len(t) for t in summed.values())
    assert found.file_cycles == cycles(GRAPH)
    assert found.unit_cycles == cycles(summed)
    assert found.upward_file_edges == wrong_imports(GRAPH)
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p, _ in modules().values())
    assert found.source_lines == lines
    assert all(n > 600 for n, _ in found.long_files)
    assert all(n > 80 for n, _ in found.long_functions)
    text = report(found)
    assert f"modules (files): {len(GRAPH)}" in text
    assert f"unit edges: {found.unit_edges}" in text


def test_the_figures_tool_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.arch_figures", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    printed = json.loads(done.stdout)
    assert printed["modules"] == len(GRAPH)
    assert printed["unit_cycles"] == [] and printed["file_cycles"] == []

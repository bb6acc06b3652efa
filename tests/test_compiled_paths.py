"""One compiled-domain handle (issue 32, item 2).

`harness.compiled.CompiledDomain` is the only opener of a compiled domain and the only code
that joins a path under generated/<d>/: every other module asks the handle for the file (a
method), so the layout of a compiled folder is written down once. The AST check below holds
that for the compiler-free code (harness/, kgbench/); the rest are the opener's cases.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

import harness.compiled
from harness.compiled import CompiledDomain
from harness.runfolder import RunFolder
from kgbench.errors import UserError
from kgbench.locations import GENERATED_DIR

REPO = Path(__file__).resolve().parents[1]
OWNER = Path("harness") / "compiled.py"
ROOTS = ("harness", "kgbench")
GENERATED_NAMES = {"GENERATED", "GENERATED_DIR"}


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def violations(source: str, filename: str = "<source>") -> list[str]:
    """Where `source` joins a path under a compiled domain or builds the handle by hand:
    `<x>.root / ...`, `GENERATED / ...` (or GENERATED_DIR), `CompiledDomain(...)`."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left = node.left
            if isinstance(left, ast.Attribute) and left.attr == "root":
                found.append(f"{filename}:{node.lineno}: joins a path under <handle>.root")
            elif _name(left) in GENERATED_NAMES:
                found.append(f"{filename}:{node.lineno}: joins a path under {_name(left)}")
        elif isinstance(node, ast.Call) and _name(node.func) == "CompiledDomain":
            found.append(f"{filename}:{node.lineno}: builds CompiledDomain(...) by hand")
    return found


def test_no_module_but_the_handle_joins_a_compiled_path() -> None:
    found = []
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO)
            if rel == OWNER:
                continue
            found += violations(path.read_text(encoding="utf-8"), str(rel))
    assert found == [], "\n".join(found)


def test_the_check_finds_a_planted_join() -> None:
    planted = (
        "from harness.compiled import GENERATED, CompiledDomain\n"
        "def f(compiled):\n"
        "    a = compiled.root / 'gold'\n"
        "    b = GENERATED / 'cardio'\n"
        "    return CompiledDomain('cardio', a), b\n"
    )
    found = violations(planted)
    assert [f.split(":")[1] for f in found] == ["3", "4", "5"]
    assert violations("def f(x):\n    return x.gold_dir / '1.0.0'\n") == []


# A patch of the handle's root: `setattr(harness.compiled, ...)`, `setattr("harness.compiled.X",
# ...)` or of kgbench.locations' GENERATED_DIR, which the handle reads. (The compiler's own
# default output root, compiler.api, is the compiler's: `compile --out` is its explicit form.)
PATCHES_THE_ROOT = re.compile(
    r"""setattr\(\s*(?:harness\.compiled\b|["']harness\.compiled\."""
    r"""|kgbench\.locations\b|locations\s*,|["']kgbench\.locations\.)"""
)
PATCHING_ROOTS = ("tests", "bench")


def root_patches(source: str, filename: str = "<source>") -> list[str]:
    """Where `source` points the compiled-domain handle at another root by patching a module."""
    return [
        f"{filename}:{number}: {line.strip()}"
        for number, line in enumerate(source.splitlines(), 1)
        if PATCHES_THE_ROOT.search(line)
    ]


def test_no_test_or_bench_module_patches_the_compiled_root() -> None:
    """A name means the project's generated/<name>/ and nothing else: a test or benchmark that
    works on another compile opens it by folder or passes `generated=` (issue 32 item 2),
    so there is no module root left to patch, and none may be patched back in."""
    assert not hasattr(harness.compiled, "GENERATED")
    found = []
    for root in PATCHING_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO)
            if rel == Path(__file__).resolve().relative_to(REPO):
                continue  # this file plants patches to test the check
            found += root_patches(path.read_text(encoding="utf-8"), str(rel))
    assert found == [], "\n".join(found)


def test_the_root_check_finds_a_planted_patch() -> None:
    planted = (
        "import harness.compiled\n"
        "def test(monkeypatch, tmp_path):\n"
        "    monkeypatch.setattr(harness.compiled, 'GENERATED', tmp_path)\n"
        "    monkeypatch.setattr('harness.compiled.GENERATED_DIR', tmp_path)\n"
        "    monkeypatch.setattr(kgbench.locations, 'GENERATED_DIR', tmp_path)\n"
        "    patch.setattr('kgbench.locations.GENERATED_DIR', tmp_path)\n"
        "    monkeypatch.setattr('compiler.api.GENERATED_DIR', tmp_path)\n"
        "    CompiledDomain.open('toy', generated=tmp_path)\n"
    )
    assert [f.split(":")[1] for f in root_patches(planted)] == ["3", "4", "5", "6"]


def test_open_by_name_by_folder_and_by_handle() -> None:
    by_name = CompiledDomain.open("cardio")
    assert by_name.root == GENERATED_DIR / "cardio" and by_name.is_project_compile
    by_folder = CompiledDomain.open(GENERATED_DIR / "cardio")
    assert by_folder.name == "cardio" and by_folder.root == by_name.root
    assert CompiledDomain.open(str(GENERATED_DIR / "cardio")).name == "cardio"
    assert CompiledDomain.open(by_name) is by_name
    assert by_name.gold_dir == by_name.root / "gold"
    assert by_name.schema_path("response") == by_name.root / "schemas" / "response.schema.json"
    assert by_name.generated_scenarios.is_file()


def test_a_folder_is_named_by_its_manifest(tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere"
    shutil.copytree(GENERATED_DIR / "cardio", copy, ignore=shutil.ignore_patterns("gold"))
    compiled = CompiledDomain.open(copy)
    assert compiled.name == "cardio" and not compiled.is_project_compile


def test_open_refuses_what_is_not_compiled(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is not compiled"):
        CompiledDomain.open("nosuchdomain")
    with pytest.raises(UserError, match="not a compiled domain folder"):
        CompiledDomain.open(tmp_path)
    with pytest.raises(UserError, match="not a compiled domain folder"):
        CompiledDomain.open(str(tmp_path / "missing"))


def _run_of(tmp_path: Path, compiled: CompiledDomain) -> RunFolder:
    run = tmp_path / "run"
    run.mkdir()
    first = compiled.generated_scenarios.read_text(encoding="utf-8").splitlines()[0]
    (run / "scenarios.jsonl").write_text(first + "\n", encoding="utf-8")
    folder = RunFolder(run)
    folder.describe(compiled)
    return folder


def test_a_run_names_its_domain_once(tmp_path: Path) -> None:
    cardio = CompiledDomain.open("cardio")
    folder = _run_of(tmp_path, cardio)
    assert folder.compiled().root == cardio.root
    assert folder.compiled(cardio) is cardio
    with pytest.raises(UserError, match="a run is scored only with its own"):
        folder.compiled("afib")
    assert folder.compiled("afib", describing=True).name == "afib"


def test_a_recorded_folder_of_another_domain_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "compiled"
    shutil.copytree(GENERATED_DIR / "afib", copy, ignore=shutil.ignore_patterns("gold"))
    folder = _run_of(tmp_path, CompiledDomain.open("cardio"))
    data = json.loads(folder.run_json.read_text(encoding="utf-8"))
    data["compiled_domain"] = "../compiled"
    folder.run_json.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError, match="is of domain 'afib'"):
        RunFolder(folder.path).compiled()

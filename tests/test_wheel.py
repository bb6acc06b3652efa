"""An installed kgbench works outside a clone: the wheel ships spec/ and templates/ as package
data, and compiles a domain in a project folder of its own.

The wheel is built from this checkout and installed, alone, into a fresh virtual environment
outside the repository. Its dependencies are the development environment's (a `.pth` line
adds that site-packages after the fresh one), which keeps the test offline and fast; none of
them is kgbench, whose code and data come from the wheel only (checked).
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.api import compile_domain

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "tests" / "fixtures" / "domains" / "mini"

pytestmark = pytest.mark.slow


def _run(args: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root / "dist", REPO],
        root,
        env,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (root / "dist").glob("kgbench-*.whl")
    venv = root / "venv"
    made = _run([sys.executable, "-m", "venv", venv], root, env)
    assert made.returncode == 0, made.stderr
    (fresh_site,) = (venv / "lib").glob("python3*/site-packages")
    (fresh_site / "kgbench_test_dependencies.pth").write_text(site.getsitepackages()[0] + "\n")
    pip = _run(
        [venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", wheel], root, env
    )
    assert pip.returncode == 0, pip.stderr
    return venv, env


def test_the_wheel_ships_the_spec_and_the_templates(installed) -> None:
    venv, env = installed
    project = venv.parent / "elsewhere"
    project.mkdir()
    where = _run(
        [
            venv / "bin" / "python",
            "-c",
            "import compiler, harness, kgbench.locations as l; "
            "print(l.__file__, compiler.__file__, harness.__file__, "
            "l.SPEC_DIR, l.TEMPLATES_DIR, l.PROJECT_ROOT, l.IN_CHECKOUT, sep='\\n')",
        ],
        project,
        env,
    )
    assert where.returncode == 0, where.stderr
    *modules, spec, templates, project_root, in_checkout = where.stdout.splitlines()
    assert all(Path(m).is_relative_to(venv) for m in modules), modules
    assert Path(spec) == Path(modules[0]).parent / "spec" and in_checkout == "False"
    assert Path(project_root) == project.resolve()
    shipped = sorted(p.relative_to(Path(spec)).as_posix() for p in Path(spec).rglob("*.yaml"))
    assert shipped == sorted(
        p.relative_to(REPO / "spec").as_posix() for p in (REPO / "spec").rglob("*.yaml")
    )
    assert "declarations/conditions.yaml" in shipped and "study/study.yaml" in shipped
    assert {p.relative_to(Path(templates)) for p in Path(templates).rglob("*.j2")} == {
        p.relative_to(REPO / "templates") for p in (REPO / "templates").rglob("*.j2")
    }


def test_the_installed_kgbench_compiles_a_domain_outside_a_clone(installed, tmp_path) -> None:
    venv, env = installed
    kgbench = venv / "bin" / "kgbench"
    project = tmp_path / "project"
    shutil.copytree(MINI, project / "domains" / "mini")  # imports ../../../../spec/kg: absent
    version = _run([kgbench, "--version"], project, env)
    assert version.returncode == 0 and version.stdout.strip() == "kgbench 0.1.0", version

    compiled = _run([kgbench, "compile", "--domain", "mini"], project, env)
    assert compiled.returncode == 0, compiled.stderr
    again = _run([kgbench, "compile", "--domain", "mini"], project, env)  # the console entry's
    assert again.returncode == 0 and again.stderr.startswith(  # no-op path, installed
        "compiled mini: up to date in generated/mini ("
    ), again.stderr
    assert _run([kgbench, "validate", "--domain", "mini"], project, env).returncode == 0
    out = project / "generated" / "mini"
    here = compile_domain(str(MINI), out_root=tmp_path / "clone", force=True).out_dir
    different = sorted(
        p.relative_to(here).as_posix()
        for p in here.rglob("*")
        if p.is_file() and p.read_bytes() != (out / p.relative_to(here)).read_bytes()
    )
    assert different == ["manifest.json"]  # only where the domain's files live differs
    manifest = (out / "manifest.json").read_text()
    assert '"path": "spec/kg.yaml"' in manifest and '"path": "domains/mini/schema.yaml"' in manifest

    bad = _run([kgbench, "compile", "--domain", "nope"], project, env)
    assert bad.returncode == 2 and bad.stderr.startswith("error: unknown domain 'nope'")
    assert "known domains: mini" in bad.stderr and "Traceback" not in bad.stderr

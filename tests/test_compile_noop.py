"""A no-op compile decides "up to date" from hashes before importing what it does not need:
no numpy, pyarrow or LinkML (nor pydantic on the console entry's fast path), and it says
exactly what the `compile` command says. Anything that is not a plain no-op goes through
typer as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.api import compile_domain
from kgbench import cli

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pyarrow", "linkml", "linkml_runtime", "jinja2")

# Runs the console entry as the installed `kgbench` script does (`app()` with sys.argv), or
# through typer (`app(args)`), then prints which heavy packages were imported.
PROBE = """
import json, sys
argv = json.loads(sys.argv[1]); through_typer = sys.argv[2] == "typer"
watched = {*json.loads(sys.argv[3]), "pydantic"}
sys.argv = ["kgbench", *argv]
from kgbench.cli import app
code = 0
try:
    code = app(argv) if through_typer else app()
except SystemExit as exc:
    code = exc.code
loaded = sorted({m.split(".")[0] for m in sys.modules} & watched)
print(json.dumps({"code": code, "loaded": loaded}))
"""


def run_probe(argv: list[str], through_typer: bool = False) -> tuple[dict, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            json.dumps(argv),
            "typer" if through_typer else "entry",
            json.dumps(HEAVY),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1]), proc.stderr


@pytest.fixture
def compiled(tmp_path: Path, mini_copy: Path) -> tuple[Path, Path]:
    out = tmp_path / "out"
    assert not compile_domain(mini_copy, out_root=out).up_to_date
    return mini_copy, out


def test_noop_compile_imports_no_numpy_pyarrow_linkml_or_pydantic(compiled) -> None:
    domain, out = compiled
    result, stderr = run_probe(["compile", "--domain", str(domain), "--out", str(out)])
    assert result == {"code": 0, "loaded": []}
    assert "compiled mini: up to date in" in stderr


def test_noop_compile_through_typer_imports_no_numpy_pyarrow_or_linkml(compiled) -> None:
    domain, out = compiled
    result, stderr = run_probe(
        ["compile", "--domain", str(domain), "--out", str(out)], through_typer=True
    )
    assert result["code"] == 0
    assert not set(result["loaded"]) & set(HEAVY)
    assert "compiled mini: up to date in" in stderr


def test_a_changed_input_is_compiled_not_reported_up_to_date(compiled) -> None:
    domain, out = compiled
    data = domain / "data" / "entities.csv"
    data.write_text(data.read_text().replace("Dry cough", "Dry tickly cough"))
    result, stderr = run_probe(["compile", "--domain", str(domain), "--out", str(out)])
    assert result["code"] == 0
    assert "wrote" in stderr and "up to date" not in stderr
    assert "Dry tickly cough" in (out / "mini" / "kg.json").read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["compile", "--domain", "{d}", "--out", "{o}", "--force"],
        ["compile", "--help"],
        ["compile", "--domain", "{d}", "--domain", "{d}", "--out", "{o}"],
        ["compile", "--out", "{o}"],
        ["compile", "--domain"],
        ["compile", "--domain", "no-such-domain"],
        ["validate", "--domain", "{d}"],
        [],
    ],
)
def test_only_a_plain_noop_takes_the_fast_path(compiled, monkeypatch, argv: list[str]) -> None:
    """Every other spelling is left to typer, which parses, helps and errs as before (the
    fast path returns False without printing)."""
    domain, out = compiled
    printed: list = []
    monkeypatch.setattr(cli, "_report_compile", lambda *a: printed.append(a))
    args = [a.format(d=domain, o=out) for a in argv]
    assert cli._noop_compile(args) is False
    assert printed == []


def test_the_plain_spellings_take_the_fast_path(compiled, monkeypatch) -> None:
    domain, out = compiled
    printed: list = []
    monkeypatch.setattr(cli, "_report_compile", lambda result, took: printed.append(result))
    for argv in (
        ["compile", "--domain", str(domain), "--out", str(out)],
        ["compile", f"--domain={domain}", f"--out={out}", "--no-force"],
        ["compile", "-d", str(domain), "--out", str(out)],
    ):
        assert cli._noop_compile(argv) is True
    assert [r.up_to_date for r in printed] == [True, True, True]
    assert {r.domain for r in printed} == {"mini"}

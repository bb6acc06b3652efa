"""A no-op compile decides "up to date" from hashes before importing what it does not need:
no numpy, pyarrow or LinkML (nor pydantic, typer, click or rich on the console entry's fast
path, `kgbench.cli.entry`), and it says exactly what the `compile` command says. Anything that is
not a plain no-op goes through typer as before. Every kind of input change (spec, domain
data, template, a new input file, the compiler's code, a dependency's version, an output)
still makes it "not up to date"."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import compiler.freshness as freshness
import compiler.paths as compiler_paths
import compiler.versions as versions
import kgbench.locations as locations
from compiler.api import compile_domain, up_to_date
from kgbench.cli import entry

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pyarrow", "linkml", "linkml_runtime", "jinja2")
# What the console entry's fast path must not import either (the command line's own cost).
COMMAND_LINE = ("pydantic", "typer", "click", "rich")
# Standard modules the fast path leaves alone too: `dataclasses` (with `inspect`) and `typing`
# were a third of its cost over a bare interpreter (kgbench.errors, annotations).
STANDARD = ("dataclasses", "inspect", "typing")

# Runs the console entry as the installed `kgbench` script does (`main()` with sys.argv), or
# through typer (`app(args)`), then prints which heavy packages were imported.
PROBE = """
import json, sys
argv = json.loads(sys.argv[1]); through_typer = sys.argv[2] == "typer"
watched = {*json.loads(sys.argv[3])}
sys.argv = ["kgbench", *argv]
code = 0
try:
    if through_typer:
        from kgbench.cli import app
        code = app(argv)
    else:
        from kgbench.cli.entry import main
        code = main()
except SystemExit as exc:
    code = exc.code
loaded = sorted({m.split(".")[0] for m in sys.modules} & watched)
print(json.dumps({"code": code, "loaded": loaded}))
"""


def run_probe(argv: list[str], through_typer: bool = False) -> tuple[dict, str]:
    # wide enough for the long temporary paths, so Rich would not wrap the line either
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "500"}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            json.dumps(argv),
            "typer" if through_typer else "entry",
            json.dumps([*HEAVY, *COMMAND_LINE, *STANDARD]),
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


def test_noop_compile_imports_no_numpy_pyarrow_linkml_nor_the_command_line(compiled) -> None:
    """Nor dataclasses, inspect or typing (STANDARD)."""
    domain, out = compiled
    result, stderr = run_probe(["compile", "--domain", str(domain), "--out", str(out)])
    assert result == {"code": 0, "loaded": []}
    _, through_typer = run_probe(
        ["compile", "--domain", str(domain), "--out", str(out)], through_typer=True
    )
    timeless = re.compile(r"\(\d+\.\d\d s\)")
    assert timeless.sub("(T s)", stderr) == timeless.sub("(T s)", through_typer)
    assert stderr.startswith("compiled mini: up to date in ") and stderr.count("\n") == 1


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
    monkeypatch.setattr(entry, "report_up_to_date", lambda *a: printed.append(a))
    args = [a.format(d=domain, o=out) for a in argv]
    assert entry.noop_compile(args) is False
    assert printed == []


def test_the_plain_spellings_take_the_fast_path(compiled, monkeypatch) -> None:
    domain, out = compiled
    printed: list = []
    monkeypatch.setattr(entry, "report_up_to_date", lambda *a: printed.append(a[:2]))
    for argv in (
        ["compile", "--domain", str(domain), "--out", str(out)],
        ["compile", f"--domain={domain}", f"--out={out}", "--no-force"],
        ["compile", "-d", str(domain), "--out", str(out)],
    ):
        assert entry.noop_compile(argv) is True
    assert printed == [("mini", out / "mini")] * 3


# --- every kind of input change is still seen --------------------------------------------


@pytest.fixture
def shipped_copy(tmp_path: Path, monkeypatch) -> Path:
    """spec/ and templates/ copied to a writable folder and made the ones kgbench ships, so
    a test can edit a spec schema or a template without touching the checkout."""
    root = tmp_path / "shipped"
    shutil.copytree(REPO / "spec", root / "spec")
    shutil.copytree(REPO / "templates", root / "templates")
    spec, templates = root / "spec", root / "templates"
    for module in (compiler_paths, freshness, locations):
        monkeypatch.setattr(module, "SPEC_DIR", spec, raising=False)
        monkeypatch.setattr(module, "TEMPLATES_DIR", templates, raising=False)
    monkeypatch.setattr(freshness, "DECLARATIONS_DIR", spec / "declarations")
    return root


def _edit(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\n# edited\n")


def test_the_shipped_copy_is_current_before_any_edit(compiled, shipped_copy) -> None:
    """The control for the edits below: the copies alone change nothing."""
    domain, out = compiled
    assert up_to_date(domain, out) is not None


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda root, domain: _edit(root / "spec" / "kg.yaml"), id="spec schema"),
        pytest.param(
            lambda root, domain: _edit(root / "spec" / "declarations" / "conditions.yaml"),
            id="shared declaration",
        ),
        pytest.param(
            lambda root, domain: _edit(next((root / "templates").rglob("*.j2"))), id="template"
        ),
        pytest.param(
            lambda root, domain: (root / "templates" / "new.md.j2").write_text("x"),
            id="new template",
        ),
        pytest.param(
            lambda root, domain: (root / "spec" / "new.yaml").write_text("id: x"),
            id="new spec schema",
        ),
        pytest.param(lambda root, domain: _edit(domain / "domain.yaml"), id="domain file"),
        pytest.param(
            lambda root, domain: _edit(domain / "data" / "assertions.csv"), id="domain data"
        ),
        pytest.param(
            lambda root, domain: (domain / "data" / "entities.csv").unlink(),
            id="domain data removed",
        ),
    ],
)
def test_a_changed_input_is_not_up_to_date(compiled, shipped_copy, edit) -> None:
    domain, out = compiled
    edit(shipped_copy, domain)
    assert up_to_date(domain, out) is None
    assert entry.noop_compile(["compile", "--domain", str(domain), "--out", str(out)]) is False


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda out: _edit(out / "kg.json"), id="output edited"),
        pytest.param(lambda out: (out / "kg.json").unlink(), id="output removed"),
        pytest.param(lambda out: (out / "manifest.json").write_text("{"), id="manifest broken"),
        pytest.param(lambda out: (out / "manifest.json").write_text("[]"), id="manifest a list"),
        pytest.param(
            lambda out: (out / "manifest.json").write_text("[" * 100_000), id="manifest deep"
        ),
        pytest.param(lambda out: (out / "manifest.json").unlink(), id="no manifest"),
    ],
)
def test_a_changed_output_or_manifest_is_not_up_to_date(compiled, edit) -> None:
    domain, out = compiled
    edit(out / "mini")
    assert up_to_date(domain, out) is None


def test_a_change_to_the_compilers_code_is_not_up_to_date(compiled, tmp_path, monkeypatch):
    domain, out = compiled
    code = tmp_path / "compiler"
    shutil.copytree(REPO / "compiler", code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(versions, "COMPILER_DIR", code)
    assert up_to_date(domain, out) is not None  # the copy hashes the same
    _edit(code / "backends" / "neo4j.py")
    assert up_to_date(domain, out) is None


def test_another_version_of_a_dependency_is_not_up_to_date(compiled, tmp_path, monkeypatch):
    """A linkml installed ahead of the current one on sys.path is the one a compile would
    use: the manifest's recorded version no longer matches."""
    domain, out = compiled
    info = tmp_path / "site" / "linkml-99.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: linkml\nVersion: 99.0\n\nbody\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert versions.installed_versions(("linkml",)) == {"linkml": "99.0"}
    assert up_to_date(domain, out) is None


# --- the light readers agree with the ones they stand in for -------------------------------


def test_installed_versions_agree_with_importlib_metadata() -> None:
    """Every installed distribution, and one that is not installed."""
    from importlib import metadata

    names = tuple(sorted({d.metadata["Name"] for d in metadata.distributions()}))
    assert len(names) > 50
    expected = {name: metadata.version(name) for name in names}
    assert versions.installed_versions(names) == expected
    assert versions.installed_versions(("no-such-dist-kgbench",)) == {
        "no-such-dist-kgbench": "unknown"
    }


def test_sha256_of_is_the_manifests_hash_and_refuses_what_is_not_a_file(tmp_path) -> None:
    from kgbench.io import sha256_file

    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(3 << 20))
    assert freshness.sha256_of(data) == sha256_file(data)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert freshness.sha256_of(fifo) is None  # not opened: it would block
    assert freshness.sha256_of(tmp_path) is None
    assert freshness.sha256_of(tmp_path / "missing") is None


@pytest.mark.parametrize("columns", [None, "60", "200"])
def test_the_plain_line_is_what_rich_prints(capsys, monkeypatch, columns) -> None:
    """Where the entry writes a line itself, Rich's stderr console would have written the
    same bytes; where it would not (wrapped, markup, not ASCII), the entry leaves it to Rich."""
    from kgbench.cliutil import stderr_console

    for name in ("TTY_COMPATIBLE", "FORCE_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)
    lines = [
        "compiled mini: up to date in generated/mini (0.01 s)",
        "compiled mini: up to date in " + "x/" * 40 + " (0.01 s)",
        "compiled m[i]: up to date in out (0.01 s)",
        "compiled m\\: up to date in out (0.01 s)",
        "compiled mïni: up to date in out (0.01 s)",
        "compiled mini:  two  spaces  in out (0.01 s)",
    ]
    plain = []
    for line in lines:
        if entry._rich_prints_plain(line):
            plain.append(line)
            stderr_console().print(line)
            assert capsys.readouterr().err == line + "\n"
    width = int(columns or 80)
    assert plain == [line for line in lines if line.isascii() and len(line) < width
                     and "[" not in line and "\\" not in line]  # fmt: skip
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not entry._rich_prints_plain(lines[0])  # Rich would colour it

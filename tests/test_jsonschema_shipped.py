"""The spec's own JSON Schemas ship precompiled (`spec/jsonschemas.json`), so no run needs
LinkML's generator for them while the spec files are unchanged: a validation with the
project's cache turned off (`KGBENCH_NO_CACHE=1`, the bench's "cold") and a forced compile
with a warm cache import no `linkml.generators` (issue 33, item 3). The shipped file is what
the generator writes now, and a changed spec file is never served from it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compiler import jsonschemas

REPO = Path(__file__).resolve().parents[1]

# Runs the console entry in a fresh interpreter as the `kgbench` script does, then says
# whether LinkML's generators were imported.
PROBE = """
import json, sys
sys.argv = ["kgbench", *json.loads(sys.argv[1])]
code = 0
try:
    from kgbench.cli.entry import main
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "generators": "linkml.generators" in sys.modules}))
"""


def _probe(argv: list[str], home: Path, **env: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != "KGBENCH_NO_CACHE"}
    environment.update(PYTHONPATH=str(REPO), KGBENCH_HOME=str(home), **env)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        capture_output=True, text=True, env=environment, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_the_shipped_schemas_are_what_linkml_generates_now() -> None:
    # after editing a spec schema or compiler/jsonschemas.py: python -m compiler.jsonschemas
    assert jsonschemas.SHIPPED.read_text(encoding="utf-8") == jsonschemas.shipped_text()


def test_a_forced_compile_and_a_cold_validation_import_no_linkml_generator(
    tmp_path: Path, mini_copy: Path
) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    compile_forced = ["compile", "--domain", str(mini_copy), "--out", str(out), "--force"]
    # yes: with an empty cache the domain's table row schemas need the generator (the probe
    # sees it)
    assert _probe(compile_forced, home) == {"code": 0, "generators": True}
    # no: the same forced compile with the cache it left, in a fresh process
    assert _probe(compile_forced, home) == {"code": 0, "generators": False}
    # no: a validation with the project's cache off; the spec's schemas come shipped
    validate = ["validate", "--domain", str(mini_copy)]
    assert _probe(validate, home, KGBENCH_NO_CACHE="1") == {"code": 0, "generators": False}


@pytest.fixture
def spec_copy(tmp_path: Path, monkeypatch) -> Path:
    spec = tmp_path / "spec"
    shutil.copytree(jsonschemas.SPEC_DIR, spec)
    monkeypatch.setattr(jsonschemas, "SPEC_DIR", spec)
    monkeypatch.setattr(jsonschemas, "SHIPPED", spec / "jsonschemas.json")
    jsonschemas._shipped_entries.cache_clear()
    yield spec
    jsonschemas._shipped_entries.cache_clear()


def test_a_changed_spec_schema_is_not_served_from_the_shipped_file(spec_copy: Path) -> None:
    shipped = json.loads((spec_copy / "jsonschemas.json").read_text())["schemas"]
    # yes: an unchanged schema is served as shipped
    assert (
        jsonschemas.shipped_schema(spec_copy / "response.yaml") == shipped["response.yaml"]["value"]
    )
    # no: one changed byte in declarations.yaml, and it is made anew
    path = spec_copy / "declarations.yaml"
    path.write_text(path.read_text() + "\n# edited\n")
    assert jsonschemas.shipped_schema(path) is None
    # no: a domain's schema (outside spec/) is never shipped
    assert jsonschemas.shipped_schema(REPO / "domains/cardio/schema/cardio.yaml") is None


def test_other_code_or_another_linkml_version_serves_nothing(spec_copy: Path, monkeypatch) -> None:
    monkeypatch.setattr(jsonschemas, "_stamp", lambda: "another generator|linkml 0.0")
    assert jsonschemas.shipped_schema(spec_copy / "response.yaml") is None

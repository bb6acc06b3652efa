"""`kgbench validate` through the console entry's light path (`kgbench.cli.entry`) prints the
same bytes and exits with the same code as through typer, without importing typer's pydantic
adapters or the other commands (issue 33, item 5: validation near its floor). Only plain
spellings take the light path; anything else goes to typer, which words its own errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgbench.cli.entry import _plain_validate_options

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys
argv, through = json.loads(sys.argv[1]), sys.argv[2]
sys.argv = ["kgbench", *argv]
code = 0
try:
    if through == "typer":
        from kgbench.cli import app
        app(argv, prog_name="kgbench")
    else:
        from kgbench.cli.entry import main
        main()
except SystemExit as exc:
    code = exc.code
sys.stderr.flush()
print(json.dumps({"code": code, "pydantic": "pydantic" in sys.modules, "typer": "typer" in sys.modules}))
"""


def _run(argv: list[str], through: str) -> tuple[dict, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "500"}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv), through],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=300,
    )  # fmt: skip
    return json.loads(proc.stdout.splitlines()[-1]), proc.stderr


@pytest.mark.parametrize("broken", [False, True], ids=["valid", "an-error"])
def test_the_light_path_prints_what_typer_prints(mini_copy: Path, broken: bool) -> None:
    if broken:
        data = mini_copy / "data" / "assertions.csv"
        text = data.read_text()
        data.write_text(text.replace(",high,", ",hihg,", 1))
    argv = ["validate", "--domain", str(mini_copy), "--max-errors", "0"]
    typer_, typer_err = _run(argv, "typer")  # first: it fills the schema cache for the copy
    light, light_err = _run(argv, "entry")
    assert light_err == typer_err  # yes: the same bytes
    assert light["code"] == typer_["code"] == (2 if broken else 0)
    assert light_err.count("error:") == (1 if broken else 0)
    assert ("did you mean 'high'" in light_err) == broken
    assert not light["pydantic"] and typer_["pydantic"]  # no typer adapters on the light path
    assert light["typer"] == broken  # typer itself only where an error ends the command


@pytest.mark.parametrize(
    "argv, plain",
    [
        (["validate", "--domain", "d"], ("d", False, 50)),
        (["validate", "-d", "d", "--max-errors=0", "--build"], ("d", True, 0)),
        (["validate", "--domain=d", "--no-build", "--max-errors", "7"], ("d", False, 7)),
        (["validate"], None),  # no domain: typer says it is required
        (["validate", "--domain", "d", "--help"], None),
        (["validate", "--domain", "d", "--domain", "e"], None),  # a repeat
        (["validate", "--domain", "d", "--build", "--no-build"], None),
        (["validate", "--domain", "d", "--max-errors", "-1"], None),  # typer: min=0
        (["validate", "--domain", "d", "--max-errors", "٣"], None),  # not ASCII digits
        (["validate", "--domain", "--build"], None),  # a value that looks like an option
        (["validate", "-d=d"], None),
        (["compile", "--domain", "d"], None),
    ],
)
def test_only_plain_spellings_take_the_light_path(argv: list[str], plain) -> None:
    assert _plain_validate_options(argv) == plain

"""The command line as a whole: one error boundary for every command, and its conventions.

- Every command (enumerated from the command tree, so a new one is covered the day it is
  added) turns a UserError into one `error:` line per message line on stderr and exit code
  2, with no traceback; user text in the message is printed as text, never as markup.
- Every command also has a real bad input here that reaches that boundary (or a stated
  reason why none exists), run through the real CLI.
- `kgbench neo4j start --heap 12x` (a traceback with exit 1 before) is one message, exit 2,
  in a real process.
- `--version`, `-h` on every command, no `<bool>` in any help, `--domain` never defaulted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness.runfolder import RUN_FORMAT
from kgbench import __version__
from kgbench.cli import app
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[1]


def leaves(command: object, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    subs = getattr(command, "commands", None)
    if not subs:
        return [(path, command)]
    return [leaf for name, sub in sorted(subs.items()) for leaf in leaves(sub, (*path, name))]


COMMANDS = [path for path, _ in leaves(typer.main.get_command(app))]


def _find(root: object, path: tuple[str, ...]) -> object:
    for name in path:
        root = root.commands[name]  # type: ignore[attr-defined]
    return root


def test_the_tree_holds_every_command() -> None:
    names = {" ".join(p) for p in COMMANDS}
    assert {"compile", "pilot", "run", "score", "report", "neo4j start", "neo4j stop"} <= names
    assert len(names) >= 24


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_every_command_turns_a_user_error_into_one_message_and_exit_2(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """The command's body is replaced by one that raises; what reaches the terminal is
    decided by the root group alone."""
    root = typer.main.get_command(app)
    leaf = _find(root, path)

    def body() -> None:
        raise UserError("bad [/bold] input :x:\nsecond line")

    leaf.params = []  # type: ignore[attr-defined]
    leaf.callback = body  # type: ignore[attr-defined]
    with pytest.raises(SystemExit) as exited:
        root.main(list(path), prog_name="kgbench")
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.err == "error: bad [/bold] input :x:\nerror: second line\n"
    assert captured.out == ""


def test_an_internal_error_keeps_its_traceback() -> None:
    """Only user errors are softened; a broken invariant surfaces as itself."""
    root = typer.main.get_command(app)
    leaf = _find(root, ("validate",))

    def body() -> None:
        raise RuntimeError("a bug")

    leaf.params = []  # type: ignore[attr-defined]
    leaf.callback = body  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="a bug"):
        root.main(["validate"], prog_name="kgbench", standalone_mode=False)


def _old_run(tmp: Path) -> Path:
    """A run folder as an older kgbench left it (run.json without format_version)."""
    run = tmp / "old-run"
    (run / "prompts").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"domain": "cardio", "response_schema": "/x.json"}))
    (run / "prompts" / "prompts.jsonl").write_text(
        json.dumps({"prompt_id": "S/C1", "messages": [{"role": "user", "content": "x"}]}) + "\n"
    )
    return run


# One real bad input per command: (arguments after the command, the message it must print).
NOWHERE = "{tmp}/nowhere"
BAD_INPUTS: dict[str, tuple[list[str], str]] = {
    "compile": (["--domain", "no_such_domain", "--out", "{tmp}/out"], "unknown domain"),
    "validate": (["--domain", "no_such_domain"], "unknown domain"),
    "pilot": (["--domain", "no_such_domain", "--run-dir", "{tmp}/p"], "unknown domain"),
    "load": (["--domain", "no_such_domain"], "is not compiled"),
    "extract": (["--domain", "no_such_domain", "--run-dir", NOWHERE], "is not compiled"),
    "run": (["--run-dir", "{old}", "--model", "ref:oracle"], "written by an older kgbench"),
    "serve-reference": (["--host", "0.0.0.0", "--port", "0"], "not a loopback address"),
    "prompts": (["--run-dir", NOWHERE], "does not exist"),
    "score": (["--run-dir", "{old}"], "written by an older kgbench"),
    "report": (["--run-dir", "{tmp}", "--model", "openai-gpt-4o"], "not a model spec"),
    "generate": (["--domain", "no_such_domain"], "is not compiled"),
    "check-scenarios": (["--domain", "no_such_domain"], "is not compiled"),
    "audit": (["--domain", "no_such_domain"], "is not compiled"),
    "publish": (["--domain", "no_such_domain", "--release", "1.0.0"], "is not compiled"),
    "verify-release": ([NOWHERE], "failed verification"),
    "dataset": ([NOWHERE], "not a release folder"),
    "pin-releases": (["--domain", "no_such_domain"], "is not compiled"),
    "explain": (["SCN_0001", "--domain", "no_such_domain"], "is not compiled"),
    "review": (["--domain", "no_such_domain"], "is not compiled"),
    "probe": (["--domain", "cardio", "--model", "gpt-4o"], "not a model spec"),
    "probe-review": (["--run-dir", "{tmp}"], "no probe results"),
    "export": (["--domain", "no_such_domain"], "unknown domain"),
    "study": (["--domain", "cardio", "--config", "{tmp}/absent.yaml"], "file not found"),
    "neo4j start": (["--state-dir", "{tmp}/s", "--heap", "12x"], "heap must be a size"),
    "verify": (["--run-dir", NOWHERE, "--model", "ref:oracle"], "does not exist"),
    "explain-run": (["SCN_0001", "--run-dir", "{tmp}"], "no verify-and-revise run"),
    "neo4j stop": (["--state-dir", "{file}/state"], "cannot use"),
}
# Commands without a bad input of their own, and why (the boundary test above covers them).
NO_BAD_INPUT = {
    "neo4j status": "exit 1 means 'not running', by design, for scripts",
    "neo4j build": "takes no input; a Maven failure is a ServiceError from the build",
}


def test_every_command_has_a_bad_input_or_a_reason() -> None:
    names = {" ".join(p) for p in COMMANDS}
    assert names == set(BAD_INPUTS) | set(NO_BAD_INPUT), names ^ (
        set(BAD_INPUTS) | set(NO_BAD_INPUT)
    )


# The verify-and-revise (C5) and order-sensitivity options reach the same boundary.
OPTION_BAD_INPUTS: dict[str, tuple[list[str], str]] = {
    "prompts --order-variants": (["--run-dir", NOWHERE, "--order-variants"], "does not exist"),
    "pilot --with-c5 --order-variants": (
        ["--domain", "no_such_domain", "--run-dir", "{tmp}/p", "--with-c5", "--order-variants"],
        "unknown domain",
    ),
    "explain-run --model": (
        ["SCN_0001", "--run-dir", "{tmp}", "--model", "openai-gpt-4o"],
        "not a model spec",
    ),
    "verify --no-batch": (
        ["--run-dir", "{tmp}", "--model", "ref:oracle", "--no-batch"],
        "scenarios.jsonl not found",
    ),
}


@pytest.mark.parametrize("name", sorted(OPTION_BAD_INPUTS))
def test_c5_and_order_options_are_one_message_and_exit_2(name: str, tmp_path: Path) -> None:
    args, message = OPTION_BAD_INPUTS[name]
    _bad_input(name.split()[0], args, message, tmp_path)


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_a_real_bad_input_is_one_message_and_exit_2(name: str, tmp_path: Path) -> None:
    args, message = BAD_INPUTS[name]
    _bad_input(name, args, message, tmp_path)


def _bad_input(name: str, args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder\n")
    fill = {"{tmp}": str(tmp_path), "{file}": str(tmp_path / "a-file")}
    if any("{old}" in a for a in args):
        fill["{old}"] = str(_old_run(tmp_path))
    argv = [*name.split(), *args]
    for key, value in fill.items():
        argv = [a.replace(key, value) for a in argv]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(
        result.exception, SystemExit
    )
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert errors and message in errors[0], result.stderr


def test_an_older_run_folder_names_the_file_and_what_to_run(tmp_path: Path) -> None:
    run = _old_run(tmp_path)
    result = CliRunner().invoke(app, ["score", "--run-dir", str(run)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: {run / 'run.json'}: written by an older kgbench (no format_version); run "
        f"`kgbench prompts --run-dir {run}` to rewrite it for this kgbench"
    )
    assert RUN_FORMAT in (REPO / "harness" / "README.md").read_text(encoding="utf-8")


def test_neo4j_start_with_a_bad_heap_is_one_message_in_a_real_process(tmp_path: Path) -> None:
    """The review's reproduction: this printed a traceback and exited 1."""
    result = subprocess.run(
        [sys.executable, "-m", "kgbench", "neo4j", "start", "--heap", "12x"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KGBENCH_HOME": str(tmp_path)},
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr == "error: heap must be a size like 512m or 2g, got '12x'\n"
    assert result.stdout == ""
    assert not (tmp_path / ".cache" / "neo4j" / "server.json").exists()


def test_version_and_short_help() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith(f"kgbench {__version__}")
    for argv in ([], ["-h"], ["neo4j", "-h"], ["run", "-h"]):
        result = CliRunner().invoke(app, argv)
        assert result.exit_code in (0, 2) and "Usage: kgbench" in result.output, argv


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_help_shows_no_value_for_a_flag_and_no_default_domain(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "-h"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output
    command = _find(typer.main.get_command(app), path)
    for param in command.params:  # type: ignore[attr-defined]
        if "--domain" in getattr(param, "opts", ()):
            assert param.default in (None, ...) or param.required, (path, param.default)
        if getattr(param, "is_flag", False) and param.name not in ("help", "version"):
            assert param.secondary_opts, f"{' '.join(path)} {param.opts}: use --flag/--no-flag"

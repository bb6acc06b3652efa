"""The `kgbench` console script (and `python -m kgbench`): a no-op compile is answered here,
before the command line is imported.

`kgbench compile --domain D` with inputs and outputs unchanged is what `make` and the pilot
run most, and its floor is a bare interpreter hashing the same files. Importing the command
line (typer, rich, click, and the kernel's readers) costs several times that floor, so this
module imports only the standard library and `compiler.freshness` until it knows the compile
is a no-op, and prints the command's own line as plain text when Rich would print exactly
that. Every other command line, a compile that is not a no-op, and a no-op whose line Rich
would colour or wrap go to `kgbench.cli.app`, which parses, reports and errs as before.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

COMPILE_OPTIONS = {"--domain": "domain", "-d": "domain", "--out": "out"}
VALIDATE_OPTIONS = {"--domain": "domain", "-d": "domain", "--max-errors": "max_errors"}
VALIDATE_FLAGS = {"--build": True, "--no-build": False}


def main(prog_name: str | None = None) -> object:
    if noop_compile(sys.argv[1:]):
        return 0
    validate = _plain_validate_options(sys.argv[1:])
    if validate is not None:
        code = plain_validate(*validate)
        from kgbench.gcpause import spare_the_exit_collection

        spare_the_exit_collection()  # the process exits now
        raise SystemExit(code)
    from kgbench.cli.main import app

    return app(prog_name=prog_name) if prog_name else app()


def noop_compile(argv: list[str]) -> bool:
    """True once a plain `compile --domain D [--out DIR] [--no-force]` was found up to date and
    reported, exactly as the `compile` command reports it. Any other spelling (help, --force,
    an unknown option, a domain that does not exist) returns False without printing: the
    command line then runs the command, with its own parsing and messages."""
    values = _plain_compile_options(argv)
    if values is None:
        return False
    from compiler.freshness import current_outputs

    start = time.perf_counter()
    try:
        current = current_outputs(
            values["domain"], Path(values["out"]) if "out" in values else None
        )
    except Exception as exc:  # an unknown domain: the command line says so, in its words
        from kgbench.errors import UserError

        if isinstance(exc, UserError):
            return False
        raise
    if current is None:
        return False
    name, out_dir, files = current
    report_up_to_date(name, out_dir, files, time.perf_counter() - start)
    return True


def _plain_compile_options(argv: list[str]) -> dict[str, str] | None:
    """{"domain": ..., "out": ...} of a plain no-op spelling, else None."""
    found = _plain_options(argv, "compile", COMPILE_OPTIONS, ("--no-force",))
    return found[0] if found is not None and "domain" in found[0] else None


def _plain_validate_options(argv: list[str]) -> tuple[str, bool, int] | None:
    """(domain, build, max_errors) of a plain `validate --domain D [--max-errors N]
    [--build|--no-build]`, each given once; any other spelling (a negative number, a count
    in other digits) is None and goes to the command line."""
    from kgbench.errors import MAX_SHOWN

    found = _plain_options(argv, "validate", VALIDATE_OPTIONS, tuple(VALIDATE_FLAGS))
    if found is None or len(found[1]) > 1:
        return None
    values, flags = found
    max_errors = values.get("max_errors", str(MAX_SHOWN))
    if "domain" not in values or not (max_errors.isascii() and max_errors.isdigit()):
        return None
    return values["domain"], bool(flags and VALIDATE_FLAGS[flags[0]]), int(max_errors)


def _plain_options(
    argv: list[str], command: str, options: dict[str, str], flags: tuple[str, ...]
) -> tuple[dict[str, str], list[str]] | None:
    """(option values by key, the flags given, in order) of a plain spelling of `command`:
    each option of `options` (spelling -> key) at most once, as `--name value` or
    `--name=value` (not `-d=value`), with a value that is neither empty nor looks like an
    option. Any other spelling (help, a repeat, an unknown option) is None: the command line
    then parses it and words its own errors (the one parser of both light paths)."""
    if argv[:1] != [command]:
        return None
    values: dict[str, str] = {}
    given: list[str] = []
    rest = iter(argv[1:])
    for arg in rest:
        if arg in flags:
            given.append(arg)
            continue
        name, eq, value = arg.partition("=")
        key = options.get(name)
        if key is None or key in values or (eq and name == "-d"):
            return None
        if not eq:
            value = next(rest, None)
            if value is None:
                return None
        if not value or value.startswith("-"):
            return None
        values[key] = value
    return values, given


def plain_validate(domain: str, build: bool, max_errors: int) -> int:
    """Run `kgbench validate` as the command line would, inside the same error boundary,
    without typer's option parsing; the exit code."""
    from kgbench.cli.validate import run
    from kgbench.cliutil import error_boundary
    from kgbench.gcpause import gc_paused

    try:
        # the report of 10,000 errors too: a collection between the check and the printing
        # walked every object the check left alive
        with gc_paused(), error_boundary():
            run(domain, build, max_errors)
    except Exception as exc:  # typer's Exit, imported only on this path (kgbench.cliutil)
        import typer

        if isinstance(exc, typer.Exit):
            return exc.exit_code
        raise
    return 0


def report_up_to_date(domain: str, out_dir: Path, files: int, took: float) -> None:
    """`compiled D: up to date in OUT (T s)` on stderr, as `kgbench compile` prints it."""
    from compiler.paths import display_path

    line = f"compiled {domain}: up to date in {display_path(out_dir)} ({took:.2f} s)"
    if _rich_prints_plain(line):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
        return
    from compiler.api import CompileResult
    from kgbench.cli.main import _report_compile

    _report_compile(CompileResult(domain, out_dir, files, True), took)


def _rich_prints_plain(line: str) -> bool:
    """Whether Rich's stderr console (kgbench.cliutil.stderr_console) would write `line`
    unchanged: no colour (not a terminal, by Rich's own rules: TTY_COMPATIBLE, FORCE_COLOR,
    then isatty), nothing it would read as markup, and short enough not to be wrapped at the
    width Rich would take (COLUMNS, else the terminal's, else 80). On Windows, or for
    anything else, Rich prints it."""
    if os.name == "nt" or not (line.isascii() and line.isprintable()):
        return False
    if "[" in line or "\\" in line:
        return False
    env = os.environ
    compatible = env.get("TTY_COMPATIBLE", "")
    if compatible == "1":
        return False
    if compatible != "0":
        force_color = env.get("FORCE_COLOR")
        if force_color is not None:
            if force_color != "":
                return False
        else:
            try:
                if sys.stderr.isatty():
                    return False
            except ValueError:
                pass
    return len(line) < _rich_width(env.get("COLUMNS"))


def _rich_width(columns: str | None) -> int:
    """The width Rich wraps at (0 when unsure, so nothing counts as fitting)."""
    if columns is not None and columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80

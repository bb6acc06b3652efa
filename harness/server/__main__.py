"""`python -m harness.server [options]`: serve the reference server before the CLI mounts it."""

from __future__ import annotations

import typer

from harness.runner.cli import serve_reference_command


def main() -> None:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(serve_reference_command)
    app(prog_name="python -m harness.server")


if __name__ == "__main__":
    main()

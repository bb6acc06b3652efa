"""Shared command-line plumbing, importable by any sub-command module without cycles."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import typer


def stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def user_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a UserError into one message on stderr and exit code 2 (no traceback)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from kgbench.errors import UserError

        try:
            return func(*args, **kwargs)
        except UserError as exc:
            console = stderr_console()
            for line in str(exc).splitlines():
                console.print(f"[bold red]error:[/] {line}", markup=True, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None

    return wrapper

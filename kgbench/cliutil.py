"""Shared command-line plumbing, importable by any sub-command module without cycles.

Everything kgbench prints goes through a Rich console, and Rich reads `[...]` as markup and
`:name:` as an emoji code. User and model text (a CSV header, a cell, a file name, a model's
answer) is data, never markup: it reaches the console only as a `rich.text.Text` or through
`escape`, and consoles made here have emoji codes turned off, so `[/bold]` prints as
`[/bold]` (instead of raising a MarkupError) and `:x:` prints as `:x:`.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

# typer is imported where an error ends a command (`error_boundary`): the console entry's
# light `validate` runs this module's printing without the command line (kgbench.cli.entry)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


def stderr_console(**kwargs: Any) -> Console:
    """A stderr console that never turns text into emoji and never highlights numbers."""
    from rich.console import Console

    kwargs.setdefault("highlight", False)
    kwargs.setdefault("emoji", False)
    return Console(stderr=True, **kwargs)


def escape(text: object) -> str:
    """User or model text made safe to place inside a markup string."""
    from rich.markup import escape as rich_escape

    return rich_escape(str(text))


def shown_path(path: object) -> str:
    """A path as the user typed it (relative to the working folder where it can be), escaped
    for the markup strings it is printed in."""
    import os

    try:
        return escape(os.path.relpath(str(path)))
    except ValueError:  # pragma: no cover - another drive on Windows
        return escape(path)


def labelled(label: str, style: str, message: object) -> Text:
    """`label` in `style`, then `message` verbatim (no markup is read from it)."""
    from rich.text import Text

    return Text.assemble((label, style), " ", str(message))


def print_user_error(exc: Exception, console: Console | None = None) -> None:
    """One `error: ...` line per line of the message, printed as plain text: the message is
    split on `\n` only and each line passes the terminal encoder, so a value holding an
    escape sequence, a lone surrogate or U+2028 cannot repaint the screen or crash the print."""
    from kgbench.untrusted import for_terminal, redact_uri

    console = console or stderr_console()
    # the whole text at once: neither expression matches across a `\n` (the terminal escape
    # keeps it, a URI's userinfo cannot hold it), so every line comes out as it would alone,
    # for two passes instead of two per line (10,000 errors); every message: no URI userinfo
    # (a password) shown. A text with no "://" has no URI to redact: the slower of the two
    # passes is skipped (10,000 errors: ~40 ms).
    message = str(exc)
    escaped = for_terminal(redact_uri(message) if "://" in message else message)
    # each line labelled by one replace, not a split, 10,000 f-strings and a join (equal:
    # `tests/test_cliutil_errors.py`); the line list only for Rich's path
    text = "error: " + escaped.replace("\n", "\nerror: ")
    if _prints_verbatim(console, text):
        # what Rich would write, without its rendering: 10,000 errors (`validate
        # --max-errors 0`) were a quarter of that command's time
        console.file.write(text)
        console.file.write("\n")
        console.file.flush()
        return
    from rich.text import Text

    lines = escaped.split("\n")

    # one print of all the lines: the same bytes as a print per line, without rich measuring
    # the terminal and rendering once per line (10,000 errors: 0.55 -> 0.20 s of CPU)
    console.print(
        Text("\n").join(labelled("error:", "bold red", line) for line in lines), soft_wrap=True
    )


def _prints_verbatim(console: Console, text: str) -> bool:
    """Whether Rich would write `text` (a soft-wrapped, unstyled Text) unchanged: no colour
    or style codes (not a terminal), nothing recorded or shown live, and no tab (Rich
    expands tabs), nothing buffered in a `with console:` block to keep the order of.
    `tests/test_cliutil_errors.py` holds the two paths to the same bytes."""
    return (
        not console.is_terminal
        and not console.record
        and not console.quiet
        and not console.legacy_windows
        and not console._live_stack
        and not console._render_hooks
        and not console._buffer_index
        and "\t" not in text
    )


@contextmanager
def error_boundary() -> Iterator[None]:
    """The one place a UserError becomes one message on stderr and its exit code (2), and
    RequestsFailed (requests that ended failed or missing) its one line and exit code 1.

    The root command group runs every command inside it (kgbench/cli/main.py), so no command
    module catches UserError itself. An OSError the disk raised (no space, a read-only
    folder, a path that is a file: `kgbench.io.DISK_ERRNOS`) is one message too. Anything
    else propagates with its traceback: a broken invariant to report, not a user's mistake.
    """
    from kgbench.errors import RequestsFailed, UserError
    from kgbench.io import DISK_ERRNOS

    try:
        yield
    except (UserError, RequestsFailed) as exc:
        print_user_error(exc)
        import typer

        raise typer.Exit(exc.exit_code) from None
    except OSError as exc:
        # The last line of the disk boundary: writers go through kgbench.io, which already
        # names the path; what the disk refuses elsewhere (an appended log, a folder made
        # for output) is still the user's to fix, not a broken invariant.
        if exc.errno not in DISK_ERRNOS:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print_user_error(
            UserError(f"{where}{exc.strerror or exc} ({errno.errorcode.get(exc.errno or 0, '?')})")
        )
        import typer

        raise typer.Exit(UserError.exit_code) from None

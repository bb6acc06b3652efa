"""A UserError prints as one `error: ...` line per line of its message, in one console print:
the bytes a print per line gave, markup-like text verbatim, long lines unwrapped."""

from __future__ import annotations

import io

from rich.console import Console

from kgbench.cliutil import print_user_error
from kgbench.errors import UserError


def printed(message: str) -> str:
    out = io.StringIO()
    console = Console(file=out, width=20, highlight=False, emoji=False, color_system=None)
    print_user_error(UserError(message), console)
    return out.getvalue()


def test_every_line_is_labelled_and_kept_verbatim() -> None:
    long = "data/assertions.csv, line 12, field 'predicate': expected one of X, got 'Y'"
    message = f"first\n[bold]not markup[/] :x:\n{long}"
    assert printed(message) == f"error: first\nerror: [bold]not markup[/] :x:\nerror: {long}\n"


def test_an_empty_message_is_one_empty_error_line() -> None:
    assert printed("") == "error: \n"


def test_ten_thousand_lines_print_in_order() -> None:
    lines = [f"line {i}" for i in range(10_000)]
    assert printed("\n".join(lines)).splitlines() == [f"error: {x}" for x in lines]

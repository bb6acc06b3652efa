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


HOSTILE = [
    "plain",
    "[bold]not markup[/] :x: [/] \\[escaped] \\",
    "ESC \x1b[31mred\x1b[0m, BEL \x07, NUL \x00, CR \r mid-line, DEL \x7f",
    "separators \u2028 and \u2029, a lone surrogate \ud800, a BOM \ufeff",
    "wide 心房細動 and combining e\u0301, emoji 🫀, RTL \u202e reversed",
    "a line far longer than the console's width of twenty columns, " * 5,
    "trailing spaces   ",
    "",
    "bolt://neo4j:secret@localhost:7687 and https://user:key@host/x",
]


def test_the_verbatim_path_writes_what_rich_writes() -> None:
    """The plain write (not a terminal) and Rich's render (forced by a recording console)
    give the same bytes for every hostile line, together and one by one."""
    for message in ["\n".join(HOSTILE), *HOSTILE]:
        plain, rich = io.StringIO(), io.StringIO()
        for out, record in ((plain, False), (rich, True)):
            console = Console(
                file=out, width=20, highlight=False, emoji=False, color_system=None, record=record
            )
            print_user_error(UserError(message), console)
        assert plain.getvalue() == rich.getvalue(), message
    assert "secret" not in plain.getvalue() and "\x1b" not in plain.getvalue()


def test_a_terminal_or_a_tab_goes_through_rich() -> None:
    from kgbench.cliutil import _prints_verbatim

    assert _prints_verbatim(Console(file=io.StringIO()), "error: x")
    assert not _prints_verbatim(Console(file=io.StringIO(), force_terminal=True), "error: x")
    assert not _prints_verbatim(Console(file=io.StringIO()), "error: a\ttab")
    out = io.StringIO()
    print_user_error(UserError("a\ttab"), Console(file=out, width=20, color_system=None))
    assert out.getvalue() == "error: a" + " " * 8 + "tab\n"  # Rich expands the tab; kept


def test_the_text_is_made_safe_as_each_line_alone_would_be() -> None:
    """`print_user_error` escapes and redacts the whole message at once, then splits it:
    every line must come out as it did line by line (a URI at a line's start, a carriage
    return, a line separator, a lone surrogate, userinfo next to a line break)."""
    from kgbench.untrusted import for_terminal, redact_uri

    text = "\n".join(
        [
            "bolt://neo4j:secret@host:7687 refused",
            "see http://u:p@x/ and\rhttps://a@b",
            "line\u2028sep \x1b[31mred\x1b[0m \ud800 tab\there",
            "x://user\n@host",
            "",
            "ftp://me@there",
        ]
    )
    whole = for_terminal(redact_uri(text)).split("\n")
    assert whole == [for_terminal(redact_uri(line)) for line in text.split("\n")]
    plain = text.replace("\t", " ")  # a tab goes through Rich, which expands it
    out = io.StringIO()
    print_user_error(UserError(plain), Console(file=out, force_terminal=False, width=80))
    expected = [for_terminal(redact_uri(line)) for line in plain.split("\n")]
    assert out.getvalue() == "".join(f"error: {line}\n" for line in expected)


def test_a_text_without_a_scheme_separator_has_nothing_to_redact() -> None:
    """`print_user_error` skips `redact_uri` where the text holds no "://": the pattern
    cannot match without one, so the text must come back unchanged (and with one, redacted)."""
    from kgbench.untrusted import redact_uri

    for text in [*HOSTILE[:-1], "neo4j:secret@host", "bolt:/a@b", "x:// @y", "HTTP:/u:p@h"]:
        assert "://" in text or redact_uri(text) == text, text
    assert "secret" not in printed("db bolt://neo4j:secret@host\nnext")
    assert printed("a\nb@c:d\n") == "error: a\nerror: b@c:d\nerror: \n"

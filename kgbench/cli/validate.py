"""`kgbench validate`: what the command does and prints, apart from parsing its command line.

Both the typer command (`kgbench.cli.main.validate_cmd`) and the console entry's light path
(`kgbench.cli.entry.plain_validate`) run `run`, so the two print the same bytes and exit the
same way. The light path exists because typer builds a pydantic adapter per option before a
command runs: with the sub-apps it mounts, about 0.3 s of a 100,000-assertion validation
that the polars floor (issue 33, item 5) never pays.
"""

from __future__ import annotations

from kgbench.cliutil import escape, labelled
from kgbench.cliutil import stderr_console as _stderr
from kgbench.errors import UserErrors
from kgbench.gcpause import gc_paused


def run(domain: str, build: bool, max_errors: int) -> None:
    """Validate a domain's spec and data without writing anything: every error in one pass."""
    from compiler.api import check_domain
    from compiler.tables import skip_pandas_probe

    skip_pandas_probe()
    # paused past the load (which pauses it too) to the errors' messages, one string each
    with gc_paused():
        try:
            result = check_domain(domain, build=build)
        except UserErrors as exc:
            raise UserErrors(exc.problems, max_shown=max_errors) from None
    print_warnings(result.warnings)
    _stderr().print(
        f"[green]valid[/] {escape(result.name)} {escape(result.version)}: {result.entities} entities, "
        f"{result.assertions} assertions, {result.evidence_sources} evidence sources, "
        f"{result.supports} evidence links"
    )


def print_warnings(warnings: tuple[str, ...]) -> None:
    console = _stderr()
    for line in warnings:
        console.print(labelled("warning:", "bold yellow", line), soft_wrap=True)

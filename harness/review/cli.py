"""`kgbench explain` and `kgbench review`: reading and signing off a scenario set's gold.

Plain typer functions, mounted by the top-level CLI (whose root group turns a UserError into
one message and exit code 2). Verdicts live in `domains/<domain>/reviews.csv` (see
`verdicts`); `--reviews` points elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

review_app = typer.Typer(add_completion=False, no_args_is_help=True)

DomainOption = Annotated[str, typer.Option("--domain", "-d", help="Compiled domain.")]
ScenariosOption = Annotated[
    Path | None,
    typer.Option(help="Scenario file (default: generated/<domain>/scenarios/scenarios.jsonl)."),
]


def default_reviews(domain: str) -> Path:
    from kgbench.locations import DOMAINS_DIR

    return DOMAINS_DIR / domain / "reviews.csv"


@review_app.command("explain")
def explain_command(
    scenario_id: Annotated[str, typer.Argument(help="Scenario id, e.g. SCN_0046.")],
    domain: DomainOption,
    scenarios: ScenariosOption = None,
) -> None:
    """Print why a scenario's gold is what it is: every candidate's verdict and its evidence."""
    from harness.compiled import CompiledDomain
    from harness.review.explain import as_text, explain, find
    from harness.scenarios.files import generated_set, read_scenarios
    from harness.scenarios.kg import KnowledgeGraph
    from kgbench.untrusted import for_terminal

    compiled = CompiledDomain.open(domain)
    records = read_scenarios(scenarios or generated_set(compiled))
    kg = KnowledgeGraph(compiled)
    print(for_terminal(as_text(kg, explain(kg, find(records, scenario_id)))))


@review_app.command("review")
def review_command(
    domain: DomainOption,
    scenarios: ScenariosOption = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Folder for review.html and review.csv (default runs/review-<domain>)."),
    ] = None,
    reviews: Annotated[
        Path | None, typer.Option(help="Verdicts file (default domains/<domain>/reviews.csv).")
    ] = None,
    drop_stale: Annotated[
        bool,
        typer.Option(
            "--drop-stale/--keep-stale",
            help="Remove verdicts whose item has changed since (they need review again); "
            "lists them, keeps reviews.csv.bak, refuses to remove verdicts still current in "
            "the domain's own set without --yes.",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes/--no-yes", help="Confirm --drop-stale removing current verdicts.")
    ] = False,
) -> None:
    """Write the clinical review sheet (HTML and CSV) with every item's hash and verdict."""
    from harness.compiled import CompiledDomain
    from harness.review.prune import (
        check_drop,
        own_records_or_none,
        rewrite_with_backup,
        rows_to_drop,
    )
    from harness.review.sheet import write_sheet
    from harness.review.verdicts import coverage, read_verdicts, verdict_rows
    from harness.scenarios.files import generated_set, read_scenarios
    from harness.scenarios.kg import KnowledgeGraph
    from kgbench.cliutil import stderr_console
    from kgbench.errors import UserError
    from kgbench.locations import RUNS_DIR

    compiled = CompiledDomain.open(domain)
    given = scenarios or generated_set(compiled)
    records = read_scenarios(given)
    path = reviews or default_reviews(domain)
    if reviews is not None and not reviews.exists():  # a named file must exist (a typo
        raise UserError(f"verdicts file not found: {reviews}")  # read as "none reviewed")
    verdicts = read_verdicts(path, records, allow_stale=drop_stale)
    console = stderr_console()
    dropped = []
    if drop_stale and path.exists():
        own = own_records_or_none(generated_set(compiled), given)
        dropped = rows_to_drop(path, verdicts.values(), own)
        check_drop(dropped, yes, path)
    target = out or RUNS_DIR / f"review-{domain}"
    html_path, csv_path = write_sheet(
        KnowledgeGraph(compiled), records, verdicts, target, f"Clinical review: {domain}"
    )
    if dropped:  # only once the sheet is written: a failure above leaves the file as it was
        backup = rewrite_with_backup(path, verdict_rows(verdicts.values()))
        console.print(f"removed {len(dropped)} stale verdict(s) from {path}:", markup=False)
        for d in dropped:
            console.print(f"  {d}", markup=False)
        console.print(f"previous file kept as {backup}", markup=False)
    cov = coverage(records, verdicts)
    console.print(
        f"{len(records)} items: {len(cov.accepted)} accepted, {len(cov.disputed)} disputed, "
        f"{len(cov.unreviewed)} not reviewed",
        markup=False,
    )
    console.print(f"review sheet: {html_path} and {csv_path}", markup=False)

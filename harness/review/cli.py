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


@review_app.command("explain")
def explain_command(
    scenario_id: Annotated[str, typer.Argument(help="Scenario id, e.g. SCN_0046.")],
    domain: DomainOption,
    scenarios: Annotated[
        Path | None,
        typer.Option(
            help="Scenario file, run folder or release folder (default: "
            "generated/<domain>/scenarios/scenarios.jsonl)."
        ),
    ] = None,
) -> None:
    """Print why a scenario's gold is what it is: every candidate's verdict and its evidence
    (judged now when the item carries no justification, e.g. a hand-written one)."""
    from harness.compiled import CompiledDomain
    from harness.review.explain import as_text, explain, find
    from harness.scenario_files import generated_set, read_scenarios, record_fields
    from harness.scenarios.kg import KnowledgeGraph
    from kgbench.untrusted import for_terminal

    compiled = CompiledDomain.open(domain)
    path = scenarios or generated_set(compiled)
    if path.is_dir():  # a run folder or a release folder holds its set as scenarios.jsonl
        path = path / "scenarios.jsonl"
    records = read_scenarios(path)
    kg = KnowledgeGraph(compiled)
    record = find(records, scenario_id)
    with record_fields(path, record, "explain"):
        text = as_text(kg, explain(kg, record))
    print(for_terminal(text))


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
    agreement: Annotated[
        bool,
        typer.Option(
            "--agreement/--no-agreement",
            help="Print coverage by reviewer role and author/independent agreement "
            "(Cohen's kappa, raw agreement, n) instead of writing the sheet.",
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
    from harness.review.verdicts import (
        coverage,
        default_reviews,
        read_reviews,
        read_verdicts,
        released_items,
        verdict_rows,
    )
    from harness.scenario_files import generated_set, read_scenarios
    from harness.scenarios.kg import KnowledgeGraph
    from kgbench.cliutil import stderr_console
    from kgbench.errors import UserError
    from kgbench.locations import RUNS_DIR

    compiled = CompiledDomain.open(domain)
    given = scenarios or generated_set(compiled)
    records = read_scenarios(given)
    path = reviews or default_reviews(compiled.name)
    if reviews is not None and not reviews.exists():  # a named file must exist (a typo
        raise UserError(f"verdicts file not found: {reviews}")  # read as "none reviewed")
    history = released_items(compiled.gold_dir)
    if agreement:
        print_agreement(compiled.name, records, read_reviews(path, records, history=history))
        return
    rows = read_reviews(path, records, allow_stale=drop_stale, history=history)
    verdicts = read_verdicts(path, records, allow_stale=drop_stale, history=history)
    console = stderr_console()
    dropped = []
    if drop_stale and path.exists():
        own = own_records_or_none(generated_set(compiled), given)
        dropped = rows_to_drop(path, rows, own)  # every kept row, of every reviewer and role
        check_drop(dropped, yes, path)
    target = out or RUNS_DIR / f"review-{compiled.name}"
    html_path, csv_path = write_sheet(
        KnowledgeGraph(compiled), records, verdicts, target, f"Clinical review: {compiled.name}"
    )
    if dropped:  # only once the sheet is written: a failure above leaves the file as it was
        backup = rewrite_with_backup(path, verdict_rows(rows))
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


def print_agreement(domain: str, records: list, rows: list) -> None:
    """Coverage of the current items by role, and agreement between authors and independent
    reviewers over every item version both judged (current or published)."""
    from harness.review.verdicts import agreement, role_coverage

    cov = role_coverage(records, rows)
    print(f"domain {domain}: {len(records)} current items")
    for role, c in cov["by_role"].items():
        print(
            f"  {role:<12} accepted {c['accepted']}, disputed {c['disputed']}, "
            f"not reviewed {c['unreviewed']}"
        )
    print(f"  independently reviewed: {'yes' if cov['independently_reviewed'] else 'no'}")
    a = agreement(rows)
    if not a.n:
        print("agreement (author vs independent): no item version has verdicts of both roles")
        return
    kappa = "undefined" if a.kappa is None else f"{a.kappa:.3f}"
    print(
        f"agreement (author vs independent): n={a.n} item versions, raw agreement "
        f"{a.agree}/{a.n} = {a.raw:.3f}, Cohen's kappa {kappa}"
    )
    for sid, author, independent in a.pairs:
        if author != independent:
            print(f"  {sid}: author {author}, independent {independent}")

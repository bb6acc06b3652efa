"""`kgbench generate`, `check-scenarios` and `audit`: making and checking scenario sets.

Plain typer commands on `scenario_app`; the top-level CLI mounts them (its root group turns a
UserError into one clear message and exit code 2). Imports are lazy so `--help` stays fast.
The release commands (`publish`, `verify-release`, `dataset`, `pin-releases`) are
harness.release.cli's: a release is built from scenarios and reviews, so it sits above both.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import shown_path

scenario_app = typer.Typer(add_completion=False, no_args_is_help=True)

DomainOption = Annotated[str, typer.Option("--domain", "-d", help="Compiled domain (required).")]


def _console():
    from kgbench.cliutil import stderr_console

    return stderr_console()


@scenario_app.command("generate")
def generate(
    domain: DomainOption,
    seed: Annotated[
        int | None, typer.Option(help="Random seed (default: the one scenarios.yaml declares).")
    ] = None,
    per_category: Annotated[
        int | None,
        typer.Option("--per-category", help="Scenarios per category (default: declared)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Output file (default: generated/<domain>/scenarios/scenarios.jsonl)."),
    ] = None,
) -> None:
    """Generate category-balanced scenarios from the compiled graph (deterministic, atomic)."""
    from harness.compiled import CompiledDomain
    from harness.scenarios.generator import generate_file

    path, records, report = generate_file(CompiledDomain.open(domain), seed, per_category, out)
    counts = Counter(r["category"] for r in records)
    spread = ", ".join(f"{c} {n}" for c, n in counts.items())
    console = _console()
    for line in report.lines():
        console.print(line, markup=False)
    console.print(f"[green]generated[/] {len(records)} scenarios in {shown_path(path)} ({spread})")


@scenario_app.command("check-scenarios")
def check_scenarios(
    domain: DomainOption,
    file: Annotated[
        Path | None,
        typer.Argument(
            help="Scenario file (JSON Lines), e.g. hand-written (default: the domain's generated set)."
        ),
    ] = None,
) -> None:
    """Validate a scenario file against the scenario schema, the graph and the gold rules."""
    from harness.compiled import CompiledDomain
    from harness.scenario_files import generated_set
    from harness.scenarios.validation import check_file

    compiled = CompiledDomain.open(domain)
    path = file or generated_set(compiled)
    records = check_file(compiled, path)
    _console().print(f"[green]valid[/] {len(records)} scenarios in {shown_path(path)}")


@scenario_app.command("audit")
def audit_command(
    domain: DomainOption,
    scenarios: Annotated[
        Path | None,
        typer.Option(
            help="Scenario file or release folder (default: generated/<domain>/scenarios/scenarios.jsonl)."
        ),
    ] = None,
    items: Annotated[
        bool, typer.Option("--items/--no-items", help="Also list every item that changes.")
    ] = False,
) -> None:
    """Re-judge an existing scenario set (e.g. an older release) by the evidence rules."""
    from harness.compiled import CompiledDomain
    from harness.scenario_files import generated_set, read_scenarios, record_fields
    from harness.scenarios.audit import OUTCOMES, ItemJudge, summary

    compiled = CompiledDomain.open(domain)
    path = scenarios or generated_set(compiled)
    if path.is_dir():
        path = path / "scenarios.jsonl"
    judge = ItemJudge(compiled)
    result = []
    for record in read_scenarios(path):
        with record_fields(path, record, "audit"):
            result.append(judge.item(record))
    width = max(len(o) for o in OUTCOMES)
    print(f"{'category':<28}" + "".join(f"{o:>{width + 2}}" for o in OUTCOMES))
    for category, counts in summary(result):
        print(f"{category:<28}" + "".join(f"{counts[o]:>{width + 2}}" for o in OUTCOMES))
    total = len(result)
    changed = sum(1 for i in result if i.outcome != "unchanged")
    print(f"{changed} of {total} items change under the evidence-anchored rules")
    unknown = [i for i in result if i.unknown]
    print(
        f"unknown evidence statuses: {sum(len(i.unknown) for i in unknown)} "
        f"(in {len(unknown)} items; target 0)"
    )
    for i in unknown:
        print(f"  {i.scenario_id} {i.category}: unknown status for {', '.join(i.unknown)}")
    if items:
        for i in result:
            if i.outcome != "unchanged":
                print(f"{i.scenario_id} {i.category}: {i.outcome} ({i.detail})")

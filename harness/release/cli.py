"""`kgbench publish`, `verify-release`, `dataset` and `pin-releases`: gold releases.

Plain typer commands on `release_app`; the top-level CLI mounts them beside the scenario
commands (its root group turns a UserError into one clear message and exit code 2). A release
is made from a scenario set and its clinical review, so this package sits above
harness.scenarios and harness.review and imports both; neither imports it. Imports are lazy
so `--help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import escape, shown_path

release_app = typer.Typer(add_completion=False, no_args_is_help=True)

DomainOption = Annotated[str, typer.Option("--domain", "-d", help="Compiled domain (required).")]


def _console():
    from kgbench.cliutil import stderr_console

    return stderr_console()


@release_app.command("publish")
def publish(
    release: Annotated[
        str, typer.Option("--release", help="Release version to publish (MAJOR.MINOR.PATCH).")
    ],
    domain: DomainOption,
    scenarios: Annotated[
        Path | None,
        typer.Option(help="Scenario file (default: generated/<domain>/scenarios/scenarios.jsonl)."),
    ] = None,
    reviews: Annotated[
        Path | None,
        typer.Option(help="Review verdicts (default: domains/<domain>/reviews.csv, if present)."),
    ] = None,
    changelog: Annotated[
        Path | None, typer.Option(help="A CHANGELOG.md to ship in the release.")
    ] = None,
    dataset: Annotated[
        bool,
        typer.Option(
            "--dataset/--no-dataset",
            help="Also write the release as a dataset (Parquet, dataset card, Croissant) "
            "under generated/<domain>/datasets/<version>/.",
        ),
    ] = True,
) -> None:
    """Publish scenarios and gold as an immutable, versioned release under generated/<domain>/gold/."""
    from harness.compiled import CompiledDomain
    from harness.release.publish import publish_release
    from harness.review.verdicts import default_reviews

    compiled = CompiledDomain.open(domain)  # `domain` may be a folder; its name keys the verdicts
    if reviews is None and default_reviews(compiled.name).exists():
        reviews = default_reviews(compiled.name)
    result = publish_release(compiled, release, scenarios, reviews, changelog)
    if dataset:
        from harness.release.dataset import write_dataset

        written = write_dataset(result.path, reviews=reviews, compiled_root=compiled.root)
        _console().print(f"[green]dataset[/] {shown_path(written.out_dir)}")
    if result.unchanged:
        _console().print(
            f"[green]unchanged[/] release {escape(release)} already holds this content: "
            f"{shown_path(result.path)}; release digest {result.digest}"
        )
        return
    bump = f" ({result.bump} bump from {result.previous})" if result.previous else ""
    _console().print(
        f"[green]published[/] release {escape(release)}{bump}: {result.scenarios} scenarios in "
        f"{shown_path(result.path)}"
    )
    _console().print(f"release digest {result.digest} (recorded in gold/index.json; pin it)")
    typer.echo(result.digest)
    review = result.review
    if review is None:
        _console().print(
            "[yellow]warning[/]: no reviews.csv: the release records no clinical review"
        )
    elif review["unreviewed"]:
        _console().print(
            f"[yellow]warning[/]: {review['unreviewed']} item(s) not reviewed: "
            + ", ".join(review["unreviewed_ids"][:10]),
            markup=True,
        )


@release_app.command("verify-release")
def verify_release(
    path: Annotated[
        Path, typer.Argument(help="A release folder (generated/<domain>/gold/<version>).")
    ],
    digest: Annotated[
        str | None,
        typer.Option(help="The release digest you pinned (printed by publish): sha256:..."),
    ] = None,
    index: Annotated[
        Path | None,
        typer.Option(help="A release index to check against (default: gold/index.json beside it)."),
    ] = None,
) -> None:
    """Re-check every hash and validate every record of a release; exit 2 on tampering.

    The folder's own hashes cannot reveal a manifest recomputed after an edit; a pinned
    --digest, or the release index beside the release, can.
    """
    from harness.release.index import INDEX, release_digest
    from harness.release.verify import AUTO, verify_or_raise

    manifest = verify_or_raise(path, digest, index if index is not None else AUTO)
    pinned = []
    if digest:
        pinned.append("the pinned digest")
    if index is not None or (path / ".." / INDEX).is_file():
        pinned.append("the release index")
    how = (
        "matches " + " and ".join(pinned)
        if pinned
        else "checked against its own manifest only; pin it with --digest"
    )
    graph = manifest.get("graph")
    shipped = (
        f", its graph ({graph['node_count']} nodes, {graph['edge_count']} edges, KGX)"
        if isinstance(graph, dict)
        else ""
    )
    _console().print(
        f"[green]verified[/] release {escape(manifest['release_version'])} of "
        f"{escape(manifest['domain'])}: "
        f"{len(manifest['files'])} files, {manifest['counts']['scenarios']} scenarios{shipped}; "
        f"release digest {release_digest(path)} ({how})"
    )


@release_app.command("dataset")
def dataset_command(
    path: Annotated[
        Path, typer.Argument(help="A release folder (generated/<domain>/gold/<version>).")
    ],
    out: Annotated[
        Path | None,
        typer.Option(help="Output folder (default generated/<domain>/datasets/<version>/)."),
    ] = None,
    reviews: Annotated[
        Path | None,
        typer.Option(help="Review verdicts for per-item coverage (default: the domain's)."),
    ] = None,
) -> None:
    """Write a verified release as a dataset: Parquet tables, a Hugging Face dataset card
    (README.md) and Croissant metadata (croissant.json); `datasets.load_dataset(folder)`."""
    from harness.gold_layout import MANIFEST
    from harness.release.dataset import write_dataset
    from harness.review.verdicts import default_reviews

    if not (path / MANIFEST).is_file():
        from kgbench.errors import UserError

        raise UserError(f"{path}: not a release folder (no {MANIFEST})")
    compiled_root = path.resolve().parent.parent
    domain = compiled_root.name
    if reviews is None and default_reviews(domain).exists():
        reviews = default_reviews(domain)
    result = write_dataset(path, out, reviews, compiled_root)
    rows = ", ".join(f"{name} {n}" for name, n in result.rows.items())
    _console().print(f"[green]dataset[/] {shown_path(result.out_dir)}: {escape(rows)}")
    if result.graph_note:
        _console().print(escape(result.graph_note))
    typer.echo(str(result.out_dir))


@release_app.command("pin-releases")
def pin_releases(domain: DomainOption) -> None:
    """Record releases published before the release index existed (each must verify)."""
    from harness.compiled import CompiledDomain
    from harness.gold_layout import releases
    from harness.release.publish import publish_lock
    from harness.release.verify import pin_existing

    gold = CompiledDomain.open(domain).gold_dir
    with publish_lock(gold):
        recorded = pin_existing(gold, domain, releases(gold))
    what = ", ".join(recorded) if recorded else "nothing new"
    _console().print(f"[green]pinned[/] {escape(what)} in {shown_path(gold / 'index.json')}")

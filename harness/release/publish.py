"""`kgbench publish`: an immutable, semantically versioned gold release.

A release is validated scenarios (generated or hand-written) plus their gold records and the
schemas they validate against, under generated/<domain>/gold/<version>/. Rules:
  - a published version never changes: publishing different content under it is refused,
    publishing identical content (same bytes, by content hash) is a no-op;
  - a new version must be greater than the latest release and bumped at least as much as the
    change requires (see `compat`); the refusal names the bump and the version to use;
  - the folder is written under a temporary name and renamed into place, so a release is
    either complete or absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from harness.scenario_files import generated_set
from harness.scenarios.validation import check_file
from kgbench.contract import ScenarioRules
from kgbench.errors import UserError
from kgbench.io import json_bytes, jsonl_bytes, replace_folder, sha256_bytes
from kgbench.untrusted import load_json_object

from ..gold_layout import (
    BUMPS,
    DATA_FILES,
    GOLD,
    GOLD_SCHEMA,
    GRAPH_DIR,
    MANIFEST,
    RELEASE_FORMAT,
    SCENARIO_SCHEMA,
    SCENARIOS,
    SEMVER,
    Version,
    content_hash,
    releases,
)
from .compat import assess
from .graph import graph_files, graph_record
from .index import INDEX, append_release, read_index, release_digest
from .verify import verify_or_raise

CHANGELOG = "CHANGELOG.md"
LOCK = ".publish.lock"  # in gold/, beside the releases (ignored by git and by releases())


@dataclass(frozen=True)
class PublishResult:
    path: Path
    version: str
    scenarios: int
    unchanged: bool
    previous: str | None = None
    bump: str | None = None
    review: dict[str, Any] | None = None
    digest: str | None = None  # sha256 of the release manifest (see harness.release.index)


def _schema_version(domain: CompiledDomain, records: list[dict[str, Any]], source: Path) -> str:
    """The scenario schema version every record must carry (the compiled one when known)."""
    compiled = None
    if domain.has_scenario_rules:
        compiled = domain.document(ScenarioRules).scenario_schema_version
    versions = sorted({r["schema_version"] for r in records})
    expected = compiled or versions[0]
    stray = [r["scenario_id"] for r in records if r["schema_version"] != expected]
    if stray:
        raise UserError(
            f"{source}: scenario {stray[0]}"
            + (f" and {len(stray) - 1} more" if len(stray) > 1 else "")
            + f" carry schema_version {next(r['schema_version'] for r in records if r['scenario_id'] == stray[0])}, "
            f"but the compiled scenario schema is {expected}; update or regenerate them"
        )
    return expected


def build_files(
    domain: CompiledDomain, records: list[dict[str, Any]], version: str
) -> dict[str, bytes]:
    """The data files of a release (everything but the manifest), as exact bytes."""
    gold = [
        {
            "schema_version": version,
            "scenario_id": r["scenario_id"],
            "category": r["category"],
            "gold": r["gold"],
        }
        for r in records
    ]
    return {
        SCENARIOS: jsonl_bytes(records),
        GOLD: jsonl_bytes(gold),
        SCENARIO_SCHEMA: domain.schema_path("scenario").read_bytes(),
        GOLD_SCHEMA: domain.schema_path("gold").read_bytes(),
    }


def _entries(files: dict[str, bytes]) -> list[dict[str, Any]]:
    return [
        {"path": rel, "sha256": sha256_bytes(data), "bytes": len(data)}
        for rel, data in sorted(files.items())
    ]


def _manifest(
    domain: CompiledDomain,
    version: str,
    schema_version: str,
    records: list[dict[str, Any]],
    files: dict[str, bytes],
    previous: str | None,
) -> dict[str, Any]:
    compiled = domain.json("manifest.json")
    per_category: dict[str, int] = {}
    for r in records:
        per_category[r["category"]] = per_category.get(r["category"], 0) + 1
    entries = _entries(files)
    return {
        "release_format": RELEASE_FORMAT,
        "release_version": version,
        "previous_release": previous,
        "domain": domain.name,
        "domain_version": compiled.get("domain_version"),
        # the data licence domain.yaml declares (the compiled manifest carries it)
        "data_license": compiled.get("data_license") or "unknown",
        "spec_version": compiled.get("spec_version"),
        "compiler": compiled.get("compiler"),
        "scenario_schema_version": schema_version,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "counts": {"scenarios": len(records), "per_category": per_category},
        "files": entries,
        "content_sha256": content_hash(entries),
    }


def _read_files(path: Path) -> dict[str, bytes]:
    """A published release's data files and the graph files it ships (if any)."""
    files = {rel: (path / rel).read_bytes() for rel in DATA_FILES}
    manifest = load_json_object(path / MANIFEST, "release manifest")
    for entry in manifest.get("files") or []:
        rel = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(rel, str) and rel.startswith(f"{GRAPH_DIR}/") and ".." not in rel:
            files[rel] = (path / rel).read_bytes()
    return files


def _review(
    records: list[dict[str, Any]], reviews: Path | None, gold_root: Path
) -> dict[str, Any] | None:
    """Review coverage for the manifest; a disputed item stops the release."""
    if reviews is None:
        return None
    from harness.review.verdicts import (
        coverage,
        read_reviews,
        read_verdicts,
        released_items,
        role_coverage,
    )

    history = released_items(gold_root)
    verdicts = read_verdicts(reviews, records, history=history)
    cov = coverage(records, verdicts)
    if cov.disputed:
        notes = "; ".join(f"{i}: {verdicts[i].note}" for i in cov.disputed[:10])
        raise UserError(
            f"{len(cov.disputed)} item(s) are disputed in {reviews} and cannot be published "
            f"({notes}); fix them, regenerate, and review them again"
        )
    return {
        **cov.as_dict(reviews.name),
        **role_coverage(records, read_reviews(reviews, records, history=history)),
    }


def review_statement(review: dict[str, Any] | None) -> str:
    """The release page's sentence on who reviewed the gold: author and independent coverage
    stated separately; "independently reviewed" only where every item has an independent
    accept for its current hash."""
    if review is None:
        return "Clinical review: none recorded for this release.\n"
    roles = review.get("by_role") or {}
    author = roles.get("author") or {}
    independent = roles.get("independent") or {}
    n = review["accepted"] + review["disputed"] + review["unreviewed"]
    lines = [
        "## Clinical review",
        "",
        f"- Authors' review (the project's own maintainers; a self-check): "
        f"{author.get('accepted', 0)} of {n} items accepted.",
        f"- Independent clinical review of these item versions: "
        f"{independent.get('accepted', 0)} of {n} items accepted, "
        f"{independent.get('disputed', 0)} disputed.",
        "- This release is "
        + (
            "independently reviewed."
            if review.get("independently_reviewed")
            else "NOT independently reviewed: not every item has an independent accept for its current version."
        ),
        "",
    ]
    return "\n".join(lines)


def publish_release(
    domain: CompiledDomain,
    version: str,
    scenarios: Path | None = None,
    reviews: Path | None = None,
    changelog: Path | None = None,
) -> PublishResult:
    new = Version.parse(version)
    source = scenarios or generated_set(domain)
    records = check_file(domain, source)
    schema_version = _schema_version(domain, records, source)
    gold_root = domain.gold_dir
    review = _review(records, reviews, gold_root)
    files = build_files(domain, records, schema_version)
    # the graph the scenarios were generated from: the compile's own KGX export, as written
    compiled_bytes = domain.manifest_path.read_bytes()
    compiled_manifest = domain.json("manifest.json")
    graph = graph_files(domain.root, compiled_manifest, domain.name)
    files.update(graph)
    graph_section = graph_record(graph, compiled_bytes, compiled_manifest)
    if changelog is not None:
        if not changelog.is_file():
            raise UserError(f"changelog not found: {changelog}")
        # the release page: the changelog, then who reviewed the gold
        files[CHANGELOG] = (
            changelog.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + review_statement(review)
        ).encode("utf-8")
    with publish_lock(gold_root):
        return _publish_locked(
            domain, gold_root, new, records, schema_version, files, review, graph_section
        )


def _publish_locked(
    domain: CompiledDomain,
    gold_root: Path,
    new: Version,
    records: list[dict[str, Any]],
    schema_version: str,
    files: dict[str, bytes],
    review: dict[str, Any] | None,
    graph: dict[str, Any],
) -> PublishResult:
    """The part of publishing that reads and changes gold/: one publish at a time (a lock),
    so two racing publishes cannot both pass the checks and leave a folder the index refuses."""
    target = gold_root / str(new)
    _recover_unindexed(gold_root, new, target, files)
    published = releases(gold_root)

    _require_indexed(gold_root, published)
    if new in published or target.exists():
        if not (target / MANIFEST).is_file():
            raise UserError(
                f"{target} exists but holds no release (no {MANIFEST}; a folder made by hand or "
                "left by an interrupted copy): remove it and publish again"
            )
        existing = load_json_object(target / MANIFEST, "release manifest")
        if existing.get("content_sha256") == content_hash(_entries(files)):
            return PublishResult(
                target, str(new), len(records), unchanged=True, digest=release_digest(target)
            )
        latest = max(published)
        needed = assess(_read_files(published[latest]), files)
        raise UserError(
            f"release {new} already exists with different content ({target}); a published "
            f"release is immutable. Publish the change as a new version: "
            f"{latest.next(needed.bump if needed.bump != 'none' else 'patch')} "
            f"({needed.bump} bump from the latest, {latest})"
        )

    previous = max(published) if published else None
    bump = None
    if previous is not None:
        needed = assess(_read_files(published[previous]), files)
        if needed.bump == "none":
            raise UserError(f"the content is identical to release {previous}; nothing to publish")
        if not previous < new:
            raise UserError(
                f"release version {new} is not greater than the latest release {previous}; "
                f"this change needs a {needed.bump} bump: publish as {previous.next(needed.bump)}"
            )
        bump = new.bump_from(previous)
        if BUMPS.index(bump) < BUMPS.index(needed.bump):
            raise UserError(
                f"release {new} is a {bump} bump from {previous}, but the change needs a "
                f"{needed.bump} bump: publish as {previous.next(needed.bump)} (or higher). "
                "Why: " + "; ".join(needed.reasons)
            )

    manifest = _manifest(
        domain, str(new), schema_version, records, files, str(previous) if previous else None
    )
    manifest["graph"] = graph
    if review is not None:
        manifest["review"] = review
    _write_release(target, files, manifest)
    digest = append_release(gold_root, domain.name, target)
    return PublishResult(
        target,
        str(new),
        len(records),
        unchanged=False,
        previous=str(previous) if previous else None,
        bump=bump,
        review=review,
        digest=digest,
    )


@contextmanager
def publish_lock(gold_root: Path) -> Iterator[None]:
    """One publish or pin of a domain's releases at a time: an flock on gold/.publish.lock
    (dropped by the kernel if the holder dies, even by SIGKILL). A second one is refused at
    once rather than left to wait behind a publish that may be paused for review."""
    import fcntl

    gold_root.mkdir(parents=True, exist_ok=True)
    path = gold_root / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(
                f"another `kgbench publish` or `pin-releases` is changing {gold_root} "
                f"(it holds {path}); wait for it to finish and run again"
            ) from None
        yield
    finally:
        os.close(fd)


def _recover_unindexed(
    gold_root: Path, new: Version, target: Path, files: dict[str, bytes]
) -> None:
    """Finish a publish that was interrupted between writing its folder and recording it in
    the index: the same version, newer than every indexed release, with exactly the content
    being published now, is verified and recorded. Anything else is left to the checks."""
    index = read_index(gold_root / INDEX)
    if index is None or not (target / MANIFEST).is_file():
        return
    indexed = [e.get("version") for e in index["releases"]]
    if str(new) in indexed:
        return
    last = max(
        (Version.parse(v) for v in indexed if isinstance(v, str) and SEMVER.match(v)), default=None
    )
    if last is not None and not last < new:
        return
    existing = load_json_object(target / MANIFEST, "release manifest")
    if existing.get("content_sha256") != content_hash(_entries(files)):
        raise UserError(
            f"{target} is not in the release index and holds other content than this publish: "
            "it was never published (an interrupted publish of other content, or a folder "
            "made by hand); remove it and publish again"
        )
    verify_or_raise(target, index=None)
    append_release(gold_root, gold_root.parent.name, target)


def _require_indexed(gold_root: Path, published: dict[Version, Path]) -> None:
    """Every release already published must be in the index before another joins the chain."""
    index = read_index(gold_root / INDEX)
    known = {e.get("version") for e in index["releases"]} if index else set()
    missing = sorted(v for v in published if str(v) not in known)
    if missing:
        raise UserError(
            f"release(s) {', '.join(map(str, missing))} under {gold_root} are not in the release "
            f"index ({INDEX}); record them first with `kgbench pin-releases --domain "
            f"{gold_root.parent.name}` (after checking they are the published ones)"
        )


def _write_release(target: Path, files: dict[str, bytes], manifest: dict[str, Any]) -> None:
    """All files and the manifest appear at once (a folder swap), or nothing does."""
    replace_folder(target, {**files, MANIFEST: json_bytes(manifest)})

"""Checking and reading a gold release with nothing but the release folder.

`verify_release(path)` re-computes every file's sha256 and size against the manifest, finds
missing and unlisted files, re-checks the content hash, validates every record against the
schemas shipped in the folder (and each gold record against its scenario), and checks the
shipped graph (harness.release.graph: whole, and the graph the gold cites). `read_release`
does the same and returns the parsed release; a consumer needs neither the spec, nor the
compiled graph, nor Neo4j.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgbench import untrusted
from kgbench.errors import UserError, UserErrors
from kgbench.io import sha256_bytes

from ..gold_layout import (
    DATA_FILES,
    GOLD,
    GOLD_SCHEMA,
    MANIFEST,
    SCENARIO_SCHEMA,
    SCENARIOS,
    SEMVER,
    Version,
    content_hash,
)
from .graph import graph_problems
from .index import (
    INDEX,
    append_release,
    chain_problems,
    index_entry,
    normalise_digest,
    read_index,
    release_digest,
)

GOLD_RECORD_KEYS = {"schema_version", "scenario_id", "category", "gold"}


def _failed(path: Path, problems: list[str]) -> UserErrors:
    return UserErrors(problems, f"release {path} failed verification ({len(problems)} problems):")


@dataclass(frozen=True)
class Release:
    path: Path
    manifest: dict[str, Any]
    scenarios: list[dict[str, Any]]
    gold: dict[str, dict[str, Any]]  # scenario id -> gold record

    @property
    def version(self) -> str:
        return self.manifest["release_version"]


def _field(path: Any) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(record)"


def _lines(path: Path) -> list[tuple[int, Any]]:
    """(line, value) of a JSON Lines file, split on `\\n` only (a name may hold U+2028,
    which `str.splitlines` splits on); a line that is not JSON gives its ParseError."""
    try:
        text = untrusted.decode(path.read_bytes(), path)
    except UserError as exc:
        return [(exc.location.line if exc.location else 1, untrusted.ParseError(exc.message))]
    out: list[tuple[int, Any]] = []
    for n, line in untrusted.lines(text):
        if line.strip():
            try:
                out.append((n, untrusted.parse_json(line)))
            except untrusted.ParseError as exc:
                out.append((n, exc))
    return out


def _manifest(root: Path) -> dict[str, Any]:
    """The manifest (already checked by `_verify_folder` where it matters)."""
    return untrusted.load_json_object(root / MANIFEST, "release manifest")


def _check_files(root: Path, manifest: dict[str, Any], problems: list[str]) -> None:
    entries = manifest.get("files") or []
    listed = set()
    for e in entries:
        rel = e.get("path", "")
        listed.add(rel)
        target = (root / rel).resolve()
        if ".." in Path(rel).parts or root.resolve() not in target.parents:
            problems.append(f"{MANIFEST}: file entry '{rel}' points outside the release")
            continue
        if not target.is_file():
            problems.append(f"{rel}: listed in the manifest but missing")
            continue
        data = target.read_bytes()
        if sha256_bytes(data) != e.get("sha256"):
            problems.append(
                f"{rel}: sha256 mismatch (manifest {e.get('sha256')}, file {sha256_bytes(data)}): the file was modified"
            )
        elif len(data) != e.get("bytes"):
            problems.append(f"{rel}: size mismatch (manifest {e.get('bytes')}, file {len(data)})")
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        if rel != MANIFEST and rel not in listed:
            problems.append(f"{rel}: not listed in the manifest")
    for rel in DATA_FILES:
        if rel not in listed:
            problems.append(f"{MANIFEST}: required file '{rel}' is not listed")
    if entries and content_hash(entries) != manifest.get("content_sha256"):
        problems.append(f"{MANIFEST}: content_sha256 does not match the listed files")


def _check_records(root: Path, manifest: dict[str, Any], problems: list[str]) -> tuple[list, dict]:
    import jsonschema

    try:
        scenario_schema = untrusted.load_json_object(root / SCENARIO_SCHEMA, "JSON Schema")
        gold_schema = untrusted.load_json_object(root / GOLD_SCHEMA, "JSON Schema")
    except UserError as exc:
        problems.append(f"schemas: cannot be read ({exc})")
        return [], {}
    scenario_v = jsonschema.Draft202012Validator(scenario_schema)
    gold_v = jsonschema.Draft202012Validator(gold_schema)
    version = manifest.get("scenario_schema_version")
    scenarios: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for n, rec in _lines(root / SCENARIOS):
        where = f"{SCENARIOS}, line {n}"
        if isinstance(rec, untrusted.ParseError):
            problems.append(f"{where}: {rec.message}")
            continue
        if not isinstance(rec, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        sid = rec.get("scenario_id", "?")
        for err in scenario_v.iter_errors(rec):
            problems.append(f"{where} ({sid}), field '{_field(err.absolute_path)}': {err.message}")
        if rec.get("schema_version") != version:
            problems.append(
                f"{where} ({sid}), field 'schema_version': {rec.get('schema_version')!r}, the release says {version!r}"
            )
        if sid in by_id:
            problems.append(f"{where} ({sid}): duplicate scenario id")
        by_id[sid] = rec
        scenarios.append(rec)
    gold: dict[str, dict[str, Any]] = {}
    for n, rec in _lines(root / GOLD):
        where = f"{GOLD}, line {n}"
        if isinstance(rec, untrusted.ParseError):
            problems.append(f"{where}: {rec.message}")
            continue
        if not isinstance(rec, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        sid = rec.get("scenario_id", "?")
        if set(rec) != GOLD_RECORD_KEYS:
            problems.append(
                f"{where} ({sid}): expected exactly the fields {sorted(GOLD_RECORD_KEYS)}, got {sorted(rec)}"
            )
            continue
        for err in gold_v.iter_errors(rec["gold"]):
            problems.append(
                f"{where} ({sid}), field 'gold.{_field(err.absolute_path)}': {err.message}"
            )
        if rec["schema_version"] != version:
            problems.append(
                f"{where} ({sid}), field 'schema_version': {rec['schema_version']!r}, the release says {version!r}"
            )
        scenario = by_id.get(sid)
        if scenario is None:
            problems.append(f"{where} ({sid}): no such scenario in {SCENARIOS}")
        elif scenario.get("gold") != rec["gold"] or scenario.get("category") != rec["category"]:
            problems.append(
                f"{where} ({sid}): differs from the gold of the scenario in {SCENARIOS}"
            )
        if sid in gold:
            problems.append(f"{where} ({sid}): duplicate gold record")
        gold[sid] = rec
    for sid in sorted(by_id.keys() - gold.keys()):
        problems.append(f"{GOLD}: no gold record for scenario {sid}")
    counts = manifest.get("counts") or {}
    if counts.get("scenarios") != len(scenarios):
        problems.append(
            f"{MANIFEST}: counts.scenarios is {counts.get('scenarios')}, the release holds {len(scenarios)}"
        )
    return scenarios, gold


AUTO = "auto"


def verify_release(
    path: Path, digest: str | None = None, index: Path | str | None = AUTO
) -> list[str]:
    """Every problem found in a release folder (empty when it is intact).

    Beyond the folder's own hashes: with `digest`, the release digest (sha256 of its
    manifest) must be that one; with an index (by default the gold/index.json beside the
    release, when there is one), the release must be recorded there with its digest and the
    index's hash chain must be whole. Those two checks catch a release whose files were
    edited and whose manifest hashes were then recomputed to match.
    """
    problems = _verify_folder(Path(path))
    if problems:
        return problems
    return _verify_pins(Path(path), digest, index)


def _verify_pins(root: Path, digest: str | None, index: Path | str | None) -> list[str]:
    problems: list[str] = []
    actual = release_digest(root)
    if digest is not None and normalise_digest(digest) != actual:
        problems.append(
            f"{MANIFEST}: the release digest is {actual}, not the pinned "
            f"{normalise_digest(digest)}: the release changed after it was pinned (its own "
            "hashes can agree when they were recomputed)"
        )
    if index is None:
        return problems
    index_file = root.parent / INDEX if index == AUTO else Path(index)
    if index == AUTO and not index_file.is_file():
        return problems  # a release copied elsewhere: pin it with a digest instead
    data = read_index(index_file)
    if data is None:
        return [*problems, f"{index_file}: no release index there"]
    manifest = _manifest(root)
    problems += chain_problems(data)
    if data.get("domain") != manifest.get("domain"):
        problems.append(
            f"{INDEX}: indexes domain {data.get('domain')!r}, the release is of "
            f"{manifest.get('domain')!r}"
        )
    entry = index_entry(data, manifest["release_version"])
    if entry is None:
        problems.append(
            f"{INDEX}: release {manifest['release_version']} is not recorded in the index "
            "(published without it, or added to the folder by hand)"
        )
    elif entry.get("release_digest") != actual:
        problems.append(
            f"{MANIFEST}: the release digest is {actual}, but {INDEX} recorded "
            f"{entry.get('release_digest')} when it was published: the release was changed "
            "afterwards (its own hashes agree only because they were recomputed)"
        )
    return problems


def _verify_folder(root: Path) -> list[str]:
    """The folder against its own manifest: hashes, sizes, listed files, records."""
    if not (root / MANIFEST).is_file():
        return [f"{root}: not a release folder (no {MANIFEST})"]
    try:
        manifest = _manifest(root)
    except UserError as exc:
        where = f" (line {exc.location.line})" if exc.location and exc.location.line else ""
        return [f"{MANIFEST}: {exc.message}{where}"]
    problems: list[str] = []
    for key in (
        "release_version",
        "domain",
        "scenario_schema_version",
        "files",
        "content_sha256",
        "counts",
    ):
        if key not in manifest:
            problems.append(f"{MANIFEST}: missing '{key}'")
    if problems:
        return problems
    _check_files(root, manifest, problems)
    if all((root / rel).is_file() for rel in DATA_FILES):
        _, gold = _check_records(root, manifest, problems)
        problems += graph_problems(root, manifest, gold)
    return problems


def verify_or_raise(
    path: Path, digest: str | None = None, index: Path | str | None = AUTO
) -> dict[str, Any]:
    problems = verify_release(path, digest, index)
    if problems:
        raise _failed(path, problems)
    return _manifest(Path(path))


def read_release(path: Path | str, verify: bool = True) -> Release:
    """A verified release, read from its folder alone."""
    root = Path(path)
    manifest = verify_or_raise(root) if verify else _manifest(root)
    problems: list[str] = []
    scenarios, gold = _check_records(root, manifest, problems)
    if problems and verify:  # pragma: no cover - verify_or_raise already ran the same checks
        raise _failed(root, problems)
    return Release(root, manifest, scenarios, gold)


def pin_existing(gold_root: Path, domain: str, releases: dict[Version, Path]) -> list[str]:
    """Index releases published before the index existed, oldest first (each must verify);
    returns the versions recorded. What is recorded is what the folders hold now."""
    index = read_index(gold_root / INDEX)
    known = {e.get("version") for e in index["releases"]} if index else set()
    last = max(
        (Version.parse(v) for v in known if isinstance(v, str) and SEMVER.match(v)), default=None
    )
    newer = sorted(v for v in releases if str(v) not in known and last is not None and last < v)
    if newer:
        # Pinning records releases published before the index existed. A folder newer than
        # the last indexed release was made after it, outside `publish` (no review coverage,
        # no bump check): recording it would let a forged release join the hash chain.
        raise UserError(
            f"release(s) {', '.join(map(str, newer))} under {gold_root} are newer than the last "
            f"indexed release {last}, so they were not published before the index existed; "
            "nothing was pinned. Finish an interrupted publish with `kgbench publish --release "
            f"{newer[0]}` (it records the folder only if it holds exactly what it publishes), "
            "or remove the folder"
        )
    recorded = []
    for version in sorted(releases):
        if str(version) in known:
            continue
        verify_or_raise(releases[version], index=None)  # the folder against its own manifest
        append_release(gold_root, domain, releases[version])
        recorded.append(str(version))
    return recorded

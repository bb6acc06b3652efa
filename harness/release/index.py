"""Pinning releases: a release digest, and a committed index that chains them.

A release folder verifies against its own manifest, which proves the files are the ones the
manifest lists, but not that the manifest is the one that was published: someone who edits a
gold record and recomputes every hash in the manifest gets a folder that verifies (review
5h). The release digest closes that gap: it is the sha256 of the release's manifest.json
bytes, which cover every file's sha256 and the creation time, so any change to any file that
is "consistently" re-hashed changes the digest.

`publish` prints the digest and records it in gold/index.json beside the releases; each entry
also holds the previous release's digest, so the index is a hash chain and rewriting one
entry means rewriting every later one (which a reviewer sees in the committed history).
`verify-release --digest D` checks a release against a digest pinned anywhere (a paper, a
config file); `verify-release` also checks it against the index beside it when there is one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgbench.errors import UserError
from kgbench.io import sha256_file
from kgbench.untrusted import load_json, load_json_object

from ..gold_layout import MANIFEST, SEMVER, Version

INDEX = "index.json"
INDEX_FORMAT = "1.0.0"
DIGEST_PREFIX = "sha256:"


def release_digest(release: Path) -> str:
    """`sha256:<hex>` of the release's manifest.json bytes."""
    return DIGEST_PREFIX + sha256_file(Path(release) / MANIFEST)


def normalise_digest(text: str) -> str:
    """A digest as given on the command line: with or without the `sha256:` prefix."""
    value = text.strip().lower().removeprefix(DIGEST_PREFIX)
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise UserError(f"--digest {text!r} is not a sha256 digest (64 hex digits, sha256:...)")
    return DIGEST_PREFIX + value


def read_index(path: Path) -> dict[str, Any] | None:
    """The index file at `path` (gold/index.json), None when there is none."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        data = load_json(path, "release index")
    except UserError as exc:
        raise UserError(f"{path}: not a readable release index ({exc.message})") from None
    if not isinstance(data, dict) or not isinstance(data.get("releases"), list):
        raise UserError(f"{path}: expected an object with a 'releases' list")
    return data


def chain_problems(index: dict[str, Any]) -> list[str]:
    """Breaks in the hash chain: each entry must name the digest of the one before it."""
    problems: list[str] = []
    previous_digest = None
    previous_version: Version | None = None
    for n, entry in enumerate(index["releases"]):
        version = str(entry.get("version")) if isinstance(entry, dict) else ""
        if not isinstance(entry, dict) or not SEMVER.match(version):
            problems.append(f"{INDEX}: entry {n + 1} is not a release entry")
            continue
        if entry.get("previous_digest") != previous_digest:
            problems.append(
                f"{INDEX}: entry {version} names previous digest {entry.get('previous_digest')}, "
                f"but the entry before it is {previous_digest}: the chain was rewritten"
            )
        current = Version.parse(version)
        if previous_version is not None and not previous_version < current:
            problems.append(f"{INDEX}: entry {version} does not follow {previous_version}")
        previous_digest, previous_version = entry.get("release_digest"), current
    return problems


def index_entry(index: dict[str, Any], version: str) -> dict[str, Any] | None:
    return next(
        (e for e in index["releases"] if isinstance(e, dict) and e.get("version") == version),
        None,
    )


def append_release(gold_root: Path, domain: str, release: Path) -> str:
    """Record a just-published release in the index (written atomically); its digest."""
    from kgbench.io import atomic_write_json

    manifest = load_json_object(release / MANIFEST, "release manifest")
    index = read_index(gold_root / INDEX) or {
        "index_format": INDEX_FORMAT,
        "domain": domain,
        "releases": [],
    }
    problems = chain_problems(index)
    if problems:
        raise UserError(f"{gold_root / INDEX} is damaged; nothing was recorded: " + problems[0])
    digest = release_digest(release)
    previous = index["releases"][-1] if index["releases"] else None
    if previous is not None and not Version.parse(previous["version"]) < Version.parse(
        manifest["release_version"]
    ):
        raise UserError(
            f"{gold_root / INDEX}: release {manifest['release_version']} does not follow the "
            f"last indexed release {previous['version']}"
        )
    index["releases"].append(
        {
            "version": manifest["release_version"],
            "release_digest": digest,
            "previous_digest": previous["release_digest"] if previous else None,
            "content_sha256": manifest["content_sha256"],
            "created_at": manifest.get("created_at"),
        }
    )
    atomic_write_json(gold_root / INDEX, index)
    return digest

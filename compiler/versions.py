"""The compiler's versions as a manifest records them: its dependencies' versions and one hash
over its own code.

Kept apart from the manifest backend, with nothing heavier than hashlib imported, because a
no-op compile compares these against the manifest before it imports anything else (the
manifest backend pulls in the contract models, pydantic and every backend). For the same
reason the versions are read from the installed distributions' metadata folders directly
(`installed_versions`): `importlib.metadata` alone costs about as much to import as the rest
of a no-op compile, and it stays the fallback for every layout this reader does not handle.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

from kgbench.locations import PACKAGE_DIR

COMPILER_DIR = Path(__file__).resolve().parent
# The contract's models decide what the compiler writes as much as its own code does.
CONTRACT_DIR = COMPILER_DIR.parent / "kgbench" / "contract"
# Kernel modules whose code shapes the compiled bytes: the canonical serialisers (and their
# column-wise form, which writes the large rows files, with the character scan that picks a
# column's fast path), and the untrusted-text encoders (the compiled KGX export's TSV cells go
# through `tsv_field`); by path, so that the no-op check imports nothing more.
KERNEL_FILES = tuple(
    (PACKAGE_DIR / name).resolve()
    for name in ("io.py", "jsoncolumns.py", "textscan.py", "untrusted.py")
)
# The distributions whose versions a manifest records, in the order it records them.
DISTRIBUTIONS = ("kgbench", "linkml", "linkml-runtime", "biolink-model", "jinja2")
UNKNOWN = "unknown"  # not installed (running from a bare checkout)


def compiler_versions() -> dict[str, str]:
    return {**installed_versions(DISTRIBUTIONS), "source_sha256": compiler_source_digest()}


def compiler_source_digest() -> str:
    """One hash over the compiler's own code (and the kernel serialisers it writes with), so
    a changed backend invalidates old output."""
    digest = hashlib.sha256()
    for root in (COMPILER_DIR, CONTRACT_DIR):
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{root.name}/{path.relative_to(root).as_posix()}".encode())
            digest.update(path.read_bytes())
    for path in KERNEL_FILES:
        digest.update(f"kgbench/{path.name}".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def installed_versions(names: tuple[str, ...]) -> dict[str, str]:
    """What `importlib.metadata.version` says for each name ("unknown" when not installed).

    Read the way importlib.metadata finds a distribution on the common layouts (the first
    `<name>-*.dist-info` or `<name>*.egg-info` folder along `sys.path`, in listing order,
    its `Version` header); on anything else (a zip or egg on the path, another finder that
    serves metadata, a folder without a readable Version) importlib.metadata answers.
    `tests/test_compile_noop.py` holds the two to the same answer for every installed
    distribution."""
    wanted = {_normalize(name): name for name in names}
    found: dict[str, str] = {}
    if not _only_the_path_finder_serves_metadata():
        return {name: _importlib_version(name) for name in names}
    for entry in sys.path:
        try:
            children = os.listdir(entry or ".")
        except OSError:
            if os.path.exists(entry or "."):  # a zip file on the path
                return {name: _importlib_version(name) for name in names}
            continue
        if os.path.basename(entry).lower().endswith(".egg"):
            return {name: _importlib_version(name) for name in names}
        for child in children:
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            key = _normalize(low.rpartition(".")[0].partition("-")[0])
            name = wanted.get(key)
            if name is None or name in found:
                continue
            version = _version_header(os.path.join(entry, child))
            found[name] = version if version is not None else _importlib_version(name)
        if len(found) == len(names):
            break
    return {name: found.get(name, UNKNOWN) for name in names}


def _normalize(name: str) -> str:
    """importlib.metadata's `Prepared.normalize`: PEP 503, with dashes as underscores."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _only_the_path_finder_serves_metadata() -> bool:
    from importlib.machinery import PathFinder

    return all(
        finder is PathFinder or getattr(finder, "find_distributions", None) is None
        for finder in sys.meta_path
    )


def _version_header(info: str) -> str | None:
    """The `Version:` header of a metadata folder's METADATA (or an egg-info's PKG-INFO), read
    up to the end of the headers; None when there is none to read this way."""
    for name in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(info, name), encoding="utf-8") as handle:
                for line in handle:
                    if line in ("\n", "\r\n"):
                        break
                    key, colon, value = line.partition(":")
                    if colon and key.lower() == "version":
                        return value.strip()
        except (OSError, UnicodeDecodeError):
            continue
        return None
    return None


def _importlib_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return UNKNOWN

"""Whether generated/<domain>/ is current: the no-op compile's decision.

Decided from hashes alone, with nothing heavier than hashlib and kgbench's untrusted-text reader imported (no LinkML,
pyarrow, numpy, pydantic, backend, nor the kernel's dataclasses and readers): a no-op compile
is what `make` and the pilot run most, and its floor is a bare interpreter hashing the same
files (`python -m bench --only compile_bench`), so this module and the console entry that
calls it (`kgbench.cli.entry`) are held to about twice that. `compiler.api.up_to_date` is its
face for the rest of the code.

Current means all of: the manifest's compiler versions (dependencies and the compiler's own
source hash) equal this compiler's; every recorded input (spec, domain data, templates) and
every output still has its recorded sha256; and no spec schema, shared declaration or
template exists that the manifest does not record (a new file must trigger a rebuild too).
Anything unreadable or malformed is "not current", never an error: the compile then runs and
reports whatever is wrong.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from kgbench.untrusted import load_json_or_none

from .paths import (
    DECLARATIONS_DIR,
    GENERATED_DIR,
    SPEC_DIR,
    TEMPLATES_DIR,
    recorded_path,
    repo_relative,
    resolve_domain_dir,
)
from .versions import compiler_versions

# Far above any manifest kgbench writes (a few hundred entries); a larger file is not read.
MAX_MANIFEST_BYTES = 64 << 20


def current_outputs(
    domain: str | Path, out_root: Path | None = None
) -> tuple[str, Path, int] | None:
    """(domain name, output folder, files in it) when generated/<domain>/ is current, else
    None. Raises what `resolve_domain_dir` raises for a domain that does not exist."""
    domain_dir = resolve_domain_dir(domain)
    out_dir = (out_root or GENERATED_DIR) / domain_dir.name
    manifest = current_manifest(out_dir)
    if manifest is None:
        return None
    return domain_dir.name, out_dir, len(manifest["outputs"]) + 1


def current_manifest(out_dir: Path) -> dict | None:
    """The manifest of `out_dir` when its inputs, outputs and compiler versions all still
    match, else None."""
    manifest = _read_manifest(out_dir / "manifest.json")
    if manifest is None:
        return None
    try:
        if manifest.get("compiler") != compiler_versions():
            return None
        for entry in manifest["inputs"]:
            if sha256_of(recorded_path(entry["path"])) != entry["sha256"]:
                return None
        for entry in manifest["outputs"]:
            if sha256_of(out_dir / entry["path"]) != entry["sha256"]:
                return None
        if not _input_set_unchanged(manifest):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return manifest


def sha256_of(path: Path) -> str | None:
    """The sha256 of a regular file (what `kgbench.io.sha256_file` writes into manifests),
    or None for anything else: a missing path, a folder, a FIFO (never opened: it would
    block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def _read_manifest(path: Path) -> dict | None:
    try:
        if os.stat(path).st_size > MAX_MANIFEST_BYTES:
            return None
    except OSError:
        return None
    manifest = load_json_or_none(path)
    return manifest if isinstance(manifest, dict) else None


def _input_set_unchanged(manifest: dict) -> bool:
    """A new file (a template, a spec schema, a shared declaration) must also trigger a rebuild."""
    recorded = {e["path"] for e in manifest["inputs"]}
    current = {
        repo_relative(p) for folder in (SPEC_DIR, DECLARATIONS_DIR) for p in folder.glob("*.yaml")
    }
    current |= {repo_relative(p) for p in TEMPLATES_DIR.rglob("*.j2")}
    return current <= recorded

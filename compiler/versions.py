"""The compiler's versions as a manifest records them: its dependencies' versions and one hash
over its own code.

Kept apart from the manifest backend, with nothing heavier than hashlib imported, because a
no-op compile compares these against the manifest before it imports anything else (the
manifest backend pulls in the contract models, pydantic and every backend).
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

import kgbench.io as kgbench_io

COMPILER_DIR = Path(__file__).resolve().parent
# The contract's models decide what the compiler writes as much as its own code does.
CONTRACT_DIR = COMPILER_DIR.parent / "kgbench" / "contract"
# Kernel modules whose code shapes the compiled bytes: the canonical serialisers, and the
# untrusted-text encoders (the compiled KGX export's TSV cells go through `tsv_field`); the
# latter by path, so that the no-op check imports nothing more.
KERNEL_FILES = (
    Path(kgbench_io.__file__).resolve(),
    Path(kgbench_io.__file__).resolve().with_name("untrusted.py"),
)


def compiler_versions() -> dict[str, str]:
    def v(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            return "unknown"

    return {
        "kgbench": v("kgbench"),
        "linkml": v("linkml"),
        "linkml-runtime": v("linkml-runtime"),
        "biolink-model": v("biolink-model"),
        "jinja2": v("jinja2"),
        "source_sha256": compiler_source_digest(),
    }


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

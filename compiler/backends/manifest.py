"""`manifest.json`: spec version, compiler versions and a sha256 of every input and output.

Provenance lives here only, as hashes and versions; no timestamps, so the manifest is as
deterministic as the artifacts it describes.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

import kgbench.io as kgbench_io
from kgbench.contract import Manifest

from ..ir import Domain
from .base import Artifact, Backend, EmitContext

COMPILER_DIR = Path(__file__).resolve().parents[1]
# The contract's models decide what the compiler writes as much as its own code does.
CONTRACT_DIR = Path(__file__).resolve().parents[2] / "kgbench" / "contract"
# Kernel modules whose code shapes the compiled bytes (the canonical serialisers).
KERNEL_FILES = (Path(kgbench_io.__file__).resolve(),)


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


def build(
    domain: Domain,
    artifacts: list[Artifact],
    template_inputs: list[tuple[str, str]],
    backends: tuple[Backend, ...],
    ctx: EmitContext,
) -> Artifact:
    inputs = sorted({(f.path, f.sha256) for f in domain.inputs} | set(template_inputs))
    data = {
        "domain": domain.name,
        "domain_version": domain.version,
        "spec_version": domain.spec_version,
        "data_license": domain.data_license or None,
        # the Biolink Model every class, predicate and qualifier was checked against
        "biolink_model_version": domain.biolink_version,
        "compiler": compiler_versions(),
        "formats": dict(sorted(ctx.formats.items())),
        "backends": {b.name: b.format_version for b in backends},
        "inputs": [{"path": p, "sha256": h} for p, h in inputs],
        "outputs": [
            {
                "path": a.path,
                "sha256": a.sha256,
                "bytes": a.size,
            }
            for a in sorted(artifacts, key=lambda a: a.path)
        ],
    }
    return Backend.document(Manifest, data, ctx)

"""`manifest.json`: spec version, compiler versions and a sha256 of every input and output.

Provenance lives here only, as hashes and versions; no timestamps, so the manifest is as
deterministic as the artifacts it describes.
"""

from __future__ import annotations

from kgbench.contract import Manifest

from ..ir import Domain
from ..versions import compiler_versions
from .base import Artifact, Backend, EmitContext


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

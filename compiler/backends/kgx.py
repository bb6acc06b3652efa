"""`kgx/`: the graph as KGX nodes and edges (Biolink), the export `kgbench export -f kgx` writes.

Compiled with every domain, so the graph a release was generated from exists beside it as
exact bytes hashed by the compiled manifest; `kgbench publish` copies these files into the
release and hashes them there (harness/release/graph.py). Written by kgbench's own exporter
(compiler/export/kgx.py): compiling needs neither KGX nor its environment.
"""

from __future__ import annotations

from ..export import kgx
from ..ir import Domain
from .base import Artifact, Backend, EmitContext

FOLDER = "kgx"


class KgxBackend(Backend):
    name = "kgx"
    format_version = "1.0.0"
    outputs = (f"{FOLDER}/*_nodes.tsv", f"{FOLDER}/*_edges.tsv", f"{FOLDER}/prefixes.json")

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        return kgx.compiled(domain, FOLDER)


BACKEND = KgxBackend()

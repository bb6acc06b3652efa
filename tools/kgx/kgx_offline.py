"""Run the `kgx` command line offline, against the Biolink Model of the pinned wheel.

KGX (2.7.0) cannot start without the network: importing it builds a `bmt.Toolkit`, whose
default schema is https://raw.githubusercontent.com/biolink/biolink-model/.../biolink-model.yaml
and which also downloads a predicate mapping, and `kgx validate` downloads the Biolink JSON-LD
context (kgx/config.yml) to learn which CURIE prefixes exist. This wrapper, run with the
interpreter of .venv-kgx, replaces exactly those three downloads before kgx is imported:

- the Toolkit reads the Biolink Model YAML given with --biolink-model (the file the compiler
  checks against: biolink_model/schema/biolink_model.yaml of biolink-model 4.4.6 in .venv);
- the predicate mapping is empty (only used for mapping non-Biolink predicates);
- the JSON-LD context is the Biolink Model's own prefix map from the same wheel
  (biolink_model/prefixmaps/biolink-model-prefix-map.json, given with --prefix-map),
  extended by the prefixes of --extra-prefixes (a JSON object), which is how an export
  declares its own namespace (e.g. kgbench.cardio) instead of registering it in Biolink.

Everything after the wrapper's own options is passed to kgx unchanged, e.g.

    .venv-kgx/bin/python tools/kgx/kgx_offline.py \\
        --biolink-model .venv/lib/python3.11/site-packages/biolink_model/schema/biolink_model.yaml \\
        --prefix-map .venv/lib/python3.11/site-packages/biolink_model/prefixmaps/biolink-model-prefix-map.json \\
        --extra-prefixes runs/export/cardio/kgx/prefixes.json \\
        validate -i tsv runs/export/cardio/kgx/cardio_nodes.tsv runs/export/cardio/kgx/cardio_edges.tsv

The process exits 1 when kgx reports any error (kgx itself exits 0 either way).

`--key-by-id` keys the edges of KGX's in-memory graph by their `id` instead of
subject-predicate-object (see `_key_edges_by_id`): it is a patch of KGX, not KGX, and exists
to show what the export loses only because of that keying.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from pathlib import Path


def _no_network(*_args: object, **_kwargs: object) -> None:
    raise OSError("kgx_offline: network access is disabled (everything must come from files)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kgx_offline", add_help=True)
    parser.add_argument("--biolink-model", required=True, type=Path)
    parser.add_argument("--prefix-map", required=True, type=Path)
    parser.add_argument("--extra-prefixes", type=Path)
    parser.add_argument("--report", type=Path, help="also write kgx's JSON report here")
    parser.add_argument(
        "--key-by-id",
        action="store_true",
        help="key the in-memory graph's edges by their `id` (the fix biolink/kgx#413 asks for)",
    )
    ours, rest = parser.parse_known_args(argv)

    # Any attempt to reach the network is an error, not a silent hang on a missing resolver.
    socket.socket.connect = _no_network  # type: ignore[method-assign]
    socket.create_connection = _no_network  # type: ignore[assignment]

    from bmt import toolkit as bmt_toolkit
    from linkml_runtime.utils.schemaview import SchemaView

    schema_path = str(ours.biolink_model.resolve())

    def offline_init(self, schema=schema_path, predicate_map=None) -> None:
        self.view = SchemaView(schema)
        self.pmap = {}

    bmt_toolkit.Toolkit.__init__ = offline_init  # type: ignore[method-assign]

    import kgx.config as kgx_config

    context = {k: v for k, v in json.loads(ours.prefix_map.read_text()).items() if v}
    if ours.extra_prefixes:
        context.update(json.loads(ours.extra_prefixes.read_text()))
    kgx_config.jsonld_context_map["biolink"] = context
    kgx_config.jsonld_context_map["monarch_context"] = {}
    kgx_config.jsonld_context_map["obo_context"] = {}

    if ours.key_by_id:
        _key_edges_by_id()

    from kgx.cli import cli_utils

    errors = {}
    if rest and rest[0] == "validate":
        # the same code path as `kgx validate`, with the report kept for the exit status
        args = argparse.ArgumentParser(prog="kgx validate")
        args.add_argument("inputs", nargs="+")
        args.add_argument("-i", "--input-format", required=True)
        args.add_argument("-c", "--input-compression")
        args.add_argument("-o", "--output")
        opts = args.parse_args(rest[1:])
        errors = cli_utils.validate(
            opts.inputs, opts.input_format, opts.input_compression, opts.output
        )
        if ours.report:
            ours.report.write_text(json.dumps(errors, indent=2, sort_keys=True) + "\n")
        return 1 if errors.get("ERROR") else 0
    from kgx.cli import cli

    sys.argv = ["kgx", *rest]
    return cli(standalone_mode=False) or 0


def _key_edges_by_id() -> None:
    """Key each edge of KGX's in-memory graph by its `id`, not by subject-predicate-object.

    KGX 2.7.0's GraphSink.write_edge keys a networkx multigraph edge by the record's `key`
    or else by "subject-predicate-object" (kgx/sink/graph_sink.py), so two claims with the
    same Biolink predicate between the same nodes (the same drug preventing the same event in
    two populations, which differ only in `population_context_qualifier`) become one edge,
    the later overwriting the earlier. An export cannot ask for another key: a `key` column
    is passed to networkx twice (`add_edge(s, o, key, **record)` with `key` in the record)
    and the transform fails. This replaces that one method by what biolink/kgx#413 asks
    for, the edge's own `id` as its key (s-p-o when it has none); nothing else changes."""
    from kgx.sink.graph_sink import GraphSink
    from kgx.utils.kgx_utils import generate_edge_key

    def write_edge(self, record):  # type: ignore[no-untyped-def]
        key = record.get("id") or generate_edge_key(
            record["subject"], record["predicate"], record["object"]
        )
        self.graph.add_edge(record["subject"], record["object"], key, **record)

    GraphSink.write_edge = write_edge  # type: ignore[method-assign]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

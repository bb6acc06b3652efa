"""KGX's round trip of a domain's export, TSV -> JSON Lines -> TSV, in memory or streamed.

`kgx transform` without `--stream` loads the graph into a networkx multigraph keyed by
"subject-predicate-object" (kgx/utils/kgx_utils.py generate_edge_key; `kgx merge` and
KG-Hub-style pipelines build graphs the same way, biolink/kgx#413). Two claims that share
subject, Biolink predicate and object become one edge there, the later one's properties
overwriting the earlier's. (KGX's graph sink would honour a `key` property, but KGX 2.7.0 then
passes `key` twice to networkx and the transform fails, so an export cannot carry one.)

This tool runs the transform offline (kgx_offline.py in .venv-kgx) and compares the edges that
come back with the ones that went in:

- lost: an exported edge id absent from the output;
- changed: an output edge whose meaning fields (MEANING) differ from the exported edge of the
  same id (another claim's properties were written over it);
- meaning_fused: a lost edge whose surviving s-p-o partner says something else than it does
  (another predicate, sign, kgbench predicate or causal status: a null result or an opposite
  sign swallowed by a positive edge), as opposed to one that differs only in its population.

    .venv/bin/python tools/kgx/roundtrip.py --domain cardio [--stream]

Exit status 0 when nothing is lost, changed or meaning-fused, 1 otherwise.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script, too
from tools.kgx.validate import KGX_PYTHON, WRAPPER, biolink_files

# The fields that say what a claim means; an edge that changes one of them was fused.
MEANING = (
    "subject",
    "predicate",
    "object",
    "kgbench_predicate",
    "direction",
    "causal_status",
    "negated",
    "qualified_predicate",
    "object_aspect_qualifier",
    "object_direction_qualifier",
    "response_context_qualifier",
    "population_context_qualifier",
)
# What a claim says apart from the population it is restricted to.
CLAIM = tuple(f for f in MEANING if f != "population_context_qualifier")


def _kgx(args: list[str], folder: Path, timeout: int, key_by_id: bool = False) -> None:
    model, prefix_map = biolink_files()
    cmd = [
        str(KGX_PYTHON),
        str(WRAPPER),
        "--biolink-model",
        str(model),
        "--prefix-map",
        str(prefix_map),
        "--extra-prefixes",
        str(folder / "prefixes.json"),
        *(["--key-by-id"] if key_by_id else []),
        *args,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"kgx {' '.join(args[:1])} failed:\n{done.stdout}\n{done.stderr}")


def edges_of(path: Path) -> tuple[dict[str, dict[str, str]], int]:
    """Edge id -> its record, and the number of rows, from a KGX edges TSV."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        out.setdefault(row["id"], row)
    return out, len(rows)


def roundtrip(
    folder: Path, stem: str, stream: bool = False, timeout: int = 600, key_by_id: bool = False
) -> dict:
    """Run TSV -> JSONL -> TSV; the edges in and out, and the lost, changed and fused ids
    (`key_by_id`: with KGX's in-memory graph keyed by edge id, kgx_offline.py --key-by-id)."""
    flags = ["--stream"] if stream else []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        first = [str(folder / f"{stem}_nodes.tsv"), str(folder / f"{stem}_edges.tsv")]
        _kgx(
            ["transform", *flags, "-i", "tsv", "-f", "jsonl", "-o", str(work / "pass1"), *first],
            folder,
            timeout,
            key_by_id,
        )
        second = [str(work / "pass1_nodes.jsonl"), str(work / "pass1_edges.jsonl")]
        _kgx(
            ["transform", *flags, "-i", "jsonl", "-f", "tsv", "-o", str(work / "pass2"), *second],
            folder,
            timeout,
            key_by_id,
        )
        before, rows_in = edges_of(folder / f"{stem}_edges.tsv")
        after, rows_out = edges_of(work / "pass2_edges.tsv")
    # A streamed transform writes only KGX's core edge columns; compare what came back.
    kept_columns = set().union(*(e.keys() for e in after.values())) if after else set()
    compared = [f for f in MEANING if f in kept_columns]
    lost = sorted(set(before) - set(after))
    changed = sorted(
        eid
        for eid in set(before) & set(after)
        if any(_field(before[eid], f) != _field(after[eid], f) for f in compared)
    )
    survivor = {(e["subject"], e["predicate"], e["object"]): e for e in after.values()}
    meaning_fused = sorted(
        eid
        for eid in lost
        if (kept := survivor.get(spo_of(before[eid])))
        and any(_field(before[eid], f) != _field(kept, f) for f in CLAIM if f in compared)
    )
    return {
        "edges_in": rows_in,
        "edges_out": rows_out,
        "lost": lost,
        "changed": changed,
        "meaning_fused": meaning_fused,
        "columns_dropped": sorted(f for f in MEANING if f not in kept_columns),
    }


def spo_of(edge: dict[str, str]) -> tuple[str, str, str]:
    return edge["subject"], edge["predicate"], edge["object"]


def _field(edge: dict[str, str], name: str) -> str:
    """A field as text; KGX writes booleans as True/False and an absent one as empty."""
    value = edge.get(name) or ""
    return value.lower() if value in ("True", "False") else value


def main() -> int:
    parser = argparse.ArgumentParser(prog="tools/kgx/roundtrip.py")
    parser.add_argument("--domain", required=True)
    parser.add_argument("--stream", action="store_true", help="kgx transform --stream")
    parser.add_argument(
        "--key-by-id",
        action="store_true",
        help="key KGX's in-memory edges by id (the biolink/kgx#413 fix; a patch of KGX 2.7.0)",
    )
    args = parser.parse_args()
    from compiler.export import export_domain

    result = export_domain(args.domain, "kgx")
    report = roundtrip(result.out_dir, result.domain, stream=args.stream, key_by_id=args.key_by_id)
    mode = "streamed" if args.stream else "in memory"
    if args.key_by_id:
        mode += ", edges keyed by id"
    print(
        f"kgx transform ({mode}, tsv -> jsonl -> tsv) {result.domain}: "
        f"{report['edges_in']} edges in, {report['edges_out']} out; "
        f"{len(report['lost'])} ids lost ({len(report['meaning_fused'])} of them fused with a "
        f"claim that says something else), {len(report['changed'])} changed"
    )
    if report["columns_dropped"]:
        print(f"  columns kgx did not write back: {' '.join(report['columns_dropped'])}")
    for kind in ("lost", "meaning_fused", "changed"):
        if report[kind]:
            print(f"  {kind}: {' '.join(report[kind])}")
    return int(bool(report["lost"] or report["changed"] or report["meaning_fused"]))


if __name__ == "__main__":
    sys.exit(main())

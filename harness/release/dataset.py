"""A gold release as a dataset evaluators load: Parquet tables, a Hugging Face dataset card
and Croissant metadata, written from a verified release folder.

    <out>/README.md                       the dataset card (YAML front matter in the Hugging
                                          Face format: licence, task categories, size, configs,
                                          the release digest; the citation in the body)
    <out>/croissant.json                  Croissant 1.0 metadata (mlcommons.org/croissant)
    <out>/data/scenarios/test.parquet     one row per scenario, with its gold
    <out>/data/<table>/graph.parquet      the graph's tables (entities, assertions,
                                          evidence_sources, supports, intervention_classes),
                                          when the compiled domain is the release's version

It is a derived view, not part of the release: the release folder (JSONL, schemas, manifest)
stays the record whose hashes are pinned, and this view can be rebuilt from it at any time
(`kgbench dataset`). Its default place is generated/<domain>/datasets/<version>/, beside
gold/, preserved across compiles.

A scenario row carries the columns a user filters on (category, domain version, review
coverage by reviewer role, the gold ids) and the whole scenario and gold records as canonical
JSON (`scenario`, `gold`), so nothing of the JSONL is lost to Arrow's need for one type per
column: `json.loads(row["scenario"])` is the JSONL record.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgbench.errors import UserError
from kgbench.io import canonical_json, replace_folder, sha256_bytes
from kgbench.untrusted import csv_reader, read_text

from .index import release_digest
from .verify import Release, read_release

CARD = "README.md"
CROISSANT = "croissant.json"
SCENARIO_SPLIT = "test"
GRAPH_SPLIT = "graph"
GRAPH_TABLES = ("entities", "assertions", "evidence_sources", "supports", "intervention_classes")
GOLD_ID_LISTS = (
    "acceptable_interventions",
    "causal_path_assertion_ids",
    "adverse_effect_assertion_ids",
    "contraindication_assertion_ids",
    "evidence_source_ids",
)
DEFAULT_ROLE = "author"  # a review row without a `role` column was written by the item's author

# SPDX id -> (Hugging Face licence id, licence URL)
LICENSES = {
    "CC-BY-4.0": ("cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/"),
    "CC-BY-SA-4.0": ("cc-by-sa-4.0", "https://creativecommons.org/licenses/by-sa/4.0/"),
    "CC-BY-NC-4.0": ("cc-by-nc-4.0", "https://creativecommons.org/licenses/by-nc/4.0/"),
    "CC0-1.0": ("cc0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
    "ODC-By-1.0": ("odc-by", "https://opendatacommons.org/licenses/by/1-0/"),
    "ODbL-1.0": ("odbl", "https://opendatacommons.org/licenses/odbl/1-0/"),
    "PDDL-1.0": ("pddl", "https://opendatacommons.org/licenses/pddl/1-0/"),
    "CDLA-Permissive-2.0": ("cdla-permissive-2.0", "https://cdla.dev/permissive-2-0/"),
    "Apache-2.0": ("apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0"),
    "MIT": ("mit", "https://opensource.org/license/mit"),
}

PAPER_TITLE = (
    "Grounding Healthcare LLMs in a Causal Knowledge Graph: Framework, Metrics, and a "
    "Cardiovascular Pilot"
)
PAPER_AUTHORS = "Mumtaz, Ummara and Noor, Aimen and Ahmed, Awais"
CITATION = (
    "@misc{mumtaz_grounding_healthcare_llms,\n"
    f"  title = {{{PAPER_TITLE}}},\n"
    f"  author = {{{PAPER_AUTHORS}}},\n"
    "  note = {Benchmark compiled and released with kgbench}\n"
    "}"
)


@dataclass(frozen=True)
class DatasetResult:
    out_dir: Path
    rows: dict[str, int]  # table -> rows written
    graph_note: str  # why the graph tables are absent, or ""


# --- the tables -----------------------------------------------------------------------------


def review_roles(
    reviews: Path | None, records: list[dict[str, Any]]
) -> dict[str, dict[str, list[str]]]:
    """scenario id -> {"accept": [roles], "dispute": [roles]} for the item version released.

    Read defensively from the reviews CSV: a row counts only for the exact item version it
    names (`content_sha256`, as harness.review.verdicts keys it); its role is the `role`
    column where the file has one, else "author". Anything else in the file is left to
    `kgbench review`, which owns its validation.
    """
    from harness.review.verdicts import content_sha256

    out: dict[str, dict[str, list[str]]] = {
        r["scenario_id"]: {"accept": [], "dispute": []} for r in records
    }
    if reviews is None or not reviews.is_file():
        return out
    current = {r["scenario_id"]: content_sha256(r) for r in records}
    # Through the one reader of untrusted text: a damaged file (not UTF-8, NUL, a malformed
    # row) is a UserError naming the file and line, not a traceback.
    reader = csv_reader(read_text(reviews, "reviews CSV"), str(reviews))
    header = [h.strip() for h in next(reader, [])]
    for cells in reader:
        row = dict(zip(header, cells, strict=False))
        sid = (row.get("scenario_id") or "").strip()
        verdict = (row.get("verdict") or "").strip()
        if sid not in current or (row.get("content_sha256") or "").strip() != current[sid]:
            continue
        if verdict in out[sid]:
            role = (row.get("role") or "").strip() or DEFAULT_ROLE
            if role not in out[sid][verdict]:
                out[sid][verdict].append(role)
    for entry in out.values():
        entry["accept"].sort()
        entry["dispute"].sort()
    return out


def scenario_rows(release: Release, roles: dict[str, dict[str, list[str]]]) -> list[dict[str, Any]]:
    """One row per scenario: filter columns, then the scenario and gold records whole."""
    manifest = release.manifest
    rows = []
    for record in release.scenarios:
        sid = record["scenario_id"]
        gold = record.get("gold") or {}
        patient = record.get("patient") or {}
        rows.append(
            {
                "scenario_id": sid,
                "category": record.get("category"),
                "domain": manifest.get("domain"),
                "domain_version": manifest.get("domain_version"),
                "release_version": manifest.get("release_version"),
                "schema_version": record.get("schema_version"),
                "decision_target": record.get("decision_target"),
                "narrative": patient.get("narrative"),
                "candidate_ids": [c.get("intervention_id") for c in record.get("candidates", [])],
                "candidate_labels": [c.get("label") for c in record.get("candidates", [])],
                "preferred_intervention": gold.get("preferred_intervention"),
                **{name: list(gold.get(name) or []) for name in GOLD_ID_LISTS},
                "expects_uncertainty": gold.get("expects_uncertainty"),
                "review_accepted_by": roles[sid]["accept"],
                "review_disputed_by": roles[sid]["dispute"],
                "scenario": canonical_json(record),
                "gold": canonical_json(release.gold.get(sid)),
            }
        )
    return rows


def _scenario_schema() -> Any:
    import pyarrow as pa

    text, strings = pa.string(), pa.list_(pa.string())
    fields = [
        ("scenario_id", text),
        ("category", text),
        ("domain", text),
        ("domain_version", text),
        ("release_version", text),
        ("schema_version", text),
        ("decision_target", text),
        ("narrative", text),
        ("candidate_ids", strings),
        ("candidate_labels", strings),
        ("preferred_intervention", text),
        *((name, strings) for name in GOLD_ID_LISTS),
        ("expects_uncertainty", pa.bool_()),
        ("review_accepted_by", strings),
        ("review_disputed_by", strings),
        ("scenario", text),
        ("gold", text),
    ]
    return pa.schema(fields)


def _graph_table(records: list[dict[str, Any]]) -> Any:
    """A graph table; a column with no value anywhere is typed string, not Arrow's null."""
    import pyarrow as pa

    table = pa.Table.from_pylist(records)
    for i, column in enumerate(table.schema):
        if pa.types.is_null(column.type):
            table = table.set_column(i, column.name, table.column(i).cast(pa.string()))
    return table


def _parquet_bytes(table: Any) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", write_statistics=False)
    return sink.getvalue()


# --- card and Croissant ---------------------------------------------------------------------


def _size_category(n: int) -> str:
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < bound:
            return label
    return "100K<n<1M"


def _yaml(data: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def dataset_card(release: Release, spdx: str, rows: dict[str, int], digest: str, note: str) -> str:
    """README.md of a release: Hugging Face's YAML front matter (licence, configs, kgbench's
    identity of the release), then the card a reader sees."""
    front = _front_matter(release.manifest, spdx, rows, digest)
    return "---\n" + _yaml(front) + "---\n" + _card_body(release.manifest, spdx, rows, digest, note)


def _front_matter(
    manifest: dict[str, Any], spdx: str, rows: dict[str, int], digest: str
) -> dict[str, Any]:
    """The card's metadata: one `datasets` config per table the release has (scenarios the
    default), and the release's identity under `kgbench`."""
    hf_license = LICENSES.get(spdx, ("unknown", ""))[0]
    domain, version = manifest.get("domain"), manifest.get("release_version")
    configs = [
        {
            "config_name": "scenarios",
            "default": True,
            "data_files": [
                {"split": SCENARIO_SPLIT, "path": f"data/scenarios/{SCENARIO_SPLIT}.parquet"}
            ],
        },
        *(
            {
                "config_name": table,
                "data_files": [
                    {"split": GRAPH_SPLIT, "path": f"data/{table}/{GRAPH_SPLIT}.parquet"}
                ],
            }
            for table in GRAPH_TABLES
            if table in rows
        ),
    ]
    return {
        "license": hf_license,
        "language": ["en"],
        "pretty_name": f"kgbench {domain} gold release {version}",
        "task_categories": ["question-answering", "text-generation"],
        "tags": ["medical", "clinical", "knowledge-graph", "causal-reasoning", "benchmark"],
        "size_categories": [_size_category(rows["scenarios"])],
        "configs": configs,
        "kgbench": {
            "domain": domain,
            "domain_version": manifest.get("domain_version"),
            "release_version": version,
            "release_digest": digest,
            "content_sha256": manifest.get("content_sha256"),
            "data_license": spdx,
            "scenario_schema_version": manifest.get("scenario_schema_version"),
        },
    }


def _card_body(
    manifest: dict[str, Any], spdx: str, rows: dict[str, int], digest: str, note: str
) -> str:
    """The card's text: what the release holds, its tables, how to load and score it."""
    domain, version = manifest.get("domain"), manifest.get("release_version")
    review = manifest.get("review") or {}
    per_category = manifest.get("counts", {}).get("per_category", {})
    tables = "\n".join(
        f"| `{name}` | {count} | `{path}` |"
        for name, count, path in (
            (t, rows[t], p)
            for t, p in [
                ("scenarios", f"data/scenarios/{SCENARIO_SPLIT}.parquet"),
                *((t, f"data/{t}/{GRAPH_SPLIT}.parquet") for t in GRAPH_TABLES),
            ]
            if t in rows
        )
    )
    return (
        f"""
# kgbench {domain} gold release {version}

Scenario-conditioned clinical intervention questions with graph-anchored gold answers, from
the kgbench `{domain}` domain (version {manifest.get("domain_version")}): each scenario has a
patient vignette, a decision target, candidate interventions and a gold answer given as
assertion and evidence ids of the domain's causal knowledge graph. The benchmark implements
the framework of "{PAPER_TITLE}".

- Release {version}, digest `{digest}` (sha256 of the release manifest; verify the release
  folder with `kgbench verify-release`), content sha256 `{manifest.get("content_sha256")}`.
- Data licence: {spdx}. The kgbench code is Apache-2.0.
- {rows["scenarios"]} scenarios, {len(per_category)} categories: """
        + ", ".join(f"{k} {v}" for k, v in sorted(per_category.items()))
        + f""".
- Clinical review: {review.get("accepted", "no")} accepted, {review.get("disputed", 0)} disputed,
  {review.get("unreviewed", "?")} unreviewed (per item: `review_accepted_by` and
  `review_disputed_by`, the reviewer roles).

## Tables

| config | rows | file |
|---|---|---|
{tables}

{note}

Columns of `scenarios`: the filters (`category`, `domain_version`, `release_version`,
`review_accepted_by`, the gold id lists, `expects_uncertainty`) and the whole records as
canonical JSON: `scenario` (the line of scenarios.jsonl) and `gold` (the line of gold.jsonl).

```python
from datasets import load_dataset
ds = load_dataset("path/to/this/folder", "scenarios", split="test")
```

Score answers with `kgbench score` or `kgbench.scoring.open_panel` (same scorer, same ids).

## Citation

```bibtex
{CITATION}
```
"""
    )


def _croissant_type(arrow_type: Any) -> tuple[str, bool]:
    """Croissant dataType of an Arrow column and whether it repeats (a list)."""
    import pyarrow as pa

    repeated = pa.types.is_list(arrow_type)
    inner = arrow_type.value_type if repeated else arrow_type
    if pa.types.is_boolean(inner):
        return "sc:Boolean", repeated
    if pa.types.is_integer(inner):
        return "sc:Integer", repeated
    if pa.types.is_floating(inner):
        return "sc:Float", repeated
    return "sc:Text", repeated


CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "equivalentProperty": "cr:equivalentProperty",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def croissant(
    release: Release, spdx: str, files: dict[str, bytes], tables: dict[str, Any], digest: str
) -> dict[str, Any]:
    """Croissant 1.0 JSON-LD: one FileObject and one RecordSet per Parquet table."""
    manifest = release.manifest
    distribution: list[dict[str, Any]] = []
    record_sets: list[dict[str, Any]] = []
    for name, table in tables.items():
        rel = next(p for p in files if p.startswith(f"data/{name}/"))
        file_id = f"{name}-parquet"
        distribution.append(
            {
                "@type": "cr:FileObject",
                "@id": file_id,
                "name": file_id,
                "contentUrl": rel,
                "encodingFormat": "application/x-parquet",
                "sha256": sha256_bytes(files[rel]),
            }
        )
        fields = []
        for column in table.schema:
            data_type, repeated = _croissant_type(column.type)
            field: dict[str, Any] = {
                "@type": "cr:Field",
                "@id": f"{name}/{column.name}",
                "name": f"{name}/{column.name}",
                "dataType": data_type,
                "source": {"fileObject": {"@id": file_id}, "extract": {"column": column.name}},
            }
            if repeated:
                field["repeated"] = True
            fields.append(field)
        record_sets.append({"@type": "cr:RecordSet", "@id": name, "name": name, "field": fields})
    domain, version = manifest.get("domain"), manifest.get("release_version")
    return {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": f"kgbench-{domain}-{version}",
        "description": (
            f"kgbench {domain} gold release {version}: clinical intervention scenarios with "
            "gold answers anchored on the assertion and evidence ids of a causal knowledge "
            f"graph, and the graph's tables. Release digest {digest}."
        ),
        "license": LICENSES.get(spdx, ("", spdx))[1] or spdx,
        "url": "https://arxiv.org/abs/2608.15382v1",
        "version": version,
        "datePublished": str(manifest.get("created_at") or "")[:10] or None,
        "citeAs": CITATION,
        "keywords": ["medical", "knowledge graph", "causal reasoning", "LLM evaluation"],
        "distribution": distribution,
        "recordSet": record_sets,
    }


# --- writing --------------------------------------------------------------------------------


def default_out_dir(release_dir: Path) -> Path:
    """generated/<domain>/datasets/<version>/ for generated/<domain>/gold/<version>/."""
    release_dir = Path(release_dir)
    return release_dir.parent.parent / "datasets" / release_dir.name


def data_license(release: Release, compiled_root: Path | None) -> str:
    """The release manifest's data licence; for a release published before manifests carried
    one, the licence its domain declares (compiled manifest of the same domain), else
    "unknown"."""
    from kgbench.untrusted import load_json_object

    declared = release.manifest.get("data_license")
    if declared and declared != "unknown":
        return str(declared)
    manifest = compiled_root / "manifest.json" if compiled_root is not None else None
    if manifest is not None and manifest.is_file():
        compiled = load_json_object(manifest, "compiled manifest", max_depth=None)
        if compiled.get("domain") == release.manifest.get("domain") and compiled.get(
            "data_license"
        ):
            return str(compiled["data_license"])
    return "unknown"


def _graph(release: Release, compiled_root: Path | None) -> tuple[dict[str, list], str]:
    """The compiled graph's tables when the compile is the release's domain version."""
    from kgbench.untrusted import load_json_object

    if compiled_root is None or not (compiled_root / "kg.json").is_file():
        return {}, "The graph's tables are not included: no compiled domain was given."
    kg = load_json_object(compiled_root / "kg.json", "compiled graph", max_depth=None)
    wanted = release.manifest.get("domain_version")
    if kg.get("domain") != release.manifest.get("domain") or kg.get("domain_version") != wanted:
        return {}, (
            f"The graph's tables are not included: the compiled domain is "
            f"{kg.get('domain')} {kg.get('domain_version')}, the release was made from "
            f"{release.manifest.get('domain')} {wanted}."
        )
    return {t: list(kg.get(t) or []) for t in GRAPH_TABLES}, ""


def write_dataset(
    release_dir: Path,
    out_dir: Path | None = None,
    reviews: Path | None = None,
    compiled_root: Path | None = None,
) -> DatasetResult:
    """Write the dataset view of a verified release (replacing `out_dir` whole)."""
    import pyarrow as pa

    release_dir = Path(release_dir)
    release = read_release(release_dir)  # verified: a tampered release is refused here
    digest = release_digest(release_dir)
    out = Path(out_dir) if out_dir is not None else default_out_dir(release_dir)
    if out.resolve() == release_dir.resolve() or release_dir.resolve() in out.resolve().parents:
        raise UserError(f"{out}: the dataset goes beside the release, not inside it")
    rows = scenario_rows(release, review_roles(reviews, release.scenarios))
    tables: dict[str, Any] = {"scenarios": pa.Table.from_pylist(rows, schema=_scenario_schema())}
    graph, note = _graph(release, compiled_root)
    for name, records in graph.items():
        tables[name] = _graph_table(records)
    files: dict[str, bytes] = {
        f"data/scenarios/{SCENARIO_SPLIT}.parquet": _parquet_bytes(tables["scenarios"])
    }
    for name in graph:
        files[f"data/{name}/{GRAPH_SPLIT}.parquet"] = _parquet_bytes(tables[name])
    counts = {name: table.num_rows for name, table in tables.items()}
    spdx = data_license(release, compiled_root)
    card = dataset_card(release, spdx, counts, digest, note)
    meta = croissant(release, spdx, files, tables, digest)
    import json

    replace_folder(
        out,
        {
            **files,
            CARD: card.encode("utf-8"),
            CROISSANT: (json.dumps(meta, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
        },
    )
    return DatasetResult(out, counts, note)

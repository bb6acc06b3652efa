"""A gold release as a dataset (issue 31, item 1): Parquet tables that `datasets` loads from
the local folder record for record equal to the JSONL, a Hugging Face dataset card, Croissant
metadata that `mlcroissant` validates offline, and per-item review coverage by role."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything below reads local files only
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from harness.release.dataset import GOLD_ID_LISTS, GRAPH_TABLES, write_dataset
from harness.release.index import release_digest
from harness.release.publish import publish_release
from harness.release.verify import verify_release
from harness.review.verdicts import content_sha256
from kgbench.errors import UserError
from kgbench.io import jsonl_bytes


@pytest.fixture
def published(compiled_copy, cardio_scenarios, tmp_path: Path):
    compiled = compiled_copy("cardio")
    path = compiled.root / "scenarios" / "scenarios.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl_bytes(cardio_scenarios))
    result = publish_release(compiled, "1.0.0")
    return compiled, result.path


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def reviews_with_roles(tmp_path: Path, records: list[dict]) -> Path:
    """Two roles on the first item, the author alone (no role column value) on the second,
    a stale row (another version of the item) on the third."""
    first, second, third = records[:3]
    rows = [
        "scenario_id,content_sha256,verdict,reviewer,date,note,role",
        f"{first['scenario_id']},{content_sha256(first)},accept,A,2026-12-01,,author",
        f"{first['scenario_id']},{content_sha256(first)},accept,B,2026-12-02,,clinician",
        f"{second['scenario_id']},{content_sha256(second)},accept,A,2026-12-01,,",
        f"{third['scenario_id']},{'0' * 64},accept,A,2026-12-01,,clinician",
    ]
    path = tmp_path / "reviews.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_the_release_loads_with_datasets_record_for_record(published, tmp_path):
    import datasets

    compiled, release = published
    scenarios = jsonl(release / "scenarios.jsonl")
    gold = {g["scenario_id"]: g for g in jsonl(release / "gold.jsonl")}
    reviews = reviews_with_roles(tmp_path, scenarios)
    result = write_dataset(release, tmp_path / "ds", reviews, compiled.root)
    assert result.graph_note == ""
    assert result.out_dir == tmp_path / "ds"
    cache = str(tmp_path / "hf-cache")

    loaded = datasets.load_dataset(str(result.out_dir), "scenarios", split="test", cache_dir=cache)
    assert loaded.num_rows == len(scenarios) >= 20
    manifest = json.loads((release / "manifest.json").read_text())
    for row, record in zip(loaded, scenarios, strict=True):
        assert json.loads(row["scenario"]) == record  # the whole JSONL record, nothing lost
        assert json.loads(row["gold"]) == gold[record["scenario_id"]]
        assert row["scenario_id"] == record["scenario_id"]
        assert row["category"] == record["category"]
        assert row["domain_version"] == manifest["domain_version"]
        assert row["release_version"] == "1.0.0"
        assert row["candidate_ids"] == [c["intervention_id"] for c in record["candidates"]]
        assert row["preferred_intervention"] == record["gold"]["preferred_intervention"]
        assert row["expects_uncertainty"] == record["gold"]["expects_uncertainty"]
        for name in GOLD_ID_LISTS:
            assert row[name] == record["gold"].get(name, [])
    roles = {row["scenario_id"]: row["review_accepted_by"] for row in loaded}
    assert roles[scenarios[0]["scenario_id"]] == ["author", "clinician"]
    assert roles[scenarios[1]["scenario_id"]] == ["author"]  # no role given: the author
    assert roles[scenarios[2]["scenario_id"]] == []  # a verdict on another version counts not
    assert sum(1 for r in roles.values() if r) == 2

    kg = json.loads((compiled.root / "kg.json").read_text())
    for table in GRAPH_TABLES:
        graph = datasets.load_dataset(str(result.out_dir), table, split="graph", cache_dir=cache)
        assert list(graph) == kg[table], table
    # the release itself is untouched and still verifies
    assert verify_release(release) == []


def test_the_dataset_card_is_hugging_face_front_matter_with_licence_and_digest(published, tmp_path):
    from huggingface_hub import DatasetCard

    compiled, release = published
    out = write_dataset(release, tmp_path / "ds", None, compiled.root).out_dir
    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-4.0"
    assert data["task_categories"] == ["question-answering", "text-generation"]
    assert data["size_categories"] == ["n<1K"]
    assert data["kgbench"]["release_digest"] == release_digest(release)
    assert data["kgbench"]["data_license"] == "CC-BY-4.0"
    configs = {c["config_name"]: c for c in data["configs"]}
    assert set(configs) == {"scenarios", *GRAPH_TABLES} and configs["scenarios"]["default"]
    assert "## Citation" in card.text and "Grounding Healthcare LLMs" in card.text
    assert "doi" not in card.content.lower()
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["data_license"] == "CC-BY-4.0"  # the release manifest carries it too


def test_croissant_metadata_validates_offline_and_reads_the_same_records(published, tmp_path):
    import mlcroissant as mlc

    compiled, release = published
    out = write_dataset(release, tmp_path / "ds", None, compiled.root).out_dir
    dataset = mlc.Dataset(jsonld=out / "croissant.json")
    issues = dataset.metadata.ctx.issues
    assert not issues.errors and not issues.warnings, (issues.errors, issues.warnings)
    ids = [r["scenarios/scenario_id"].decode() for r in dataset.records("scenarios")]
    assert ids == [r["scenario_id"] for r in jsonl(release / "scenarios.jsonl")]
    assert sum(1 for _ in dataset.records("assertions")) == len(
        json.loads((compiled.root / "kg.json").read_text())["assertions"]
    )
    meta = json.loads((out / "croissant.json").read_text())
    assert meta["license"] == "https://creativecommons.org/licenses/by/4.0/"


def test_a_tampered_release_is_not_exported_and_a_foreign_compile_adds_no_graph(
    published, tmp_path
):
    compiled, release = published
    kg = json.loads((compiled.root / "kg.json").read_text())
    other = tmp_path / "other"
    other.mkdir()
    (other / "kg.json").write_text(json.dumps({**kg, "domain_version": "9.9.9"}))
    result = write_dataset(release, tmp_path / "ds", None, other)
    assert set(result.rows) == {"scenarios"} and "9.9.9" in result.graph_note
    lines = (release / "gold.jsonl").read_text().splitlines()
    (release / "gold.jsonl").write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(UserError, match=r"gold\.jsonl"):
        write_dataset(release, tmp_path / "ds2", None, compiled.root)
    assert not (tmp_path / "ds2").exists()


def test_publish_writes_the_dataset_beside_the_release_and_compiles_keep_it(
    cli, compiled_copy, cardio_scenarios, tmp_path
):
    from typer.testing import CliRunner

    from compiler.api import PRESERVED

    compiled = compiled_copy("cardio")
    path = compiled.root / "scenarios" / "scenarios.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl_bytes(cardio_scenarios))
    empty = tmp_path / "reviews.csv"
    empty.write_text("scenario_id,content_sha256,verdict,reviewer,date,note\n")
    args = [
        "publish",
        "--domain",
        str(compiled.root),
        "--release",
        "1.0.0",
        "--reviews",
        str(empty),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    dataset = compiled.root / "datasets" / "1.0.0"
    assert (dataset / "README.md").is_file() and (dataset / "croissant.json").is_file()
    parquet = dataset / "data" / "scenarios" / "test.parquet"
    again = CliRunner().invoke(
        cli,
        [
            "dataset",
            str(compiled.root / "gold" / "1.0.0"),
            "--out",
            str(tmp_path / "again"),
            "--reviews",
            str(empty),
        ],
    )
    assert again.exit_code == 0, again.output
    rebuilt = tmp_path / "again" / "data" / "scenarios" / "test.parquet"
    assert rebuilt.read_bytes() == parquet.read_bytes()  # deterministic bytes
    assert "datasets" in PRESERVED  # a compile keeps generated/<domain>/datasets/


def _committed_releases() -> list[tuple[str, Path]]:
    """(domain, newest release folder) for every domain with published gold in generated/."""
    from harness.gold_layout import releases

    repo = Path(__file__).resolve().parents[2]
    found = []
    for gold in sorted((repo / "generated").glob("*/gold")):
        published = releases(gold)
        if published:
            found.append((gold.parent.name, published[max(published)]))
    return found


@pytest.mark.parametrize(
    ("domain", "release"), _committed_releases(), ids=[d for d, _ in _committed_releases()]
)
def test_every_domains_newest_release_ships_its_dataset_record_for_record(domain, release):
    """The committed dataset of the newest release is that release: same digest on the card,
    the same scenarios and gold row for row, and the release still verifies. A release
    published without its dataset (or a dataset left behind by a new release) fails here,
    naming the command that writes it."""
    import pyarrow.parquet as pq
    from huggingface_hub import DatasetCard

    from harness.release.dataset import default_out_dir

    out = default_out_dir(release)
    assert out.is_dir(), f"no dataset for {release}: run `kgbench dataset {release}`"
    card = DatasetCard.load(out / "README.md").data.to_dict()
    assert card["kgbench"]["release_digest"] == release_digest(release)
    rows = pq.read_table(out / "data" / "scenarios" / "test.parquet").to_pylist()
    scenarios = jsonl(release / "scenarios.jsonl")
    gold = {g["scenario_id"]: g for g in jsonl(release / "gold.jsonl")}
    assert [r["scenario_id"] for r in rows] == [s["scenario_id"] for s in scenarios]
    for row, record in zip(rows, scenarios, strict=True):
        assert json.loads(row["scenario"]) == record
        assert json.loads(row["gold"]) == gold[record["scenario_id"]]
    assert verify_release(release) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"scenario_id,content_sha256,verdict\nS1,x,accept caf\xe9\n",
            "not UTF-8 text (byte 0xe9)",
        ),
        (b"scenario_id,content_sha256,verdict\nS1,x,\x00\n", "a NUL character"),
    ],
    ids=["not-utf8", "nul"],
)
def test_a_damaged_reviews_file_is_one_located_message_and_exit_2(
    cli, published, tmp_path, content, message
):
    """`kgbench dataset --reviews` reads the CSV through kgbench.untrusted (issue 28): a
    damaged file names itself and its line, exit 2, and no dataset is written. It was a
    UnicodeDecodeError traceback, exit 1."""
    from typer.testing import CliRunner

    _, release = published
    reviews = tmp_path / "reviews.csv"
    reviews.write_bytes(content)
    out = tmp_path / "ds"
    args = ["dataset", str(release), "--out", str(out), "--reviews", str(reviews)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    assert f"{reviews}, line 2" in errors[0] and message in errors[0], errors[0]
    assert not out.exists()


def test_two_domains_of_one_release_version_load_their_own_rows_from_one_cache(tmp_path):
    """Issue 31: every domain's dataset folder is named after the release version, and
    `datasets` keys a local folder's cache by its last component and the config, so loading
    afib's then cardio's folder by name with one cache gave afib's rows for cardio. The way
    the README loads a release (the Parquet files by path) keeps each domain's rows apart."""
    import datasets

    from harness.release.dataset import default_out_dir

    newest = dict(_committed_releases())
    assert {"afib", "cardio"} <= set(newest)

    cache = tmp_path / "one-cache"
    for domain in ("afib", "cardio"):
        folder = default_out_dir(newest[domain])
        loaded = datasets.load_dataset(
            "parquet",
            data_files={"test": str(folder / "data" / "scenarios" / "test.parquet")},
            split="test",
            cache_dir=str(cache),
        )
        ids = [s["scenario_id"] for s in jsonl(newest[domain] / "scenarios.jsonl")]
        assert set(loaded["domain"]) == {domain}
        assert loaded["scenario_id"] == ids

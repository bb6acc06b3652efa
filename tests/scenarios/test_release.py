"""Gold releases: publish, immutability, the semantic-version bump rule, tamper detection,
and reading a release with nothing but its folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.gold_layout import Version
from harness.release import read_release, verify_release
from harness.release.compat import Assessment, compare_schemas
from harness.release.publish import publish_release
from kgbench.errors import UserError, UserErrors
from kgbench.io import jsonl_bytes

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def staged(compiled_copy, cardio_scenarios, tmp_path: Path):
    """A writable compiled cardio with its generated scenarios in place."""
    compiled = compiled_copy("cardio")
    path = compiled.root / "scenarios" / "scenarios.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl_bytes(cardio_scenarios))
    return compiled


def rewrite_scenarios(compiled, change) -> None:
    path = compiled.root / "scenarios" / "scenarios.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    change(records)
    path.write_bytes(jsonl_bytes(records))


def edit_schema(compiled, change) -> None:
    path = compiled.root / "schemas" / "scenario.schema.json"
    schema = json.loads(path.read_text())
    change(schema)
    path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")


def test_publish_writes_a_self_describing_release(staged) -> None:
    result = publish_release(staged, "1.0.0")
    assert not result.unchanged and result.scenarios == 80
    root = staged.root / "gold" / "1.0.0"
    manifest = json.loads((root / "manifest.json").read_text())
    compiled = json.loads((staged.root / "manifest.json").read_text())
    assert manifest["release_version"] == "1.0.0" and manifest["previous_release"] is None
    assert manifest["spec_version"] == compiled["spec_version"]
    assert manifest["compiler"] == compiled["compiler"]
    assert manifest["created_at"].endswith("+00:00")
    assert {f["path"] for f in manifest["files"]} == {
        "scenarios.jsonl",
        "gold.jsonl",
        "schemas/scenario.schema.json",
        "schemas/gold.schema.json",
        # the graph the gold was generated from (tests/scenarios/test_release_graph.py)
        "kgx/cardio_nodes.tsv",
        "kgx/cardio_edges.tsv",
        "kgx/prefixes.json",
    }
    gold = [json.loads(line) for line in (root / "gold.jsonl").read_text().splitlines()]
    assert all(g["schema_version"] == manifest["scenario_schema_version"] for g in gold)
    assert (root / "schemas/gold.schema.json").read_bytes() == (
        staged.root / "schemas/gold.schema.json"
    ).read_bytes()
    assert verify_release(root) == []
    assert sorted(p.name for p in root.parent.iterdir()) == [
        ".publish.lock",  # the publish lock (an flock; never a temporary file)
        "1.0.0",
        "index.json",
    ], "no temporary folder left"


def test_a_published_version_is_immutable(staged) -> None:
    publish_release(staged, "1.0.0")
    before = (staged.root / "gold/1.0.0/manifest.json").read_bytes()
    again = publish_release(staged, "1.0.0")
    assert again.unchanged, "identical content under the same version is a no-op"
    assert (staged.root / "gold/1.0.0/manifest.json").read_bytes() == before

    rewrite_scenarios(staged, lambda rs: rs[3]["patient"].__setitem__("age", 71))
    with pytest.raises(
        UserError, match=r"release 1.0.0 already exists with different content.*immutable.*1\.0\.1"
    ):
        publish_release(staged, "1.0.0")
    assert (staged.root / "gold/1.0.0/manifest.json").read_bytes() == before


def test_content_fixes_need_a_patch_bump(staged) -> None:
    publish_release(staged, "1.0.0")
    rewrite_scenarios(staged, lambda rs: rs[3]["patient"].__setitem__("age", 71))
    with pytest.raises(UserError, match=r"not greater than the latest release 1\.0\.0"):
        publish_release(staged, "0.9.0")
    result = publish_release(staged, "1.0.1")
    assert (result.previous, result.bump) == ("1.0.0", "patch")
    manifest = json.loads((staged.root / "gold/1.0.1/manifest.json").read_text())
    assert manifest["previous_release"] == "1.0.0"


def test_identical_content_under_a_new_version_is_refused(staged) -> None:
    publish_release(staged, "1.0.0")
    with pytest.raises(UserError, match=r"identical to release 1\.0\.0; nothing to publish"):
        publish_release(staged, "1.0.1")


def test_an_added_optional_field_needs_a_minor_bump(staged) -> None:
    publish_release(staged, "1.0.0")
    edit_schema(staged, lambda s: s["properties"].__setitem__("notes", {"type": "string"}))
    with pytest.raises(UserError) as err:
        publish_release(staged, "1.0.1")
    message = str(err.value)
    assert (
        "is a patch bump from 1.0.0, but the change needs a minor bump: publish as 1.1.0" in message
    )
    assert "new optional field 'notes'" in message
    assert publish_release(staged, "1.1.0").bump == "minor"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda s: s["properties"].pop("title"), "field 'title' was removed or renamed"),
        (lambda s: s["required"].append("source"), "field 'source' is now required"),
        (
            lambda s: s["$defs"]["PatientContext"]["properties"]["age"].__setitem__(
                "type", "string"
            ),
            "field 'patient.age' changed type",
        ),
        (
            lambda s: s["$defs"]["ScenarioCategory"]["enum"].remove("direct_effect"),
            "field 'category' lost values ['direct_effect']",
        ),
    ],
    ids=["removed", "newly required", "retyped", "enum value removed"],
)
def test_breaking_schema_changes_need_a_major_bump(staged, change, why) -> None:
    publish_release(staged, "1.0.0")
    edit_schema(staged, change)
    for too_small in ("1.0.1", "1.1.0"):
        with pytest.raises(UserError, match=r"needs a major bump: publish as 2\.0\.0") as err:
            publish_release(staged, too_small)
        assert why in str(err.value)


def test_schema_comparison_classifies_changes() -> None:
    old = {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
    }
    new = {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": ["integer", "null"]},
            "c": {"type": "string"},
        },
    }
    out = Assessment()
    compare_schemas("x", old, new, out)
    assert out.bump == "major" and any("may now be null" in r for r in out.reasons)
    assert any("new optional field 'c'" in r and "(minor)" in r for r in out.reasons)
    assert Version.parse("1.2.3").next("major") == Version(2, 0, 0)
    # a new optional list of lists (gold causal_paths) is one optional field, not a required one
    nested = {
        **old,
        "properties": {
            **old["properties"],
            "paths": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
        },
    }
    out = Assessment()
    compare_schemas("x", old, nested, out)
    assert out.bump == "minor" and out.reasons == ["x: new optional field 'paths' (minor)"]
    with pytest.raises(UserError, match="not semantic"):
        Version.parse("v1")


@pytest.fixture
def release(staged, tmp_path: Path) -> Path:
    publish_release(staged, "1.0.0")
    copy = tmp_path / "elsewhere" / "cardio-gold-1.0.0"
    shutil.copytree(staged.root / "gold" / "1.0.0", copy)
    return copy


def test_a_consumer_reads_a_release_from_its_folder_alone(release: Path, staged) -> None:
    shutil.rmtree(staged.root)  # no compiled domain, no spec: only the folder
    loaded = read_release(release)
    assert loaded.version == "1.0.0" and len(loaded.scenarios) == 80
    assert loaded.gold["SCN_0001"]["gold"]["causal_path_assertion_ids"] == [
        "ASR_0019",
        "ASR_0010",
        "ASR_0011",
        "ASR_0013",
    ]


def test_tampering_is_detected_and_named(cli, release: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["verify-release", str(release)]).exit_code == 0

    gold = release / "gold.jsonl"
    lines = gold.read_text().splitlines()
    record = json.loads(lines[4])
    record["gold"]["preferred_intervention"] = "DRG_0015"
    lines[4] = json.dumps(record, sort_keys=True)
    gold.write_text("\n".join(lines) + "\n")
    result = runner.invoke(cli, ["verify-release", str(release)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "gold.jsonl: sha256 mismatch" in result.stderr
    assert "gold.jsonl, line 5 (SCN_0005): differs from the gold of the scenario" in result.stderr
    with pytest.raises(UserErrors):
        read_release(release)


def test_tampered_schema_validation_and_unlisted_files(release: Path) -> None:
    scenarios = release / "scenarios.jsonl"
    lines = scenarios.read_text().splitlines()
    record = json.loads(lines[0])
    del record["title"]
    lines[0] = json.dumps(record, sort_keys=True)
    scenarios.write_text("\n".join(lines) + "\n")
    (release / "extra.txt").write_text("x")
    problems = verify_release(release)
    assert any(p.startswith("scenarios.jsonl: sha256 mismatch") for p in problems)
    assert any(
        "scenarios.jsonl, line 1 (SCN_0001), field '(record)': 'title' is a required property" in p
        for p in problems
    )
    assert "extra.txt: not listed in the manifest" in problems


def test_a_missing_file_and_a_broken_manifest(release: Path) -> None:
    (release / "schemas" / "gold.schema.json").unlink()
    assert "schemas/gold.schema.json: listed in the manifest but missing" in verify_release(release)
    (release / "manifest.json").write_text("{")
    assert verify_release(release)[0].startswith("manifest.json: not valid JSON")


def test_the_committed_cardio_releases_verify() -> None:
    """Every published release still verifies; the latest holds today's scenarios."""
    gold = REPO / "generated" / "cardio" / "gold"
    versions = sorted(
        (p for p in gold.iterdir() if p.is_dir()),
        key=lambda p: tuple(int(x) for x in p.name.split(".")),
    )
    assert [p.name for p in versions][:1] == ["1.0.0"]
    for root in versions:
        assert verify_release(root) == [], root.name
        assert read_release(root).manifest["counts"]["scenarios"] == 80
    committed = (REPO / "generated/cardio/scenarios/scenarios.jsonl").read_bytes()
    assert (versions[-1] / "scenarios.jsonl").read_bytes() == committed


def test_publish_works_on_afib(compiled_copy, afib_scenarios) -> None:
    compiled = compiled_copy("afib")
    path = compiled.root / "scenarios" / "scenarios.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl_bytes(afib_scenarios))
    result = publish_release(compiled, "0.1.0")
    assert result.scenarios == 16
    assert read_release(result.path).manifest["domain"] == "afib"

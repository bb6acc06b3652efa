"""Releases that can be pinned: the release digest, the hash-chained index, and the review's
section 5 failures (5h: a consistently re-hashed tamper verified; 5q: "1.0.2\\n" was taken as
a version)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.gold_layout import Version, content_hash
from harness.release.index import INDEX, chain_problems, read_index, release_digest
from harness.release.publish import publish_release
from harness.release.verify import verify_release
from kgbench.errors import UserError
from kgbench.io import json_bytes, jsonl_bytes

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def staged(compiled_copy, cardio_scenarios):
    compiled = compiled_copy("cardio")
    path = compiled.root / "scenarios" / "scenarios.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl_bytes(cardio_scenarios))
    return compiled


def rehash_consistently(release: Path, change) -> None:
    """Review 5h: edit gold in both files, then recompute every hash in the manifest."""
    for name in ("scenarios.jsonl", "gold.jsonl"):
        path = release / name
        records = [json.loads(x) for x in path.read_text().splitlines()]
        for r in records:
            if r["scenario_id"] == "SCN_0001":
                change(r["gold"])
        path.write_bytes(jsonl_bytes(records))
    manifest = json.loads((release / "manifest.json").read_text())
    for entry in manifest["files"]:
        data = (release / entry["path"]).read_bytes()
        entry["sha256"], entry["bytes"] = hashlib.sha256(data).hexdigest(), len(data)
    manifest["content_sha256"] = content_hash(manifest["files"])
    (release / "manifest.json").write_bytes(json_bytes(manifest))


def test_publish_records_and_chains_release_digests(staged) -> None:
    one = publish_release(staged, "1.0.0")
    assert one.digest == release_digest(one.path)
    assert one.digest.startswith("sha256:") and len(one.digest) == 7 + 64

    def change(g):
        g["expects_uncertainty"] = not g["expects_uncertainty"]

    path = staged.root / "scenarios" / "scenarios.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()]
    change(records[0]["gold"])
    path.write_bytes(jsonl_bytes(records))
    two = publish_release(staged, "1.0.1")
    index = read_index(staged.root / "gold" / INDEX)
    assert [e["version"] for e in index["releases"]] == ["1.0.0", "1.0.1"]
    assert index["releases"][1]["previous_digest"] == one.digest
    assert index["releases"][1]["release_digest"] == two.digest
    assert chain_problems(index) == []
    again = publish_release(staged, "1.0.1")
    assert again.unchanged and again.digest == two.digest


def test_a_consistently_rehashed_tamper_is_caught_by_the_index_and_the_digest(
    staged, cli, tmp_path: Path
) -> None:
    """Review 5h: changing SCN_0001's preferred answer and recomputing every hash passed."""
    published = publish_release(staged, "1.0.0")
    release, pinned = published.path, published.digest

    def change(g):
        g["preferred_intervention"] = "DRG_0006"

    rehash_consistently(release, change)
    elsewhere = tmp_path / "copy"
    shutil.copytree(release, elsewhere)
    assert verify_release(elsewhere) == []  # the folder alone cannot tell (by design)
    problems = verify_release(release)
    assert any("index.json recorded" in p and "changed afterwards" in p for p in problems)
    assert any("not the pinned" in p for p in verify_release(elsewhere, digest=pinned))

    runner = CliRunner()
    result = runner.invoke(cli, ["verify-release", str(elsewhere), "--digest", pinned])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "the release changed after it was pinned" in result.stderr
    result = runner.invoke(cli, ["verify-release", str(release)])
    assert result.exit_code == 2 and "changed afterwards" in result.stderr
    result = runner.invoke(cli, ["verify-release", str(elsewhere)])
    assert result.exit_code == 0 and "own manifest only; pin it with --digest" in result.stdout + (
        result.stderr
    )


def test_a_rewritten_index_breaks_the_chain(staged) -> None:
    publish_release(staged, "1.0.0")
    path = staged.root / "scenarios" / "scenarios.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()]
    records[0]["gold"]["expects_uncertainty"] = not records[0]["gold"]["expects_uncertainty"]
    path.write_bytes(jsonl_bytes(records))
    publish_release(staged, "1.0.1")
    index_path = staged.root / "gold" / INDEX
    index = json.loads(index_path.read_text())
    index["releases"][0]["release_digest"] = "sha256:" + "0" * 64  # hide a rewritten 1.0.0
    index_path.write_text(json.dumps(index))
    assert any("the chain was rewritten" in p for p in chain_problems(read_index(index_path)))
    with pytest.raises(UserError, match="damaged; nothing was recorded"):
        records[1]["gold"]["expects_uncertainty"] = True
        path.write_bytes(jsonl_bytes(records))
        publish_release(staged, "1.0.2")


@pytest.mark.parametrize("text", ["1.0.2\n", "1.0.2\r\n", "1.0.\uff12", "\uff11.0.2", "1.0.2 "])
def test_a_version_with_a_trailing_newline_or_foreign_digits_is_refused(text: str) -> None:
    """Review 5q: `$` matched before a final newline, so "1.0.2\\n" was taken as 1.0.2."""
    with pytest.raises(UserError, match="not semantic"):
        Version.parse(text)


def test_the_committed_releases_are_pinned_in_the_committed_index() -> None:
    gold = REPO / "generated" / "cardio" / "gold"
    index = read_index(gold / INDEX)
    assert index is not None and chain_problems(index) == []
    versions = sorted(p.name for p in gold.iterdir() if p.is_dir())
    assert [e["version"] for e in index["releases"]] == versions
    for entry in index["releases"]:
        assert release_digest(gold / entry["version"]) == entry["release_digest"]
        assert verify_release(gold / entry["version"], digest=entry["release_digest"]) == []


def test_an_unindexed_release_blocks_publishing(staged) -> None:
    publish_release(staged, "1.0.0")
    (staged.root / "gold" / INDEX).unlink()
    path = staged.root / "scenarios" / "scenarios.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()]
    records[0]["gold"]["expects_uncertainty"] = not records[0]["gold"]["expects_uncertainty"]
    path.write_bytes(jsonl_bytes(records))
    with pytest.raises(UserError, match=r"1\.0\.0 under .* are not in the release index"):
        publish_release(staged, "1.0.1")

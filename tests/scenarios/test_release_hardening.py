"""Releases under hostile folders, forged pins and racing publishes (reliability review
2026-12: rel.*, conc.publish-race, cli.publish, cli.newline-message)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil

import pytest
from typer.testing import CliRunner

import harness.release.publish as publish_module
from harness.gold_layout import releases
from harness.release.index import INDEX, read_index
from harness.release.publish import LOCK, publish_release
from harness.release.verify import pin_existing, verify_release
from kgbench.errors import UserError
from kgbench.io import jsonl_bytes
from tests.scenarios.test_release_pinning import rehash_consistently


@pytest.fixture
def staged(compiled_copy, cardio_scenarios):
    compiled = compiled_copy("cardio")
    path = compiled.root / "scenarios" / "scenarios.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl_bytes(cardio_scenarios))
    return compiled


def _change_first_gold(staged) -> None:
    path = staged.root / "scenarios" / "scenarios.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()]
    records[0]["gold"]["expects_uncertainty"] = not records[0]["gold"]["expects_uncertainty"]
    path.write_bytes(jsonl_bytes(records))


def test_rel_pin_forged_a_folder_newer_than_the_index_is_not_pinned(staged) -> None:
    one = publish_release(staged, "1.0.0")
    gold = staged.root / "gold"
    forged = gold / "9.9.9"
    shutil.copytree(one.path, forged)

    def change(g):
        g["preferred_intervention"] = "DRG_0006"

    rehash_consistently(forged, change)
    before = (gold / INDEX).read_bytes()
    with pytest.raises(UserError, match=r"9\.9\.9 .* newer than the last indexed release 1\.0\.0"):
        pin_existing(gold, "cardio", releases(gold))
    assert (gold / INDEX).read_bytes() == before
    assert verify_release(forged) != []  # and verify-release does not vouch for it


def test_an_interrupted_publish_is_finished_by_publishing_again(staged, monkeypatch) -> None:
    """Recovery from a half-done publish: the folder written, the index not yet."""
    publish_release(staged, "1.0.0")
    _change_first_gold(staged)

    def killed(*args: object) -> str:
        raise KeyboardInterrupt  # as a kill between the folder swap and the index write

    real_append = publish_module.append_release
    monkeypatch.setattr(publish_module, "append_release", killed)
    with pytest.raises(KeyboardInterrupt):
        publish_release(staged, "1.0.1")
    gold = staged.root / "gold"
    assert (gold / "1.0.1" / "manifest.json").is_file()
    assert [e["version"] for e in read_index(gold / INDEX)["releases"]] == ["1.0.0"]
    monkeypatch.setattr(publish_module, "append_release", real_append)
    again = publish_release(staged, "1.0.1")
    assert again.unchanged
    assert [e["version"] for e in read_index(gold / INDEX)["releases"]] == ["1.0.0", "1.0.1"]
    assert verify_release(gold / "1.0.1") == []


def test_an_unindexed_folder_with_other_content_is_named_not_indexed(staged) -> None:
    one = publish_release(staged, "1.0.0")
    shutil.copytree(one.path, staged.root / "gold" / "2.0.0")  # not what 2.0.0 would hold
    _change_first_gold(staged)
    with pytest.raises(UserError, match="never published"):
        publish_release(staged, "2.0.0")
    assert [e["version"] for e in read_index(staged.root / "gold" / INDEX)["releases"]] == ["1.0.0"]


def test_conc_publish_race_a_second_publish_is_refused_while_one_runs(staged) -> None:
    publish_release(staged, "1.0.0")
    _change_first_gold(staged)
    gold = staged.root / "gold"
    fd = os.open(gold / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a publish paused mid-way holds it
        with pytest.raises(UserError, match="another `kgbench publish`"):
            publish_release(staged, "2.0.0")
    finally:
        os.close(fd)
    assert sorted(p.name for p in gold.iterdir() if p.is_dir()) == ["1.0.0"]
    assert publish_release(staged, "2.0.0").version == "2.0.0"  # once the lock is free


def test_rel_empty_dir_an_empty_release_folder_is_one_message(staged) -> None:
    publish_release(staged, "1.0.0")
    _change_first_gold(staged)
    (staged.root / "gold" / "2.0.0").mkdir()
    with pytest.raises(UserError, match=r"2\.0\.0 exists but holds no release"):
        publish_release(staged, "2.0.0")


def test_rel_u2028_a_published_name_with_a_line_separator_verifies(staged) -> None:
    path = staged.root / "scenarios" / "scenarios.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()]
    records[0]["title"] = "Amlo\u2028dipine \u2029 \x85 title"
    path.write_bytes(jsonl_bytes(records))
    one = publish_release(staged, "1.0.0")
    assert "\u2028" in (one.path / "scenarios.jsonl").read_text()
    assert verify_release(one.path) == []


@pytest.mark.parametrize(
    ("case", "file", "text", "expected"),
    [
        ("rel.bigint-line", "gold.jsonl", '{"n": ' + "9" * 5000 + "}\n", "longer than"),
        ("rel.deep-line", "gold.jsonl", "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper"),
        ("rel.non-utf8", "scenarios.jsonl", b"\xef\xff\n", "not UTF-8"),
        ("rel.manifest-bigint", "manifest.json", '{"counts": ' + "9" * 5000 + "}", "longer"),
        ("rel.manifest-deep", "manifest.json", "[" * 100_000 + "]" * 100_000, "nested deeper"),
    ],
)
def test_a_damaged_release_file_is_a_verification_problem(staged, case, file, text, expected):
    one = publish_release(staged, "1.0.0")
    copy = staged.root / "copy"
    shutil.copytree(one.path, copy)
    target = copy / file
    if isinstance(text, bytes):
        target.write_bytes(target.read_bytes()[:40] + text)
    elif file == "manifest.json":
        target.write_text(text)
    else:
        target.write_text(target.read_text() + text)
    problems = verify_release(copy, index=None)
    assert any(expected in p for p in problems), (case, problems[:3])
    result = CliRunner().invoke(_app(), ["verify-release", str(copy)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output


def _app():
    from kgbench.cli import app

    return app


@pytest.mark.parametrize(
    "release", ["9" * 5000 + ".0.0", "2.0.1\n", "1.0.\x1b[2J"], ids=["bigint", "newline", "esc"]
)
def test_cli_publish_a_bad_release_value_is_one_escaped_error_line(release: str) -> None:
    """cli.publish (a 5,000-digit part was a ValueError traceback), cli.newline-message (a
    line break in the value split one error into two `error:` lines), ck.ansi-escape."""
    result = CliRunner().invoke(_app(), ["publish", "--domain", "cardio", "--release", release])
    assert result.exit_code == 2 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "not semantic" in errors[0], result.output
    assert "\x1b" not in result.output

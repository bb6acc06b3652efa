"""The embedded Neo4j's class-data archive (harness/neo4j/cds.py): written by a short-lived
server as it exits, kept only after a clean stop, mapped by the next JVM, and a damaged one
never breaks a start (the JVM checks it and runs without; the "no" cases plant one)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from harness.neo4j import cds, start, stop
from harness.neo4j.server import ServerInfo
from kgbench.errors import ServiceError
from kgbench.locations import HOME_ENV

KEY = "k" * 24


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Caches (the archive's folder) under a test's own KGBENCH_HOME."""
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    monkeypatch.delenv(cds.DISABLE_ENV, raising=False)
    return tmp_path / "home"


@pytest.fixture
def fixed_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cds, "archive_key", lambda: KEY)


def _dump(state: Path, body: bytes = cds.DYNAMIC_MAGIC + b"\0" * 64) -> Path:
    state.mkdir(parents=True, exist_ok=True)
    dump = state / f"{cds.DUMP_PREFIX}{KEY}{cds.SUFFIX}"
    dump.write_bytes(body)
    return dump


def test_short_lived_start_without_archive_writes_one_in_its_state_folder(
    home: Path, fixed_key: None, tmp_path: Path
) -> None:
    stale = _dump(tmp_path / "state")  # a previous server's, killed while dumping
    flags = cds.flags(tmp_path / "state", short_lived=True)
    assert f"-XX:ArchiveClassesAtExit={stale}" in flags
    assert cds.dumping(flags)  # so `stop()` gives it the time to write the archive
    assert not stale.exists()  # the JVM writes it afresh
    assert cds.flags(tmp_path / "state", short_lived=False) == []


def test_archive_is_used_by_every_start_once_kept(
    home: Path, fixed_key: None, tmp_path: Path
) -> None:
    _dump(tmp_path / "state")
    kept = cds.keep_dump(tmp_path / "state", 143)
    assert kept == cds.archive_path(KEY, 68) and kept.is_file()
    assert not list((tmp_path / "state").glob("cds-*"))
    assert not [p for p in kept.parent.iterdir() if p.name.endswith(".tmp")]
    for short_lived in (True, False):
        assert cds.flags(tmp_path / "s2", short_lived=short_lived) == [
            f"-XX:SharedArchiveFile={kept}"
        ]
    assert cds.used_archive(["java", f"-XX:SharedArchiveFile={kept}", "-cp"]) == kept
    assert not cds.dumping([f"-XX:SharedArchiveFile={kept}"])


@pytest.mark.parametrize("status", [None, 1, -9, 137])
def test_dump_of_an_unclean_end_is_discarded(
    home: Path, fixed_key: None, tmp_path: Path, status: int | None
) -> None:
    dump = _dump(tmp_path / "state")
    assert cds.keep_dump(tmp_path / "state", status) is None
    assert not dump.exists()
    assert cds.find(KEY) is None


def test_dump_that_is_not_an_archive_is_discarded(
    home: Path, fixed_key: None, tmp_path: Path
) -> None:
    _dump(tmp_path / "state", b"\0" * 128)  # e.g. a header the JVM never wrote
    assert cds.keep_dump(tmp_path / "state", 143) is None
    assert cds.find(KEY) is None


def test_disabled_by_the_environment(
    home: Path, fixed_key: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cds.DISABLE_ENV, "0")
    assert cds.flags(tmp_path / "state", short_lived=True) == []


def test_old_archives_are_pruned(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = ["a" * 24, "b" * 24, "c" * 24]
    for i, key in enumerate(keys):
        monkeypatch.setattr(cds, "archive_key", lambda key=key: key)
        _dump_key = tmp_path / f"state{i}" / f"{cds.DUMP_PREFIX}{key}{cds.SUFFIX}"
        _dump_key.parent.mkdir()
        _dump_key.write_bytes(cds.DYNAMIC_MAGIC + b"\0" * 8)
        os.utime(_dump_key, (1_000_000 + i, 1_000_000 + i))
        assert cds.keep_dump(tmp_path / f"state{i}", 0) == cds.archive_path(key, 12)
    left = sorted(p.name for p in cds.archive_path(KEY, 0).parent.glob("*.jsa"))
    assert left == [f"{k}-12.jsa" for k in keys[-cds.KEEP :]]


def test_archive_of_another_size_is_not_used(home: Path, fixed_key: None, tmp_path: Path) -> None:
    """The "no" case of the size check: an archive cut short after it was kept."""
    _dump(tmp_path / "state")
    kept = cds.keep_dump(tmp_path / "state", 143)
    assert kept is not None
    kept.write_bytes(kept.read_bytes()[:10])
    assert cds.flags(tmp_path / "s2", short_lived=False) == []
    assert not kept.exists()


# --- with a real JVM -----------------------------------------------------------------------


def _answers(info: ServerInfo) -> bool:
    assert info.password_file is not None
    password = info.password_file.read_text(encoding="utf-8").strip()
    with GraphDatabase.driver(info.uri, auth=("neo4j", password)) as driver:
        records, _, _ = driver.execute_query("RETURN 1 AS one")
    return bool(records[0]["one"] == 1)


def _maps(pid: int, path: Path) -> bool:
    """Whether the JVM `pid` has `path` mapped (an archive it accepted)."""
    return str(path) in Path(f"/proc/{pid}/maps").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real archive, written by a short-lived server's clean stop (in a module-wide home)."""
    base = tmp_path_factory.mktemp("cds")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(HOME_ENV, str(base / "home"))
        mp.delenv(cds.DISABLE_ENV, raising=False)
        state = base / "state"
        info = start(state, short_lived=True, timeout=300)
        try:
            assert _answers(info)
        finally:
            stop(state, timeout=300)
        archive = cds.find(cds.archive_key())
        assert archive is not None, "a clean stop keeps the archive the server wrote"
        assert not list(state.glob(f"{cds.DUMP_PREFIX}*"))
        yield archive


@pytest.mark.neo4j
@pytest.mark.slow
def test_written_archive_is_mapped_by_the_next_start(
    written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOME_ENV, str(written.parent.parent.parent))
    monkeypatch.delenv(cds.DISABLE_ENV, raising=False)
    info = start(tmp_path / "state", short_lived=True, timeout=300)
    try:
        assert _answers(info)
        assert _maps(info.pid, written)
    finally:
        stop(tmp_path / "state")


@pytest.mark.neo4j
@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "garbage", "another build"])
def test_damaged_archive_does_not_break_a_start(
    written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """The "no" case: a planted bad archive where the start looks for one. The JVM rejects it
    (header, size or classpath check), says so in the log, and serves without it."""
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    monkeypatch.delenv(cds.DISABLE_ENV, raising=False)
    data = written.read_bytes()
    if damage == "truncated":  # cut short, under a name that gives its new size: the JVM
        data = data[: len(data) // 3]  # dies mapping it, the start retries without it
    elif damage == "garbage":  # the right magic, nothing valid after it
        data = cds.DYNAMIC_MAGIC + os.urandom(1 << 20)
    # else a whole archive of another classpath: the JVM's own check rejects it
    planted = cds.archive_path(cds.archive_key(), len(data))
    planted.parent.mkdir(parents=True)
    planted.write_bytes(data)
    state = tmp_path / "state"
    if damage == "another build":
        monkeypatch.setattr("harness.neo4j.jvm.classpath", _shuffled_classpath)
    info = start(state, timeout=300)
    try:
        assert _answers(info)
        assert not _maps(info.pid, planted)
        if damage == "truncated":
            assert not planted.exists()  # removed once the JVM died on it
    finally:
        stop(state)


def _shuffled_classpath() -> str:
    """The same jars in another order: a classpath the archive was not made from."""
    from harness.neo4j.jvm import classpath_entries

    return os.pathsep.join(str(p) for p in reversed(classpath_entries()))


def test_key_changes_with_the_classpath(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    jar = tmp_path / "a.jar"
    jar.write_bytes(b"one")
    monkeypatch.setattr("harness.neo4j.jvm.classpath_entries", lambda: [jar])
    monkeypatch.setattr("harness.neo4j.jvm.java_executable", lambda: "/bin/true")
    monkeypatch.setattr("harness.neo4j.jvm.java_version_text", lambda java: "17.0.15")
    first = cds.archive_key()
    assert cds.archive_key() == first
    jar.write_bytes(b"two!")
    assert cds.archive_key() != first
    monkeypatch.setattr("harness.neo4j.jvm.java_version_text", lambda java: "21.0.1")
    assert cds.archive_key() != first


@pytest.mark.neo4j
def test_a_start_that_fails_for_another_reason_keeps_the_archive(
    written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The launcher refuses a home that is a file (exit 1, no crash): the error is that
    start's own, and the archive stays for the next start (it was not what failed)."""
    monkeypatch.setenv(HOME_ENV, str(written.parent.parent.parent))
    monkeypatch.delenv(cds.DISABLE_ENV, raising=False)
    home = tmp_path / "not-a-directory"
    home.write_text("a file where the Neo4j home should be")
    with pytest.raises(ServiceError, match="exited with code 1"):
        start(tmp_path / "state", home=home, timeout=300)
    assert written.is_file()

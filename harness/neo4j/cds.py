"""A class-data-sharing archive (AppCDS, Java 17's dynamic archive) for the embedded Neo4j.

Why: a short-lived server (the pilot's, the bench's floor) spends most of its start loading
and verifying about 18,000 classes, and its load and first queries load thousands more (the
Cypher planner and runtime). A dynamic archive written when such a server exits holds them
already parsed and verified; the next JVM maps it instead. The pilot's server start, A B
pairs on 2 shared cores at load 13-17: JVM CPU 9.6 and 10.1 s without, 7.4 and 5.9 s with;
wall 24.2/21.2 s and 32.0/17.3 s. Its load and extraction cost the same CPU either way.

Lifecycle, so that an archive can make a start faster but never break one:

- The archive is keyed by what it was made from: the `java` binary and its version text, and
  every classpath entry's path, size and modification time (`archive_key`). A rebuilt
  launcher or another JDK gets another key, hence no archive and a fresh dump. JVM flags are
  not in the key: heap and JIT settings do not bear on it, and the JVM checks what does.
- Absent: a short-lived server is started with `-XX:ArchiveClassesAtExit=` a file in its own
  state folder (one server per state folder, under its lock). Nothing else changes for it.
- Kept (`keep_dump`) only after that server was stopped by `stop()` from the process that
  started it and exited as a SIGTERM'd launcher does (status 0 or 143): then the file is
  complete. It is checked for the dynamic archive's magic number, moved (across file
  systems, copied) into the cache folder under a temporary name and renamed into place with
  `os.replace`, so a reader sees the whole archive or none. Any other end (killed, crashed, a failed dump) discards it.
- Present: every start (short-lived or not) gets `-XX:SharedArchiveFile=`. The JVM checks the
  header, its own version and the classpath itself, and with the default `-Xshare:auto` runs
  without the archive when anything does not match, saying so in the server log. It does not
  check the file's length: a truncated archive kills it with SIGBUS. So the kept size is in
  the file's name and checked before each use (`find`), and a JVM that dies while starting on
  an archive is started again without it, the archive removed (`server.start`).
  tests/neo4j_launcher/test_cds.py starts servers on truncated, garbage and foreign archives.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

from kgbench.locations import cache_dir

from . import jvm

CACHE = "neo4j-cds"  # `cache_dir(CACHE)`: the archives, one per key
DUMP_PREFIX = "cds-dump-"  # <state folder>/cds-dump-<key>.jsa: being written by a running JVM
SUFFIX = ".jsa"
KEEP = 2  # archives kept in the cache folder (two checkouts sharing KGBENCH_HOME alternate)
# The first four bytes of a dynamic archive (CDS_DYNAMIC_ARCHIVE_MAGIC, little-endian on the
# platforms Neo4j runs on): a cheap check that what is kept is an archive at all.
DYNAMIC_MAGIC = (0xF00BABA8).to_bytes(4, "little")
# A clean stop: the launcher's exit after SIGTERM (128 + 15), or 0 from the watch-pid path.
CLEAN_EXITS = frozenset({0, 143})
DISABLE_ENV = "KGBENCH_NEO4J_CDS"  # "0": no archive is used or written
USE_FLAG = "-XX:SharedArchiveFile="
DUMP_FLAG = "-XX:ArchiveClassesAtExit="
# More time `stop()` allows a server that writes the archive as it exits: 2-4 s on a quiet
# machine, 44 s measured at load 12 on 2 cores; one killed half-way is discarded, and the
# next short-lived server tries again.
DUMP_SECONDS = 120.0


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1") != "0"


def archive_key() -> str:
    """What the archive depends on, hashed: the java binary and its version, the classpath's
    entries (path, size, mtime). The JVM checks the same itself; the key only keeps an
    archive of another build from being tried and rejected at every start."""
    digest = hashlib.sha256()
    java = jvm.java_executable()
    digest.update(os.path.realpath(java).encode() + b"\0")
    digest.update(jvm.java_version_text(java).encode() + b"\0")
    for entry in jvm.classpath_entries():
        stat = entry.stat()
        digest.update(f"{entry}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:24]


def archive_path(key: str, size: int) -> Path:
    """`<cache>/neo4j-cds/<key>-<size in bytes>.jsa`: the size is checked before each use."""
    return cache_dir(CACHE) / f"{key}-{size}{SUFFIX}"


def find(key: str) -> Path | None:
    """The kept archive of `key` whose size is still the one it was kept with; one of another
    size (cut short, overwritten) is removed: mapping a truncated archive kills Java 17 with
    SIGBUS before it checks anything (tests/neo4j_launcher/test_cds.py)."""
    for path in cache_dir(CACHE).glob(f"{key}-*{SUFFIX}"):
        size = path.name[len(key) + 1 : -len(SUFFIX)]
        try:
            if size.isdigit() and path.stat().st_size == int(size):
                return path
            path.unlink()
        except OSError:
            continue
    return None


def discard(archive: Path) -> None:
    """Remove an archive a JVM could not start with (see `server.start`)."""
    archive.unlink(missing_ok=True)


def used_archive(command: list[str]) -> Path | None:
    """The archive a JVM command line maps, if any."""
    for arg in command:
        if arg.startswith(USE_FLAG):
            return Path(arg[len(USE_FLAG) :])
    return None


def flags(state_dir: Path, *, short_lived: bool) -> list[str]:
    """The JVM options for a start from `state_dir`: use the archive when one exists for this
    build; else, for a short-lived server, write one when it exits; else none."""
    if not enabled():
        return []
    try:
        key = archive_key()
    except OSError:  # a classpath entry vanished: the start itself will say what is wrong
        return []
    archive = find(key)
    if archive is not None:
        return [f"{USE_FLAG}{archive}"]
    if not short_lived:
        return []
    _discard_dumps(state_dir)
    # The dump lists every class it cannot archive (signed jars, generated classes) as a
    # warning, some thousands of lines: only its errors go to the server log.
    dump = state_dir / f"{DUMP_PREFIX}{key}{SUFFIX}"
    return [f"{DUMP_FLAG}{dump}", "-Xlog:cds=error", "-Xlog:cds+dynamic=error"]


def dumping(command: list[str]) -> bool:
    """Whether a JVM command line writes an archive as it exits."""
    return any(arg.startswith(DUMP_FLAG) for arg in command)


def keep_dump(state_dir: Path, exit_status: int | None) -> Path | None:
    """After the server of `state_dir` ended: move the archive it wrote into the cache if it
    ended cleanly (`exit_status` known and clean), else discard it. Returns the archive kept."""
    dumps = sorted(state_dir.glob(f"{DUMP_PREFIX}*{SUFFIX}"))
    if not dumps:
        return None
    kept = None
    if exit_status in CLEAN_EXITS and len(dumps) == 1:
        key = dumps[0].name[len(DUMP_PREFIX) : -len(SUFFIX)]
        with contextlib.suppress(OSError):
            kept = _install(dumps[0], key)
    _discard_dumps(state_dir)
    return kept


def _install(dump: Path, key: str) -> Path | None:
    """Move (or copy) `dump` to a temporary name in the cache, check it, rename it into place."""
    with dump.open("rb") as f:
        if f.read(4) != DYNAMIC_MAGIC:
            return None
    existing = find(key)
    if existing is not None:  # another server of the same build was first
        return existing
    archive = archive_path(key, dump.stat().st_size)
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name(f".{archive.name}.{os.getpid()}.tmp")
    try:
        try:  # a rename where the state folder and the cache share a file system (the default)
            os.replace(dump, tmp)
        except OSError:
            shutil.copyfile(dump, tmp)
        os.replace(tmp, archive)
    finally:
        tmp.unlink(missing_ok=True)
    _prune(archive.parent, keep=archive)
    return archive


def _prune(folder: Path, keep: Path) -> None:
    """Remove all but the KEEP newest archives (those of builds since replaced)."""
    archives = sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in [p for p in archives if p != keep][KEEP - 1 :]:
        old.unlink(missing_ok=True)


def _discard_dumps(state_dir: Path) -> None:
    for stale in state_dir.glob(f"{DUMP_PREFIX}*{SUFFIX}"):
        stale.unlink(missing_ok=True)


__all__ = [
    "archive_key",
    "archive_path",
    "discard",
    "dumping",
    "enabled",
    "find",
    "flags",
    "keep_dump",
    "used_archive",
]

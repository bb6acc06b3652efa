"""Build the Java side (`tools/neo4j`) with Maven and assemble `java` command lines for it.

The launcher and Neo4j's own jars live in `tools/neo4j/target/` after `mvn package`. We rebuild
only when the inputs change: a stamp file records the sha256 of the pom and the Java sources,
so a version bump in the pom (or an edit to Launcher.java) triggers exactly one rebuild.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from kgbench.errors import ServiceError, UserError
from kgbench.io import atomic_write_text
from kgbench.locations import TOOLS_DIR as KGBENCH_TOOLS

from .state import LAUNCHER_MAIN

TOOLS_DIR = KGBENCH_TOOLS / "neo4j"
TARGET_DIR = TOOLS_DIR / "target"
LAUNCHER_JAR = TARGET_DIR / "kgbench-neo4j.jar"
LIB_DIR = TARGET_DIR / "lib"
STAMP_FILE = TARGET_DIR / ".kgbench-build-stamp"
BUILD_LOG = TARGET_DIR / "maven-build.log"

ADMIN_MAIN = "org.neo4j.cli.AdminTool"
"""Entry point of `neo4j-admin` (from org.neo4j:neo4j-import-tool)."""

MIN_JAVA = 17

# Flags the Neo4j distribution itself passes to its JVM (minus TrustFinalNonStaticFields, which
# is unsafe embedded). The add-opens are required on Java 17: without them Neo4j fails with
# "Cannot to link java.nio.DirectByteBuffer".
BASE_JVM_FLAGS: tuple[str, ...] = (
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+DisableExplicitGC",
    # Die on OOM instead of limping on: the Python side then sees a dead process and a log.
    "-XX:+ExitOnOutOfMemoryError",
    "-Xss2m",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
)

_SIZE = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")


def check_size(value: str, what: str) -> str:
    """Validate a JVM-style memory size such as `512m` or `2g` (fails before a JVM starts)."""
    if not _SIZE.match(value):
        raise UserError(f"{what} must be a size like 512m or 2g, got {value!r}")
    return value


# For a server that lives for one short run (the pilot's): the client compiler only. On 2
# shared cores the optimising compiler's threads compete with Neo4j's own start-up, planning
# and first queries; with C1 alone the pilot's start took 5.8 s against 10.7-12.0 s and its
# start + load + extract 17.7 s against 23-29 s (paired, load 2.4-3.3). Steady-state speed is
# lower, so a server that stays up (benchmarks, bulk loads, a kept pilot server) never gets it.
SHORT_LIVED_JVM_FLAGS: tuple[str, ...] = ("-XX:TieredStopAtLevel=1",)


def jvm_flags(heap: str, short_lived: bool = False) -> list[str]:
    """JVM options for Neo4j with an explicit maximum heap (and, for a server that serves one
    short run, the client compiler only)."""
    extra = SHORT_LIVED_JVM_FLAGS if short_lived else ()
    return [f"-Xmx{check_size(heap, 'heap')}", *BASE_JVM_FLAGS, *extra]


def classpath() -> str:
    return f"{LAUNCHER_JAR}{os.pathsep}{LIB_DIR / '*'}"


def classpath_entries() -> list[Path]:
    """The jars `classpath()` names, the wildcard expanded (sorted: what a class-data
    archive's key is computed from, see `cds.archive_key`)."""
    return [LAUNCHER_JAR, *sorted(LIB_DIR.glob("*.jar"))]


@functools.cache
def java_executable() -> str:
    """`$JAVA_HOME/bin/java`, else `java` on PATH; must be Java 17 or newer."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = Path(java_home) / "bin" / "java" if java_home else None
    java = str(candidate) if candidate and candidate.exists() else shutil.which("java")
    if not java:
        raise UserError(
            "Java not found: the embedded Neo4j needs a JDK 17 or 21 (e.g. `apt install "
            "openjdk-17-jdk-headless`); set JAVA_HOME or put `java` on PATH"
        )
    major = _java_major(java)
    if major is not None and major < MIN_JAVA:
        raise UserError(f"{java} is Java {major}; Neo4j 5.26 needs Java 17 or 21")
    return java


@functools.cache
def java_version_text(java: str) -> str:
    """What `java -version` prints (empty if it cannot be run): read once per process."""
    try:
        return subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _java_major(java: str) -> int | None:
    out = java_version_text(java)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def _inputs_digest() -> str:
    """sha256 over the pom and every Java source: the build is current iff this matches."""
    digest = hashlib.sha256()
    sources = [TOOLS_DIR / "pom.xml", *sorted((TOOLS_DIR / "src").rglob("*.java"))]
    for path in sources:
        digest.update(str(path.relative_to(TOOLS_DIR)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def is_built() -> bool:
    """Whether target/ holds a classpath built from the current pom and sources."""
    try:
        stamp = STAMP_FILE.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return False
    return LAUNCHER_JAR.exists() and LIB_DIR.is_dir() and stamp == _inputs_digest()


def build(*, force: bool = False) -> Path:
    """Run Maven once if the classpath is missing or stale; return the target directory.

    The first build downloads Neo4j and its dependencies (about 170 MB) into ~/.m2, so progress
    goes to stderr. Stale jars in target/lib are removed first: after a version bump they would
    otherwise sit on the same classpath as the new ones.
    """
    if not force and is_built():
        return TARGET_DIR
    mvn = shutil.which("mvn")
    if not mvn:
        raise UserError(
            "Maven (mvn) not found: building the embedded Neo4j needs Maven 3.8+ and a JDK 17 "
            "(e.g. `apt install maven openjdk-17-jdk-headless`)"
        )
    java_executable()  # fail early with a clear message rather than inside Maven
    TARGET_DIR.mkdir(parents=True, exist_ok=True)
    if LIB_DIR.exists():
        shutil.rmtree(LIB_DIR)
    first = not (Path.home() / ".m2" / "repository" / "org" / "neo4j").exists()
    print(
        "kgbench: building the embedded Neo4j launcher with Maven"
        + (" (first build: downloads ~170 MB into ~/.m2)" if first else "")
        + " ...",
        file=sys.stderr,
        flush=True,
    )
    started = time.monotonic()
    cmd = [mvn, "-q", "-B", "-Dstyle.color=never", "package"]
    with open(BUILD_LOG, "wb") as log:
        result = subprocess.run(
            cmd,
            cwd=TOOLS_DIR,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if result.returncode != 0 or not LAUNCHER_JAR.exists():
        raise ServiceError(
            f"Maven build of {TOOLS_DIR} failed (exit {result.returncode}); is Maven Central "
            f"reachable? Last lines:\n{tail(BUILD_LOG)}\nFull log: {BUILD_LOG}"
        )
    atomic_write_text(STAMP_FILE, _inputs_digest() + "\n", 0o644)
    print(f"kgbench: Neo4j launcher built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return TARGET_DIR


def tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log file, for error messages (empty if unreadable)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    kept = [line for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


__all__ = [
    "ADMIN_MAIN",
    "LAUNCHER_MAIN",
    "TOOLS_DIR",
    "build",
    "check_size",
    "classpath",
    "classpath_entries",
    "is_built",
    "java_executable",
    "java_version_text",
    "jvm_flags",
    "tail",
]

"""Where the embedded server keeps its state, and how that state is read and written.

The state directory (default `<repo>/.cache/neo4j`) holds everything one embedded server needs:

- `server.json`  written by Python once Bolt answers: pid, port, URI, home, log file.
- `ready.json`   written by the Java launcher when Bolt is up (Python waits for it).
- `password`     the generated password for the `neo4j` user, mode 0600.
- `server.log`   the JVM's stdout/stderr (`server.log.1` is the previous run's).
- `data/`, `logs/`  the Neo4j home, unless `start(home=...)` points elsewhere.
- `lock`         serialises start/stop from concurrent processes.

State files are replaced atomically (temp file + `os.replace`) so a reader never sees half a
file, and liveness checks confirm that a recorded pid still runs *our* launcher, so a stale
state file after a reboot or a reused pid is never mistaken for a running server.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgbench.errors import UserError
from kgbench.io import SECRET_MODE, atomic_write_text
from kgbench.locations import cache_dir
from kgbench.untrusted import load_json_or_none

LAUNCHER_MAIN = "kgbench.neo4j.Launcher"
"""Java main class; also how a pid is recognised as our server (it is on its command line)."""

STATE_FILE = "server.json"
READY_FILE = "ready.json"
PASSWORD_FILE = "password"
LOG_FILE = "server.log"
LOCK_FILE = "lock"


def default_state_dir() -> Path:
    """The state directory: `$KGBENCH_HOME/.cache/neo4j`, else `<repo>/.cache/neo4j`."""
    return cache_dir("neo4j").resolve()


def resolve_state_dir(state_dir: Path | str | None) -> Path:
    """An absolute state directory (the JVM runs elsewhere, so relative paths would break)."""
    return Path(state_dir).expanduser().resolve() if state_dir else default_state_dir()


@dataclass(frozen=True)
class ServerRecord:
    """What `server.json` records about a running embedded server."""

    pid: int
    port: int
    uri: str
    home: str
    log_file: str
    auth: bool
    started_at: float
    startup_seconds: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ServerRecord:
        return cls(
            pid=int(data["pid"]),
            port=int(data["port"]),
            uri=str(data["uri"]),
            home=str(data["home"]),
            log_file=str(data["log_file"]),
            auth=bool(data.get("auth", True)),
            started_at=float(data.get("started_at", 0.0)),
            startup_seconds=float(data.get("startup_seconds", 0.0)),
        )


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`, or None when it is missing or unreadable (e.g. truncated)."""
    data = load_json_or_none(path)
    return data if isinstance(data, dict) else None


def read_record(state_dir: Path) -> ServerRecord | None:
    """The recorded server, or None when there is no (valid) state file."""
    data = read_json(state_dir / STATE_FILE)
    if data is None:
        return None
    try:
        return ServerRecord.from_json(data)
    except (KeyError, TypeError, ValueError):
        return None


def write_record(state_dir: Path, record: ServerRecord) -> None:
    atomic_write_text(state_dir / STATE_FILE, json.dumps(asdict(record), indent=2) + "\n", 0o644)


def clear_record(state_dir: Path) -> None:
    """Forget the server: remove the state and ready files (the password stays)."""
    for name in (STATE_FILE, READY_FILE):
        with contextlib.suppress(FileNotFoundError):
            (state_dir / name).unlink()


def ensure_password(state_dir: Path) -> Path:
    """The password file, created with a fresh random password (mode 0600) if missing.

    The password is only ever handed to the JVM through this file and never printed; keeping it
    across restarts lets clients that read it once keep working.
    """
    path = state_dir / PASSWORD_FILE
    if path.exists():
        if path.stat().st_mode & 0o077:
            os.chmod(path, SECRET_MODE)
        return path
    atomic_write_text(path, secrets.token_urlsafe(24) + "\n", SECRET_MODE)
    return path


def read_password(state_dir: Path) -> str | None:
    try:
        return (state_dir / PASSWORD_FILE).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def locked(state_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the state directory (blocks other start/stop calls).

    A directory that cannot be created or written (a path under a file, no permission) is a
    UserError naming it, not an OSError traceback."""
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        handle = open(state_dir / LOCK_FILE, "a+b")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise UserError(
            f"cannot use {state_dir} as the Neo4j state directory: {exc.strerror or exc}"
        ) from None
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def pid_is_launcher(pid: int) -> bool:
    """Whether `pid` is alive and runs our launcher (guards against stale and reused pids).

    Zombies count as dead. Where /proc is unavailable (macOS) a live pid is trusted.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # someone else's process: not ours
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not Path("/proc/self").exists():
        return True
    try:
        return LAUNCHER_MAIN.encode() in cmdline.read_bytes()
    except OSError:
        return False

"""Start, stop and inspect the embedded Neo4j server (Java launcher in `tools/neo4j`).

`start()` builds the launcher if needed, picks a free loopback port, generates a password, runs
the JVM detached in its own session (so it outlives the command that started it and ignores the
terminal's Ctrl-C), and returns once Bolt answers `RETURN 1` with that password. `stop()` sends
SIGTERM, which makes the launcher shut Neo4j down cleanly. Everything lives in one state
directory (see `state.py`), so several independent servers can run side by side (tests do).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from kgbench.errors import ServiceError, UserError

from . import cds, jvm
from .importer import ImportResult, bulk_import
from .jvm import build
from .state import (
    LAUNCHER_MAIN,
    LOG_FILE,
    PASSWORD_FILE,
    READY_FILE,
    ServerRecord,
    clear_record,
    ensure_password,
    locked,
    pid_is_launcher,
    read_json,
    read_password,
    read_record,
    resolve_state_dir,
    write_record,
)

DEFAULT_HEAP = "1g"
DEFAULT_PAGECACHE = "128m"
DEFAULT_START_TIMEOUT = 120.0
HEAP_ENV = "KGBENCH_NEO4J_HEAP"
PAGECACHE_ENV = "KGBENCH_NEO4J_PAGECACHE"

# Servers started by this process, so their exit status is reaped (a zombie would still
# answer `kill -0`) and `stop()` can wait on them directly.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class ServerInfo:
    """A running embedded server. The password is in `password_file`, never in here."""

    uri: str
    pid: int
    port: int
    home: Path
    state_dir: Path
    log_file: Path
    password_file: Path | None
    startup_seconds: float
    already_running: bool = False


@dataclass(frozen=True)
class ServerStatus:
    """Whether the embedded server recorded in a state directory is running."""

    running: bool
    state_dir: Path
    uri: str | None = None
    pid: int | None = None
    log_file: Path | None = None


def start(
    state_dir: Path | str | None = None,
    port: int | None = None,
    *,
    home: Path | str | None = None,
    heap: str | None = None,
    pagecache: str | None = None,
    auth: bool = True,
    timeout: float = DEFAULT_START_TIMEOUT,
    watch_pid: int | None = None,
    short_lived: bool = False,
) -> ServerInfo:
    """Start the embedded server, or return the one already running for `state_dir`.

    `home` is the Neo4j home (data in `home/data`); it defaults to `state_dir`, and pointing it
    at a `bulk_import` store serves that store. `heap`/`pagecache` default to
    $KGBENCH_NEO4J_HEAP / $KGBENCH_NEO4J_PAGECACHE, else 1g / 128m. With `watch_pid`, the
    server shuts itself down once that process exits (used by test fixtures). `short_lived`:
    the server serves one short run and is stopped after it (`jvm.SHORT_LIVED_JVM_FLAGS`).
    """
    directory = resolve_state_dir(state_dir)
    home_dir = Path(home).expanduser().resolve() if home else directory
    heap = jvm.check_size(heap or os.environ.get(HEAP_ENV) or DEFAULT_HEAP, "heap")
    pagecache = jvm.check_size(
        pagecache or os.environ.get(PAGECACHE_ENV) or DEFAULT_PAGECACHE, "page cache"
    )
    if port is not None and not 0 < port < 65536:
        raise UserError(f"port must be 1..65535, got {port}")
    with locked(directory):
        record = read_record(directory)
        if record is not None and pid_is_launcher(record.pid):
            return _already_running(directory, record, home_dir, port)
        clear_record(directory)
        jvm.build()
        try:
            return _launch(
                directory, home_dir, port, heap, pagecache, auth, timeout, watch_pid, short_lived
            )
        except _ExitedWhileStarting as exc:
            if exc.archive is None or not exc.crashed:
                raise
            # The JVM died by a signal on its class-data archive (`cds`: a damaged one can kill
            # it before it checks anything): once more without it. The archive goes only if
            # that start works, so a start that fails for another reason keeps a good one.
            info = _launch(
                directory, home_dir, port, heap, pagecache, auth, timeout, watch_pid,
                short_lived, use_archive=False,
            )  # fmt: skip
            cds.discard(exc.archive)
            return info


class _ExitedWhileStarting(ServiceError):
    """The server's JVM ended before it served; `archive`: the class-data archive it mapped;
    `crashed`: it died by a signal (a JVM fatal error aborts), not with the launcher's
    own exit code for a start it refused (1 or 2)."""

    archive: Path | None = None
    crashed: bool = False


def _already_running(
    directory: Path, record: ServerRecord, home: Path, port: int | None
) -> ServerInfo:
    if Path(record.home) != home:
        raise UserError(
            f"The embedded Neo4j for {directory} already runs at {record.uri} on home "
            f"{record.home}; stop it first (`kgbench neo4j stop`) to serve {home}"
        )
    if port is not None and port != record.port:
        raise UserError(
            f"The embedded Neo4j already runs at {record.uri}, not on port {port}; stop it "
            f"first (`kgbench neo4j stop`)"
        )
    return _info(directory, record, already_running=True)


def _launch(
    directory: Path,
    home: Path,
    port: int | None,
    heap: str,
    pagecache: str,
    auth: bool,
    timeout: float,
    watch_pid: int | None,
    short_lived: bool = False,
    use_archive: bool = True,
) -> ServerInfo:
    port = _check_port_free(port) if port is not None else _free_port()
    password_file = ensure_password(directory) if auth else None
    ready_file = directory / READY_FILE
    log_file = directory / LOG_FILE
    if log_file.exists():
        os.replace(log_file, log_file.with_name(LOG_FILE + ".1"))
    cmd = [
        jvm.java_executable(),
        *jvm.jvm_flags(heap, short_lived),
        *(cds.flags(directory, short_lived=short_lived) if use_archive else ()),
        "-cp",
        jvm.classpath(),
        LAUNCHER_MAIN,
        "--home", str(home),
        "--port", str(port),
        "--ready-file", str(ready_file),
        "--pagecache", pagecache,
    ]  # fmt: skip
    cmd += ["--password-file", str(password_file)] if password_file else ["--no-auth"]
    if watch_pid:
        cmd += ["--watch-pid", str(watch_pid)]
    started = time.monotonic()
    with open(log_file, "wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    _CHILDREN[proc.pid] = proc
    try:
        uri = _wait_until_ready(proc, ready_file, log_file, directory, auth, started, timeout)
    except BaseException as exc:
        _terminate(proc.pid)
        clear_record(directory)
        if isinstance(exc, _ExitedWhileStarting):
            exc.archive = cds.used_archive(cmd)
        raise
    record = ServerRecord(
        pid=proc.pid,
        port=port,
        uri=uri,
        home=str(home),
        log_file=str(log_file),
        auth=auth,
        started_at=time.time(),
        startup_seconds=round(time.monotonic() - started, 2),
    )
    write_record(directory, record)
    return _info(directory, record, already_running=False)


def _wait_until_ready(
    proc: subprocess.Popen[bytes],
    ready_file: Path,
    log_file: Path,
    directory: Path,
    auth: bool,
    started: float,
    timeout: float,
) -> str:
    """Poll until the launcher's ready file exists and Bolt answers `RETURN 1`; the URI.

    The driver is imported here, after the JVM was launched, not with this module: importing
    it (and the pandas it pulls in) takes 0.4-1 s, spent this way while the JVM starts
    rather than before it is launched."""
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError, DriverError, Neo4jError

    from .connect import describe_failure, probe

    deadline = started + timeout
    last_error = "no ready file yet"
    while True:
        code = proc.poll()
        if code is not None:
            exited = _ExitedWhileStarting(
                f"The embedded Neo4j exited with code {code} while starting. Last lines of "
                f"{log_file}:\n{jvm.tail(log_file)}"
            )
            exited.crashed = code < 0 or code >= 128
            raise exited
        ready = read_json(ready_file)
        if ready and int(ready.get("pid", -1)) == proc.pid:
            uri = str(ready["bolt_uri"])
            password = read_password(directory) if auth else None
            try:
                with GraphDatabase.driver(
                    uri,
                    auth=("neo4j", password) if password else None,
                    connection_timeout=5.0,
                    connection_acquisition_timeout=5.0,
                ) as driver:
                    probe(driver)
                return uri
            except AuthError as exc:
                raise ServiceError(
                    f"The embedded Neo4j at {uri} rejected the password in "
                    f"{directory / PASSWORD_FILE} ({describe_failure(exc, 5.0)}); see {log_file}"
                ) from None
            except (DriverError, Neo4jError, OSError) as exc:
                last_error = describe_failure(exc, 5.0)
        if time.monotonic() > deadline:
            raise ServiceError(
                f"The embedded Neo4j did not answer on Bolt within {timeout:g} s "
                f"({last_error}). Last lines of {log_file}:\n{jvm.tail(log_file)}"
            )
        time.sleep(0.2)


def stop(state_dir: Path | str | None = None, *, timeout: float = 60.0) -> bool:
    """Stop the embedded server (SIGTERM, then SIGKILL after `timeout` s).

    Returns True if a running server was stopped, False if none was running. Either way the
    state file is removed; the data and the password stay.
    """
    directory = resolve_state_dir(state_dir)
    with locked(directory):
        record = read_record(directory)
        running = record is not None and _alive(record.pid)
        exit_status = None
        if record is not None and running:
            child = _CHILDREN.get(record.pid)
            if child is not None and cds.dumping(list(map(str, child.args))):
                timeout += cds.DUMP_SECONDS  # it writes its class-data archive as it exits
            exit_status = _terminate(record.pid, timeout)
        # a class-data archive the server wrote as it exited (`cds`): kept only after a clean end
        cds.keep_dump(directory, exit_status)
        clear_record(directory)
        return running


def status(state_dir: Path | str | None = None) -> ServerStatus:
    """Whether the server recorded in `state_dir` runs (its pid runs our launcher)."""
    directory = resolve_state_dir(state_dir)
    record = read_record(directory)
    if record is None or not _alive(record.pid):
        return ServerStatus(running=False, state_dir=directory)
    return ServerStatus(
        running=True,
        state_dir=directory,
        uri=record.uri,
        pid=record.pid,
        log_file=Path(record.log_file),
    )


def _alive(pid: int) -> bool:
    proc = _CHILDREN.get(pid)
    if proc is not None and proc.poll() is not None:
        return False
    return pid_is_launcher(pid)


def _terminate(pid: int, timeout: float = 60.0) -> int | None:
    """SIGTERM (clean Neo4j shutdown via the launcher's hook), SIGKILL if it hangs. Returns
    the exit status of a server this process started (None for another's: unknown)."""
    proc = _CHILDREN.pop(pid, None)
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                return proc.wait(wait) if sig == signal.SIGTERM else None
        else:
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if not pid_is_launcher(pid):
                    return None
                time.sleep(0.1)
    return None


def _info(directory: Path, record: ServerRecord, *, already_running: bool) -> ServerInfo:
    return ServerInfo(
        uri=record.uri,
        pid=record.pid,
        port=record.port,
        home=Path(record.home),
        state_dir=directory,
        log_file=Path(record.log_file),
        password_file=directory / PASSWORD_FILE if record.auth else None,
        startup_seconds=record.startup_seconds,
        already_running=already_running,
    )


def _free_port() -> int:
    """A currently free TCP port on 127.0.0.1 (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _check_port_free(port: int) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise UserError(
                f"Port {port} on 127.0.0.1 is already in use; pick another or omit --port"
            ) from None
    return port


__all__ = [
    "ImportResult",
    "ServerInfo",
    "ServerStatus",
    "build",
    "bulk_import",
    "start",
    "status",
    "stop",
]

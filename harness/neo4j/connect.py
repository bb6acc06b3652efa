"""Connect to Neo4j: the user's own server when `NEO4J_URI` is set, else the embedded one.

`open_driver()` hands back a driver that has already run `RETURN 1`, or raises one
`ServiceError` saying which URI failed, how (refused, authentication, timeout, ...) and how to
start the embedded server. Driver tracebacks are not shown for these expected failures, and the
password never appears in messages, reprs or logs.
"""

from __future__ import annotations

import logging
import os
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import (
    AuthError,
    ConfigurationError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
)

from kgbench.errors import ServiceError
from kgbench.untrusted import redact_uri

from .state import (
    LOG_FILE,
    PASSWORD_FILE,
    STATE_FILE,
    pid_is_launcher,
    read_password,
    read_record,
    resolve_state_dir,
)

# A library must not print through logging's last-resort handler: without this, a failed
# routing lookup writes "Unable to retrieve routing information" to stderr on its own.
logging.getLogger("neo4j").addHandler(logging.NullHandler())

START_HINT = "start the embedded server with `kgbench neo4j start` (or `make neo4j`)"
SCHEMES = frozenset({"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"})
DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class ConnectionSettings:
    """Where and how to connect. `password` is kept out of `repr()` so it cannot leak."""

    uri: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    source: Literal["env", "embedded"] = "env"
    state_dir: Path | None = None

    @property
    def auth(self) -> tuple[str, str] | None:
        if self.password is None:
            return None
        return (self.user or "neo4j", self.password)

    def hint(self) -> str:
        """What the user can do when this connection fails."""
        if self.source == "env":
            return (
                "check NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD and NEO4J_DATABASE, or unset "
                f"NEO4J_URI and {START_HINT}"
            )
        log = self.state_dir / LOG_FILE if self.state_dir else LOG_FILE
        return f"restart it with `kgbench neo4j stop` then `kgbench neo4j start`; log: {log}"


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def connection_settings(state_dir: Path | str | None = None) -> ConnectionSettings:
    """Settings from `NEO4J_URI` (+ `NEO4J_USER`, `NEO4J_PASSWORD`, `NEO4J_DATABASE`) if set,
    otherwise from the embedded server's state and password files in `state_dir`.

    Raises `ServiceError` when neither is available, so callers fail before any query.
    """
    uri = _env("NEO4J_URI")
    if uri:
        return ConnectionSettings(
            uri=uri,
            user=_env("NEO4J_USER") or "neo4j",
            password=_env("NEO4J_PASSWORD"),
            database=_env("NEO4J_DATABASE"),
            source="env",
        )
    directory = resolve_state_dir(state_dir)
    record = read_record(directory)
    if record is None:
        raise ServiceError(
            f"No Neo4j server configured: NEO4J_URI is not set and no embedded server is "
            f"running (no {directory / STATE_FILE}); {START_HINT}, or set NEO4J_URI"
        )
    if not pid_is_launcher(record.pid):
        raise ServiceError(
            f"The embedded Neo4j recorded for {record.uri} (pid {record.pid}) is no longer "
            f"running; {START_HINT}. Its last log: {record.log_file}"
        )
    password = read_password(directory) if record.auth else None
    if record.auth and password is None:
        raise ServiceError(
            f"The embedded Neo4j at {record.uri} has authentication on but "
            f"{directory / PASSWORD_FILE} is missing; stop and start it again to fix this"
        )
    return ConnectionSettings(
        uri=record.uri,
        user="neo4j",
        password=password,
        database=_env("NEO4J_DATABASE"),
        source="embedded",
        state_dir=directory,
    )


def open_driver(
    settings: ConnectionSettings | None = None, *, timeout: float = DEFAULT_TIMEOUT
) -> neo4j.Driver:
    """A driver verified with `RETURN 1` on the target database; the caller closes it.

    Raises `ServiceError` (one message, no driver traceback) when the server is unreachable,
    rejects the credentials, does not answer in `timeout` seconds or the URI is invalid.
    """
    settings = settings or connection_settings()
    scheme = urlsplit(settings.uri).scheme.lower()
    uri = redact_uri(settings.uri)  # NEO4J_URI may hold user:password@ (never shown)
    if scheme not in SCHEMES:
        raise ServiceError(
            f"Cannot connect to Neo4j at {uri}: unsupported URI scheme {scheme!r} "
            f"(use bolt://, neo4j://, neo4j+s:// or their +ssc variants); {settings.hint()}"
        )
    try:
        driver = GraphDatabase.driver(
            settings.uri,
            auth=settings.auth,
            connection_timeout=timeout,
            connection_acquisition_timeout=timeout,
            user_agent="kgbench",
        )
    except (ConfigurationError, ValueError) as exc:
        raise ServiceError(
            f"Cannot connect to Neo4j at {uri}: invalid URI or settings "
            f"({_secret_free(exc, settings)}); {settings.hint()}"
        ) from None
    try:
        probe(driver, settings.database)
    except (DriverError, Neo4jError, OSError) as exc:
        driver.close()
        reason = describe_failure(exc, timeout, settings)
        raise ServiceError(
            f"Cannot connect to Neo4j at {uri}: {_secret_free(reason, settings)}; {settings.hint()}"
        ) from None
    return driver


def _secret_free(text: object, settings: ConnectionSettings) -> str:
    """A driver's message without the URI's userinfo (the driver quotes the URI it was given)
    or the password."""
    out = redact_uri(text)
    userinfo = urlsplit(settings.uri).password
    for secret in (settings.password, userinfo):
        if secret:
            out = out.replace(secret, "***")
    return out


def probe(driver: neo4j.Driver, database: str | None = None) -> None:
    """Run `RETURN 1` once, without the driver's retries, so failures surface at once."""
    with driver.session(database=database) as session:
        session.run("RETURN 1").consume()


def describe_failure(
    exc: BaseException, timeout: float, settings: ConnectionSettings | None = None
) -> str:
    """A short reason for a failed connection: refused, authentication, timeout, DNS, TLS."""
    causes = list(_causes(exc))
    user = settings.user if settings and settings.user else "neo4j"
    if any(isinstance(c, AuthError) for c in causes):
        return f"authentication failed for user '{user}' (wrong or missing password)"
    if any(_code(c).endswith("AuthenticationRateLimit") for c in causes):
        return f"authentication failed for user '{user}' (locked after repeated wrong passwords)"
    for cause in causes:
        if _code(cause).endswith("DatabaseNotFound"):
            name = settings.database if settings else None
            return f"database '{name}' does not exist" if name else "database does not exist"
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return "connection refused (nothing is listening there)"
    if any(isinstance(c, socket.gaierror) for c in causes):
        return "host name could not be resolved"
    if any(isinstance(c, TimeoutError | socket.timeout) for c in causes):
        return f"timed out after {timeout:g} s"
    if any(isinstance(c, ssl.SSLError) for c in causes):
        return "TLS handshake failed (check the +s / +ssc scheme and the certificate)"
    if isinstance(exc, ServiceUnavailable):
        return f"service unavailable ({_first_line(exc)})"
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc`, its causes/contexts and the members of exception groups, depth first."""
    seen: list[BaseException] = []
    stack = [exc]
    while stack:
        current = stack.pop()
        if any(current is s for s in seen):
            continue
        seen.append(current)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        for nxt in (current.__cause__, current.__context__):
            if nxt is not None:
                stack.append(nxt)
    return seen


def _code(exc: BaseException) -> str:
    """The Neo4j status code of a server error (e.g. `Neo.ClientError...`), else ''."""
    return (exc.code or "") if isinstance(exc, Neo4jError) else ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__

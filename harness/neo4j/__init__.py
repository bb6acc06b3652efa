"""The embedded Neo4j server for kgbench, and connections to it or to the user's own Neo4j.

- `server`: build the Java launcher (Maven), `start`/`stop`/`status` the embedded server.
- `importer`: `bulk_import` CSV files into a fresh store with `neo4j-admin database import`.
- `connect`: `connection_settings`/`open_driver` (honours NEO4J_URI and friends).
- `cli`: the `neo4j_app` Typer app, mounted as `kgbench neo4j ...`.
"""

from __future__ import annotations

from kgbench.lazy import lazy_exports

# Lazy attribute access (the sqlglot pattern): `kgbench --help` and the compiler never pay for
# importing the neo4j driver; it loads on first use of a name that needs it.
_EXPORTS = {
    "ConnectionSettings": ".connect",
    "connection_settings": ".connect",
    "open_driver": ".connect",
    "ImportResult": ".importer",
    "bulk_import": ".importer",
    "ServerInfo": ".server",
    "ServerStatus": ".server",
    "build": ".server",
    "start": ".server",
    "status": ".server",
    "stop": ".server",
    "default_state_dir": ".state",
}

__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "ConnectionSettings",
    "ImportResult",
    "ServerInfo",
    "ServerStatus",
    "build",
    "bulk_import",
    "connection_settings",
    "default_state_dir",
    "open_driver",
    "start",
    "status",
    "stop",
]

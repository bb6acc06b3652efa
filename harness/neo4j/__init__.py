"""The embedded Neo4j server for kgbench, and connections to it or to the user's own Neo4j.

- `server`: build the Java launcher (Maven), `start`/`stop`/`status` the embedded server.
- `importer`: `bulk_import` CSV files into a fresh store with `neo4j-admin database import`.
- `connect`: `connection_settings`/`open_driver` (honours NEO4J_URI and friends).
- `cli`: the `neo4j_app` Typer app, mounted as `kgbench neo4j ...`.
"""

from __future__ import annotations

from .connect import ConnectionSettings, connection_settings, open_driver
from .importer import ImportResult, bulk_import
from .server import ServerInfo, ServerStatus, build, start, status, stop
from .state import default_state_dir

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

"""A local OpenAI-compatible reference server (chat completions, files, batches, faults).

`start_server_in_thread(...) -> (base_url, stop_fn)` serves on loopback for tests and
benchmarks; `kgbench serve-reference` serves in the foreground.
"""

from __future__ import annotations

from kgbench.lazy import lazy_exports

# Lazy attribute access (as harness.neo4j): the root command line mounts `serve-reference`
# from `.cli`, and importing this package must not load the server and the contract models
# behind it (~0.2 s) for every other command, `kgbench validate` included.
_EXPORTS = {
    "ReferenceServer": ".app",
    "ServerConfig": ".app",
    "start_server_in_thread": ".app",
    "FAULT_KINDS": ".faults",
    "FaultPlan": ".faults",
    "parse_fault_kinds": ".faults",
}

__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "FAULT_KINDS",
    "FaultPlan",
    "ReferenceServer",
    "ServerConfig",
    "parse_fault_kinds",
    "start_server_in_thread",
]

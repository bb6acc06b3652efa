"""A local OpenAI-compatible reference server (chat completions, files, batches, faults).

`start_server_in_thread(...) -> (base_url, stop_fn)` serves on loopback for tests and
benchmarks; `kgbench serve-reference` serves in the foreground.
"""

from __future__ import annotations

from .app import ReferenceServer, ServerConfig, start_server_in_thread
from .faults import FAULT_KINDS, FaultPlan, parse_fault_kinds

__all__ = [
    "FAULT_KINDS",
    "FaultPlan",
    "ReferenceServer",
    "ServerConfig",
    "parse_fault_kinds",
    "start_server_in_thread",
]

"""Small, exact file helpers shared by the scenario generator and gold releases.

Scenario files and release files are compared byte for byte (determinism tests, release
content hashes), so there is exactly one way to serialise a record, and every write goes
through a temporary sibling and an atomic rename: a crash never leaves half a file behind.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any


def record_line(record: dict[str, Any]) -> str:
    """One JSON Lines record: sorted keys, compact separators kept readable, UTF-8 text."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"


def jsonl_bytes(records: Iterable[dict[str, Any]]) -> bytes:
    return "".join(record_line(r) for r in records).encode("utf-8")


def json_bytes(obj: Any) -> bytes:
    """Canonical pretty JSON (manifests, schemas): sorted keys, two spaces, trailing newline."""
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

"""Small, exact file helpers shared by the scenario generator and gold releases.

Scenario files and release files are compared byte for byte (determinism tests, release
content hashes), so there is exactly one way to serialise a record, and every write goes
through a temporary sibling and an atomic rename: a crash never leaves half a file behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError


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


def atomic_write_bytes(path: Path, content: bytes) -> None:
    """Write one file via a temporary sibling and rename, so readers see old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; malformed lines are user errors."""
    if not path.is_file():
        raise UserError(f"file not found: {path}")
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"not valid JSON: {exc.msg}", Location(str(path), n)) from None
            if not isinstance(item, dict):
                raise UserError("expected a JSON object on each line", Location(str(path), n))
            yield n, item

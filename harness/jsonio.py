"""Files the harness writes and reads: atomic writes and JSON Lines, in one place.

Every file the harness produces is written to a temporary sibling, flushed to disk and
renamed over the target, so a reader (or a crashed run restarted) sees the old content or
the new, never half of it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError


def fsync_dir(folder: Path) -> None:
    """Make a rename durable: fsync the folder that holds the new name (POSIX)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file, fsync, os.replace, fsync the folder: all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    """Pretty, key-sorted JSON with a trailing newline (deterministic bytes)."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def jsonl_text(records: Iterable[dict[str, Any]]) -> str:
    """JSON Lines with sorted keys: the same records always give the same bytes."""
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)


def iter_jsonl(path: Path, what: str = "JSON") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; a bad line is a UserError naming it."""
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
                raise UserError(f"expected a {what} object on each line", Location(str(path), n))
            yield n, item


def read_jsonl(path: Path, what: str = "JSON") -> list[dict[str, Any]]:
    return [item for _, item in iter_jsonl(path, what)]

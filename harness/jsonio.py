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


def utf8_bytes(text: str) -> bytes:
    """UTF-8 bytes of any str, never an exception.

    A model can send a lone surrogate (a truncated emoji, `"\\ud83d"`), which a Python str
    holds but UTF-8 cannot encode. It becomes the six characters `\\ud83d`. In JSON text a
    lone surrogate can only sit inside a string, where that escape is the standard spelling,
    so JSON written this way reads back as the very same str; in other text it is a visible
    escape instead of a crash.
    """
    return text.encode("utf-8", errors="backslashreplace")


def dumps(obj: Any, **kwargs: Any) -> str:
    """`json.dumps` keeping UTF-8 text as is (write its result with `utf8_bytes`)."""
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(obj, **kwargs)


def json_line_bytes(obj: Any, **kwargs: Any) -> bytes:
    """One JSON Lines record as bytes (safe for any str the object holds)."""
    return utf8_bytes(dumps(obj, **kwargs) + "\n")


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, utf8_bytes(text))


def atomic_write_json(path: Path, obj: Any) -> None:
    """Pretty, key-sorted JSON with a trailing newline (deterministic bytes)."""
    atomic_write_text(path, dumps(obj, indent=2, sort_keys=True) + "\n")


def jsonl_text(records: Iterable[dict[str, Any]]) -> str:
    """JSON Lines with sorted keys: the same records always give the same bytes."""
    return "".join(dumps(r, sort_keys=True) + "\n" for r in records)


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

"""A small on-disk cache for values derived from spec files by LinkML.

Deriving the table specifications and the declaration JSON Schemas means importing LinkML
and running its SchemaView and JsonSchemaGenerator (about a second). Their results depend
only on the schema files, so they are stored as JSON under .cache/kgbench/, keyed by the
sha256 of those files and the LinkML version, and re-checked against the files on every use.
`KGBENCH_NO_CACHE=1` turns the cache off (benchmarks use it to measure cold runs). The spec's
own JSON Schemas are not cached here but shipped (`compiler.jsonschemas.SHIPPED`), so they
stay available with the cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from kgbench.errors import UserError
from kgbench.io import atomic_write_text, sha256_file
from kgbench.locations import cache_dir
from kgbench.untrusted import load_json_object

CACHE_DIR = cache_dir("kgbench")
FORMAT = "2"  # 2: table columns carry max_length and single_line


@cache
def _linkml_version() -> str:
    """The installed LinkML's version, part of every key: looked up once per process (each
    lookup scans the installed distributions, and a warm validation makes a dozen)."""
    from importlib import metadata

    try:
        return metadata.version("linkml")
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


def enabled() -> bool:
    return os.environ.get("KGBENCH_NO_CACHE", "") in ("", "0")


def cached(
    kind: str,
    key_files: Iterable[Path],
    extra: str,
    build: Callable[[], tuple[Any, Iterable[Path]]],
) -> Any:
    """Return build()'s value, from cache when every file it depended on is unchanged.

    `build` returns (value, dependency files); the value must be JSON-serialisable.
    """
    if not enabled():
        return build()[0]
    key_files = sorted({Path(p).resolve() for p in key_files})
    digest = hashlib.sha256(f"{FORMAT}|{kind}|{extra}|{_linkml_version()}".encode())
    hashed: dict[str, str] = {}  # this call's hashes: a key file is often a dependency too
    for path in key_files:
        hashed[str(path)] = file_hash = sha256_file(path)
        digest.update(str(path).encode())
        digest.update(file_hash.encode())
    entry = CACHE_DIR / f"{kind}-{digest.hexdigest()[:32]}.json"

    def current(p: str) -> str | None:
        if p not in hashed:
            hashed[p] = sha256_file(Path(p)) if Path(p).exists() else None
        return hashed[p]

    try:
        stored = load_json_object(entry, "cache entry", max_depth=None)
        if all((now := current(p)) is not None and now == h for p, h in stored["deps"].items()):
            return stored["value"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, UserError):
        pass  # a missing or damaged entry is rebuilt
    value, deps = build()
    record = {"deps": {str(Path(p).resolve()): sha256_file(Path(p)) for p in deps}, "value": value}
    with contextlib.suppress(OSError):  # a read-only checkout still works, uncached
        atomic_write_text(entry, json.dumps(record))
    return value

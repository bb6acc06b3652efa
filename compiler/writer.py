"""Atomic replacement of an output folder.

Everything is written into a sibling temporary folder first; only when every file is in place
is the old folder swapped out by rename. A failure at any point leaves the previous
generated/<domain>/ untouched and removes the half-written temporary folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .backends.base import Artifact


def write_tree(target: Path, artifacts: Iterable[Artifact], keep: Iterable[str] = ()) -> None:
    """Replace `target` with exactly `artifacts`, keeping the named subfolders of the old tree.

    `keep` lists subfolders owned by other commands (e.g. published gold releases), which a
    recompile must never delete.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    try:
        for art in artifacts:
            path = tmp / art.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(art.content)
        for name in keep:
            src = target / name
            if src.exists():
                shutil.copytree(src, tmp / name, symlinks=True)
        if target.exists():
            os.replace(target, old)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not target.exists():
            os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def atomic_write_bytes(path: Path, content: bytes) -> None:
    """Write one file via a temporary sibling and rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

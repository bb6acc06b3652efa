"""Atomic replacement of an output folder (generated/<domain>/).

Everything is written into a sibling temporary folder first; only when every file is in place
is the old folder swapped out by rename (`kgbench.io.replace_folder`). A failure at any point
leaves the previous generated/<domain>/ untouched and removes the half-written folder.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kgbench.io import replace_folder

from .backends.base import Artifact


def write_tree(target: Path, artifacts: Iterable[Artifact], keep: Iterable[str] = ()) -> None:
    """Replace `target` with exactly `artifacts`, keeping the named subfolders of the old tree.

    `keep` lists subfolders owned by other commands (e.g. published gold releases), which a
    recompile must never delete. Artifacts are written one at a time as the iterable yields
    them, a streamed one chunk by chunk, so a large domain's outputs are never all in memory.
    """
    items = ((a.path, a.chunks() if a.is_streamed else a.content) for a in artifacts)
    replace_folder(target, items, keep)

"""kgbench's own version and, in a clone, the commit it runs from (for --version and reports)."""

from __future__ import annotations

import subprocess
from functools import cache

from kgbench import __version__
from kgbench.locations import CHECKOUT, IN_CHECKOUT


@cache
def commit() -> str | None:
    """The short commit of the clone kgbench runs from, with `+dirty` when tracked files were
    changed since; None for an installed kgbench (or without git)."""
    if not IN_CHECKOUT or not (CHECKOUT / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(CHECKOUT), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(CHECKOUT), "diff", "--quiet", "HEAD", "--"],
            capture_output=True,
            timeout=30,
        ).returncode
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if dirty == 1 else head or None


def describe() -> str:
    """`kgbench 0.1.0 (commit 1a2b3c4d5e6f)`, or without the commit when installed."""
    sha = commit()
    return f"kgbench {__version__}" + (f" (commit {sha})" if sha else "")

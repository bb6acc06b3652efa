"""Freed memory handed back to the operating system between the phases of a large load.

A load frees much on the way (CSV parse buffers, raw columns once trimmed, each table's Python
columns once its records are made, per-row indexes of a check), but neither allocator gives it
back by itself: Arrow's pool (mimalloc) keeps freed segments for reuse, and glibc's malloc keeps
freed pages inside its heap. Python's small objects live among them, so the process's resident
set only grows, and the next phase's allocations land on top of the last one's garbage: at
1,000,000 assertions a load ended with ~0.4 GB more resident than it held. `give_back()`,
called where a phase has just let go of something large, returns those pages (a few ms). It
frees nothing that is still referenced and changes no result; where either call is missing
(another libc, a pyarrow without the method) it does what it can.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache


@cache
def _malloc_trim():
    """glibc's `malloc_trim`, or None (musl, macOS, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


def give_back() -> None:
    """Return the pages freed so far to the operating system: Arrow's unused pool memory and
    the free pages of glibc's heap (`malloc_trim(0)`)."""
    if "pyarrow" in sys.modules:  # nothing to release in a process that never loaded Arrow
        pool = sys.modules["pyarrow"].default_memory_pool()
        release = getattr(pool, "release_unused", None)
        if release is not None:
            release()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)

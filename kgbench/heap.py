"""Freed memory handed back to the operating system between the phases of a large load.

A load frees much on the way (CSV parse buffers, raw columns once trimmed, each table's Python
columns once its records are made, per-row indexes of a check), but neither allocator gives it
back by itself: Arrow's pool (mimalloc) keeps freed segments for reuse, and glibc's malloc keeps
freed pages inside its heap. Python's small objects live among them, so the process's resident
set only grows, and the next phase's allocations land on top of the last one's garbage: at
1,000,000 assertions a load ended with ~0.4 GB more resident than it held. `give_back()`,
called where a phase of a large load (`worth_giving_back`) has just let go of something
large, returns those pages (a few ms). It frees nothing that is still referenced and changes
no result; where either call is missing (another libc, a pyarrow without the method) it does
what it can.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache

# A load reads this many bytes of tables or more before its freed pages are handed back (about
# 200,000 synthetic assertions). A smaller load frees a few tens of MB at most, and handing
# them back costs more than it saves: the next phase faults the same pages in again, and a
# first touch of a page is dear on a virtual machine. At 100,000 assertions `kgbench
# validate` took ~7,000 page faults more with them given back (~8% of its time) to end 16
# MB lower at its peak; at 250,000 giving back took a compile's peak from 625 to 431 MB.
WORTH_GIVING_BACK = 32 * 1024 * 1024


_WORTH_IT: ContextVar[bool] = ContextVar("kgbench_heap_worth_it", default=True)


def worth_giving_back(table_bytes: int) -> bool:
    """Whether a load that reads `table_bytes` of tables should hand its pages back between
    its phases (`WORTH_GIVING_BACK` says why not below it)."""
    return table_bytes >= WORTH_GIVING_BACK


@contextmanager
def sized_load() -> Iterator[Callable[[int], None]]:
    """The scope of one load: yields the function the load calls once it knows how many
    bytes of tables it reads; from then on, within the scope, `give_back` works only for a
    load `worth_giving_back`. Outside any scope, or before that call, it always works, so
    the phases that call `give_back` need not know the load's size."""

    def sized(table_bytes: int) -> None:
        _WORTH_IT.set(worth_giving_back(table_bytes))

    token = _WORTH_IT.set(True)
    try:
        yield sized
    finally:
        _WORTH_IT.reset(token)


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
    """Return the pages freed so far to the operating system (`_release`), unless the load
    under way is too small for it to be worth it (`sized_load`)."""
    if _WORTH_IT.get():
        _release()


def _release() -> None:
    """Arrow's unused pool memory and the free pages of glibc's heap (`malloc_trim(0)`)."""
    if "pyarrow" in sys.modules:  # nothing to release in a process that never loaded Arrow
        pool = sys.modules["pyarrow"].default_memory_pool()
        release = getattr(pool, "release_unused", None)
        if release is not None:
            release()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)

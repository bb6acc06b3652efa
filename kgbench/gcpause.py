"""The cyclic garbage collector held off around work that allocates much and frees little.

Loading and checking a domain allocates a few objects per row (typed cells, IR records, index
entries, and one error object per bad cell) and frees almost none until the end. Each burst of
allocations starts a collection that walks every live object, to find nothing: what the checks
build is tuples and records of strings and numbers, which hold no reference cycles. On a
100,000-assertion domain the collector took a third of the cross-table and evidence checks,
and, once the load ended with 10,000 errors, a full collection (0.2 s) before the first error
was printed. This module is the one owner of that decision (issue 33, item 5).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The collector off inside the block, as it was before afterwards (nested blocks leave
    it off until the outermost ends). Reference counting still frees everything acyclic."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def spare_the_exit_collection() -> None:
    """Exempt every object alive now from the collections still to come; for a process about
    to exit only (the console entry, after its command): the interpreter's own collection at
    exit would otherwise walk all of them once more, to free nothing that exit does not."""
    gc.freeze()

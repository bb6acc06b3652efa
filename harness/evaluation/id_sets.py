"""Id lists of an answer or a gold as sets of strings, shared within one panel pass.

Every metric kind reads id lists (cited assertions, evidence, interventions) that may hold
anything JSON allows; these turn them into sets of their strings, never failing, and within
one `score_panel` call turn each list into a set once for all the metrics that read it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

NO_IDS: frozenset[str] = frozenset()


# The sets of the id lists of one `score_panel` call, shared by its metrics: an answer citing
# 70,000 ids is turned into a set once, not once per metric, and the few lists every metric
# reads (the cited assertion ids) are not rebuilt a dozen times per answer. Keyed by the
# list's id and holding the list, so an id is never reused while held; one dict per call
# (a context variable: concurrent calls share nothing), dropped when the call returns.
SHARED_SETS: ContextVar[dict[int, tuple[Any, frozenset[str]]] | None] = ContextVar(
    "SHARED_SETS", default=None
)


def as_set(value: Any) -> set[str] | frozenset[str]:
    """The strings of a list (or the one string) as a set; not to be mutated by callers."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, (list, tuple, set)):
        shared = SHARED_SETS.get()
        if shared is None:  # outside a panel: nothing to share with
            return {v for v in value if isinstance(v, str)}
        held = shared.get(id(value))
        if held is not None and held[0] is value:
            return held[1]
        out = frozenset(v for v in value if isinstance(v, str))
        shared[id(value)] = (value, out)
        return out
    return set()


def strings_of(value: Any) -> frozenset[str]:
    """`as_set` without the sharing: the strings of a list (or the one string)."""
    if isinstance(value, str):
        return frozenset((value,))
    if isinstance(value, (list, tuple, set)):
        try:
            "".join(value)  # TypeError unless every item is a str: the usual case, one C call
        except TypeError:
            return frozenset(v for v in value if isinstance(v, str))
        return frozenset(value)
    return NO_IDS

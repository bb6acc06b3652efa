"""A table's IR records, made only when something reads them.

`kgbench validate` decides most rules on a table's Arrow columns (`compiler.crosstable`,
`compiler.integrity`, `compiler.evidence`): on data that breaks none of them, no check reads
the assertions or evidence links one by one, and making 100,000 named tuples of each (their
Python values, the records, the sort by id, and freeing them at exit) was about a fifth of a
warm validation that the polars floor (issue 33, item 5) never pays. A `Records` knows its
length and makes its rows on first iteration or indexing, exactly as they were made before
(same rows, same order), so a check that does need them (a finding to word, a declaration
that names assertions) reads the same records it always read. `compile` never sees one: it
builds every record anyway, so its IR keeps plain tuples (`frontend._build`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any


class Records(Sequence):
    """A tuple of records made by `make` on first use; its length is known without them."""

    __slots__ = ("_length", "_make", "_rows")

    def __init__(self, length: int, make: Callable[[], Sequence[Any]]) -> None:
        self._length = length
        self._make: Callable[[], Sequence[Any]] | None = make
        self._rows: tuple[Any, ...] | None = None

    @property
    def made(self) -> bool:
        """Whether the records exist yet (tests hold validate to making none on valid data)."""
        return self._rows is not None

    def rows(self) -> tuple[Any, ...]:
        if self._rows is None:
            assert self._make is not None
            self._rows = tuple(self._make())
            self._make = None  # what it closed over (columns) can go
            assert len(self._rows) == self._length
        return self._rows

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows())

    def __getitem__(self, index):  # type: ignore[override]
        return self.rows()[index]

    def __repr__(self) -> str:
        return f"Records({self._length} rows{'' if self.made else ', not made'})"


def rows_of(records: Sequence[Any]) -> Sequence[Any]:
    """The rows themselves (a list or tuple as given; a `Records` made)."""
    return records.rows() if isinstance(records, Records) else records


def sorted_records(records: Sequence[Any], key: Callable[[Any], Any], lazy: bool) -> Sequence[Any]:
    """`tuple(sorted(records, key=key))`, deferred with the records when `lazy` and they are
    not made yet."""
    if lazy and isinstance(records, Records) and not records.made:
        return Records(len(records), lambda: sorted(records.rows(), key=key))
    return tuple(sorted(rows_of(records), key=key))

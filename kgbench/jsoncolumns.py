"""Rows of JSON objects written column by column, in the compact canonical form.

`kgbench.io` writes a large rows file one object per line, each encoded by the C encoder
(sorted keys, no whitespace, UTF-8 kept). At scale that is tens of millions of small objects,
each first built as a dict (two for a nested one), its keys sorted and encoded again on every
row: the largest cost of a large compile. Here the rows of a batch are given as columns (one
sequence of values per field) and a layout (key -> column, or key -> nested layout), and the
text is made the other way round: each column is encoded once per batch, in C where its type
allows (a string column with nothing to escape is taken as it is, its quotes written with its
key), the keys and punctuation are constants, and a batch's text is one join. The text is the
encoder's, byte for byte (tests/test_jsoncolumns.py holds it to that on hostile values); a
value of any other type is encoded by the encoder itself.

A column may be `optional`: its key is left out of a row where the value is None or an empty
tuple, as the Neo4j row files drop both (`compiler.backends.neo4j._clean`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Union

from kgbench.io import ROWS_PER_CHUNK, RowTexts, encode_row
from kgbench.textscan import contains_any, joined_strs

# What the encoder (ensure_ascii=False) escapes in a string: a string without any of them is
# its own JSON text between quotes.
_ESCAPED = '"\\' + "".join(map(chr, range(0x20)))
_BOOLS = ("false", "true")
_NONE = type(None)


@dataclass(frozen=True)
class Col:
    """The value under a key: column `index` of the batch. `optional`: the key is left out of
    a row where the value is None or an empty tuple."""

    index: int
    optional: bool = False


Layout = Mapping[str, Union[Col, "Layout"]]


def json_cells(values: Sequence[Any]) -> tuple[Sequence[str], str]:
    """(texts, quote): each value's JSON text is `quote + text + quote`. A string column with
    nothing to escape is returned as it is with `quote` '"'; other columns are encoded, with
    the fast path of each plain type and the encoder itself for anything else."""
    text = joined_strs(values) if values else None
    if text is not None:  # every value a str: most columns
        if not contains_any(text, _ESCAPED):
            return values, '"'
        return list(map(encode_basestring, values)), ""
    kinds = set(map(type, values))
    if kinds == {float} and math.isfinite(sum(values)):  # nan and inf: the encoder's words
        return list(map(float.__repr__, values)), ""
    if kinds == {bool}:
        return list(map(_BOOLS.__getitem__, values)), ""
    if kinds == {int}:
        return list(map(int.__repr__, values)), ""
    if kinds == {_NONE}:
        return ["null"] * len(values), ""
    if kinds == {str, _NONE}:
        return ["null" if v is None else encode_basestring(v) for v in values], ""
    if kinds == {tuple}:
        texts = _str_tuples(values)
        if texts is not None:
            return texts, ""
    return list(map(encode_row, values)), ""


def _str_tuples(values: Sequence[tuple[Any, ...]]) -> list[str] | None:
    """The JSON arrays of tuples of str, each distinct tuple encoded once (multivalued fields
    repeat few values); None when an item is not a str."""
    memo: dict[tuple[Any, ...], str] = {}
    for value in set(values):
        if not all(item.__class__ is str for item in value):
            return None
        memo[value] = "[" + ",".join(map(encode_basestring, value)) + "]"
    return list(map(memo.__getitem__, values))


def _dropped(value: Any) -> bool:
    return value is None or (value.__class__ is tuple and not value)


def _object(layout: Layout, columns: Sequence[Sequence[Any]], n: int) -> list[str | Sequence[str]]:
    """The object's text as parts: a str is the same in every row, a sequence is one text per
    row. Keys sorted (as the encoder sorts them); an optional key in only some rows carries its
    own comma, on the side away from the first key present in every row (`anchor`)."""
    fixed: dict[str, list[str | Sequence[str]]] = {}  # key -> its parts, in every row
    varying: dict[str, tuple[list[bool], Sequence[str], str]] = {}  # key -> (kept, texts, q)
    for key in sorted(layout):
        item = layout[key]
        if not isinstance(item, Col):
            fixed[key] = _object(item, columns, n)
            continue
        values = columns[item.index]
        if item.optional and (values.count(None) or values.count(())):
            kept = [not _dropped(v) for v in values]
            if not any(kept):
                continue
            if not all(kept):
                texts, quote = json_cells([v for v, k in zip(values, kept, strict=True) if k])
                varying[key] = (kept, texts, quote)
                continue
        texts, quote = json_cells(values)
        fixed[key] = [quote, texts, quote] if quote else [texts]
    anchor = next((key for key in sorted(fixed | varying) if key in fixed), None)
    parts: list[str | Sequence[str]] = ["{"]
    if anchor is None and varying:  # no key in every row: the commas row by row
        rows = map("".join, zip(*(_varying(k, *varying[k], ",") for k in varying), strict=True))
        return ["", [f"{{{text[:-1]}}}" if text else "{}" for text in rows]]
    first = True
    for key in sorted(fixed | varying):
        if key in varying:
            parts.append(
                _varying(key, *varying[key], "," if anchor is None or key < anchor else "")
            )
            continue
        parts.append(("" if first else ",") + encode_basestring(key) + ":")
        parts.extend(fixed[key])
        first = False
    parts.append("}")
    return parts


def _varying(key: str, kept: list[bool], texts: Sequence[str], quote: str, after: str) -> list[str]:
    """An optional key's text per row, with its comma (`after` it, or else before it); empty
    where the row leaves it out."""
    head = ("," if not after else "") + encode_basestring(key) + ":" + quote
    tail = quote + after
    it = iter(texts)
    return [head + next(it) + tail if k else "" for k in kept]


def object_rows(layout: Layout, columns: Sequence[Sequence[Any]]) -> str:
    """The rows' objects (one per value of the columns) joined by ',' and a newline: the text
    `",\\n".join(map(encode_row, rows))` writes for the same rows as dicts. Columns are lists or
    tuples of equal length, at least one row."""
    n = len(columns[0])
    parts = _object(layout, columns, n)
    merged: list[Any] = []
    for part in parts:  # adjacent constants as one
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        elif not (isinstance(part, str) and not part):
            merged.append(part)
    if len(merged) == 1:  # the same object in every row (`{}`), or one text per row
        only = merged[0]
        return ",\n".join(itertools.repeat(only, n) if isinstance(only, str) else only)
    last = merged.pop() if isinstance(merged[-1], str) else ""
    first = merged.pop(0) if isinstance(merged[0], str) else ""
    # Each row's middle is one join of its parts; the rows are joined by the previous row's
    # end, the separator and the next row's opening. A str per row and one join of them is
    # ~20% cheaper than one join of every part of every row (a list of them all, built first).
    iters = [itertools.repeat(p, n) if isinstance(p, str) else p for p in merged]
    rows = map("".join, zip(*iters, strict=True))
    return "".join((first, f"{last},\n{first}".join(rows), last))


def record_layout(fields: Sequence[str], optional: bool = False, start: int = 0) -> dict[str, Col]:
    """Each field of a record (a named tuple's `_fields`) under its own name, as `_asdict`
    gives it: column `start + i` for the i-th field."""
    return {name: Col(start + i, optional) for i, name in enumerate(fields)}


def rows_texts(
    layout: Layout,
    n: int,
    columns: Callable[[int, int], Sequence[Sequence[Any]]],
    batch: int = ROWS_PER_CHUNK,
) -> RowTexts:
    """The `n` rows as texts, `batch` at a time: `columns(start, stop)` gives the columns of
    rows start..stop-1 (made when written, so a large file is never held)."""
    return RowTexts(
        object_rows(layout, columns(start, min(start + batch, n))) for start in range(0, n, batch)
    )


def record_columns(records: Sequence[Any], start: int, stop: int) -> list[Sequence[Any]]:
    """The fields of records[start:stop] as columns."""
    return list(zip(*records[start:stop], strict=True))

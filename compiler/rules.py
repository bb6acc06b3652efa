"""The validation rules of a data-table cell, each declared once.

A rule has a name, the columns it applies to (decided from the LinkML slot, `schema.Column`),
a vectorised check over a column of values (a pyarrow string array) that returns the indices
of the failing values, and the message for one failing value. `check_column` runs the rules of
one column in their order over whatever CSV parser read the file (pyarrow's, or Python's csv
module for a file pyarrow cannot parse; see `tables.read_table`), so the two readers cannot
disagree on a cell: before this table each rule was written twice, once per reader, and kept
in agreement by hand.

Scopes: a "cell" rule sees the whole cell (a value is required); an "item" rule sees each
value, or each item of a `|`-separated list; a "column" rule sees the column's valid values
together (an identifier appears once). A cell gets at most one message: the first rule its
first failing item breaks, which is the order a reader fixing the file wants.

Every check is exact, not a prefilter: where Arrow's kernels would differ from the rule's
definition (a Python regex that RE2 reads differently, an integer beyond 64 bits), the check
falls back to Python for that column, so the fast path never accepts what the rule rejects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .schema import Column, suggest

LIST_SEPARATOR = "|"
TRUE_WORDS = {"true": True, "false": False}
NUMERIC = ("integer", "float")
NOT_TEXT = ("integer", "float", "boolean")
INT64 = (-(2**63), 2**63 - 1)  # what Arrow and Neo4j store; a larger integer cannot load

# Numbers are written in ASCII: Python's int() and float() also accept other scripts' digits
# ("２０１８") and underscores ("2_018"), which a curator never means; Arrow's integer cast
# accepts hexadecimal ("0x7DE"), which a curator never means either.
INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
RE2_INTEGER = rf"^{INTEGER.pattern}$"
RE2_DECIMAL = rf"^{DECIMAL.pattern}$"
# Control characters (Unicode category Cc): never in a name or an id; in free text only tab,
# newline and carriage return. NUL in particular would end strings in other tools.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# The same character classes in RE2 syntax, for Arrow.
RE2_CONTROL = r"[\x00-\x1f\x7f-\x{9f}]"
RE2_TEXT_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x{9f}]"
# What a schema pattern (Python syntax) may hold for RE2 to read it the same way: no
# backslash class (`\d`, `\s`, `\w` and `\b` are Unicode-aware in Python, ASCII in RE2), no
# `(?` group (flags, lookaround), no `{,n}` and no POSIX `[:class:]`. Values are trimmed, so
# Python's `$` (which also matches before a final newline) never sees a final newline.
NOT_RE2_SAFE = re.compile(r"\\[A-Za-z0-9]|\(\?|\{,|\[:")

Scope = Literal["cell", "item", "column"]
Indices = list[int]


@dataclass(frozen=True)
class Rule:
    """One validation rule, declared once for both table readers.

    `failing(col, values)` gets the non-empty values (trimmed; for a list column, its items)
    and returns the indices of those that break the rule; `message(col, text)` says what was
    expected of one of them (a column rule's message also gets the line of the first value it
    repeats).
    """

    name: str
    scope: Scope
    applies: Callable[[Column], bool]
    failing: Callable[[Column, Any], Indices]
    message: Callable[..., str]


def _where(mask) -> Indices:
    """Indices where a boolean array is true (null counts as false)."""
    if mask.null_count:
        mask = pc.fill_null(mask, False)
    if not pc.any(mask).as_py():
        return []
    return pc.indices_nonzero(mask).to_pylist()


def _is_text(col: Column) -> bool:
    """Length and control characters are checked on text, not on numbers or booleans."""
    return col.range not in NOT_TEXT and (
        col.max_length is not None or col.single_line or col.range == "string"
    )


def typed(col: Column, text: str) -> Any:
    """The Python value of one valid item (what the IR holds and what messages print)."""
    if col.range == "integer":
        return int(text)
    if col.range == "float":
        return float(text)
    if col.range == "boolean":
        return TRUE_WORDS[text.lower()]
    return text


def numbers(col: Column, values) -> Any:
    """Valid integer or float items as an Arrow numeric array (a leading '+' is allowed)."""
    if col.range == "float":
        return pc.cast(values, pa.float64())
    if len(values) and pc.any(pc.starts_with(values, "+")).as_py():
        values = pc.replace_substring_regex(values, r"^\+", "")
    return pc.cast(values, pa.int64())


# --- required -------------------------------------------------------------------------------


def _empty(col: Column, values) -> Indices:
    return _where(pc.equal(values, ""))


# --- integer --------------------------------------------------------------------------------


def _not_integer(col: Column, values) -> Indices:
    bad = _where(pc.invert(pc.match_substring_regex(values, RE2_INTEGER)))
    ok = values if not bad else _drop(values, bad)
    try:
        numbers(col, ok)
        return bad
    except pa.ArrowInvalid:  # beyond 64 bits: rare, so found in Python
        lo, hi = INT64
        texts = values.to_pylist()
        return sorted(
            set(bad)
            | {
                i
                for i, t in enumerate(texts)
                if INTEGER.fullmatch(t) and (len(t) > 20 or not lo <= int(t) <= hi)
            }
        )


def _integer_message(col: Column, text: str) -> str:
    if INTEGER.fullmatch(text):
        return f"expected a 64-bit integer, got {text!r}"
    try:
        int(text)
    except ValueError:
        return f"expected an integer, got {text!r}"
    return f"expected an integer in ASCII digits 0-9, got {text!r}"


# --- float ----------------------------------------------------------------------------------


def _not_float(col: Column, values) -> Indices:
    bad = _where(pc.invert(pc.match_substring_regex(values, RE2_DECIMAL)))
    if not bad:
        return _where(pc.invert(pc.is_finite(numbers(col, values))))  # "1e999"
    ok = _positions_without(len(values), bad)
    infinite = _where(pc.invert(pc.is_finite(numbers(col, values.take(pa.array(ok, pa.int64()))))))
    return sorted(set(bad) | {ok[i] for i in infinite})


def _float_message(col: Column, text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return f"expected a number, got {text!r}"
    if not math.isfinite(value):
        return f"expected a finite number, got {text!r}"
    return f"expected a number in ASCII digits 0-9, got {text!r}"


# --- boolean, enum --------------------------------------------------------------------------


def _not_boolean(col: Column, values) -> Indices:
    return _where(pc.invert(pc.is_in(pc.utf8_lower(values), value_set=pa.array(list(TRUE_WORDS)))))


def _not_in_enum(col: Column, values) -> Indices:
    return _where(pc.invert(pc.is_in(values, value_set=pa.array(col.enum_values, pa.string()))))


def _enum_message(col: Column, text: str) -> str:
    listing = ", ".join(col.enum_values)
    return f"expected one of {listing}; got {text!r}" + suggest(text, col.enum_values)


# --- text: length, control characters -------------------------------------------------------


def _too_long(col: Column, values) -> Indices:
    return _where(pc.greater(pc.utf8_length(values), col.max_length))


def _length_message(col: Column, text: str) -> str:
    limit = col.max_length
    return f"{len(text):,} characters, expected at most {limit:,} (starts {text[:40]!r})"


# Bytes that begin a control character in UTF-8: C0 controls and DEL are single bytes, C1
# controls (U+0080-U+009F) are 0xC2 followed by 0x80-0x9F. Tab, LF and CR pass in free text.
_CONTROL_BYTES = np.zeros(256, dtype=bool)
_CONTROL_BYTES[[*range(0x20), 0x7F, 0xC2]] = True
_TEXT_CONTROL_BYTES = _CONTROL_BYTES.copy()
_TEXT_CONTROL_BYTES[[0x09, 0x0A, 0x0D]] = False


def _has_control(col: Column, values) -> Indices:
    if not _may_hold_control(values, _CONTROL_BYTES if col.single_line else _TEXT_CONTROL_BYTES):
        return []
    forbidden = RE2_CONTROL if col.single_line else RE2_TEXT_CONTROL
    return _where(pc.match_substring_regex(values, forbidden))


def _may_hold_control(values, suspect: np.ndarray) -> bool:
    """False when no byte of the column's text can begin a control character: a few
    comparisons over the bytes (a 0xC2 byte, the start of every character from U+0080 to
    U+00BF, only says "maybe"), instead of a regular expression over every cell; on "maybe"
    the expression decides."""
    if values.type != pa.string() or not len(values):
        return True
    offsets_buffer, data = values.buffers()[1:3]
    if data is None:
        return False  # every cell is empty
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)
    start, end = offsets[values.offset], offsets[values.offset + len(values)]
    text = np.frombuffer(data, dtype=np.uint8)[start:end]
    if (text == 0x7F).any() or (text == 0xC2).any():
        return True
    return bool(suspect[text[text < 0x20]].any())  # C0 controls: rare, so few to look up


def _control_message(col: Column, text: str) -> str:
    bad = (CONTROL if col.single_line else TEXT_CONTROL).search(text)
    assert bad is not None  # the check found one
    what = "NUL byte" if bad.group() == "\x00" else "control character"
    allowed = "" if col.single_line else " (only tab and line breaks are allowed)"
    return (
        f"contains a {what} {bad.group()!r} at position {bad.start() + 1}{allowed}; "
        f"got {text[:80]!r}"
    )


# --- pattern --------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _python_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _no_match(col: Column, values) -> Indices:
    pattern = col.pattern
    assert pattern is not None
    if not NOT_RE2_SAFE.search(pattern):
        try:
            return _where(pc.invert(pc.match_substring_regex(values, pattern)))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # RE2 cannot compile it (e.g. a repetition too large): Python decides
    regex = _python_regex(pattern)
    return [i for i, text in enumerate(values.to_pylist()) if not regex.search(text)]


def _pattern_message(col: Column, text: str) -> str:
    message = f"expected a value matching {col.pattern}, got {typed(col, text)!r}"
    if col.id_scheme:  # an id column: the scheme is the domain's to declare
        message += (
            f" (the {col.id_scheme} id scheme; a domain with its own ids declares "
            f"`id_schemes: {{{col.id_scheme}: {{pattern: ...}}}}` in domain.yaml)"
        )
    return message


# --- range ----------------------------------------------------------------------------------


def _out_of_range(col: Column, values) -> Indices:
    typed_values = numbers(col, values)
    lo, hi = col.minimum, col.maximum
    bad = None
    if lo is not None:
        bad = pc.less(typed_values, lo)
    if hi is not None:
        above = pc.greater(typed_values, hi)
        bad = above if bad is None else pc.or_(bad, above)
    return [] if bad is None else _where(bad)


def _range_message(col: Column, text: str) -> str:
    return f"expected a value in [{col.minimum}, {col.maximum}], got {typed(col, text)}"


# --- identifier -----------------------------------------------------------------------------


def distinct_count(values) -> int:
    """How many distinct non-null values: `value_counts` where there is no null (it counts a
    null as a value), which measured 2-3x faster than `count_distinct` on 100,000 distinct
    ids (and without its first-call spike of up to 0.2-0.4 s); the same number."""
    if values.null_count:
        return pc.count_distinct(values).as_py()
    return len(pc.value_counts(values))


def _repeated(col: Column, values) -> Indices:
    """Every occurrence of a value but its first, in order. Dictionary encoding numbers the
    distinct values in order of first appearance, so an occurrence is a value's first
    exactly where its code exceeds every earlier code: one running maximum in numpy, not a
    Python pass with a set over the whole column (a tenth of a 10,000-error validation)."""
    if distinct_count(values) == len(values):
        return []
    if values.null_count:  # not from the readers (no null cells): the plain definition
        seen: set[str] = set()
        repeats = []
        for i, text in enumerate(values.to_pylist()):
            if text in seen:
                repeats.append(i)
            seen.add(text)
        return repeats
    codes = pc.dictionary_encode(values).indices.to_numpy(zero_copy_only=False)
    highest = np.maximum.accumulate(codes)
    return (np.flatnonzero(highest[1:] == highest[:-1]) + 1).tolist()


def _duplicate_message(col: Column, text: str, first_line: int) -> str:
    return f"duplicate id '{text}' (first defined on line {first_line})"


# --- the rule table -------------------------------------------------------------------------

RULES: tuple[Rule, ...] = (
    Rule("required", "cell", lambda c: c.required, _empty, lambda c, t: "a value is required"),
    Rule("integer", "item", lambda c: c.range == "integer", _not_integer, _integer_message),
    Rule("float", "item", lambda c: c.range == "float", _not_float, _float_message),
    Rule(
        "boolean",
        "item",
        lambda c: c.range == "boolean",
        _not_boolean,
        lambda c, t: f"expected true or false, got {t!r}",
    ),
    Rule(
        "enum",
        "item",
        lambda c: bool(c.enum_values) and c.range not in NOT_TEXT,
        _not_in_enum,
        _enum_message,
    ),
    Rule(
        "max_length",
        "item",
        lambda c: _is_text(c) and c.max_length is not None,
        _too_long,
        _length_message,
    ),
    Rule("control_characters", "item", _is_text, _has_control, _control_message),
    Rule("pattern", "item", lambda c: bool(c.pattern), _no_match, _pattern_message),
    Rule(
        "range",
        "item",
        lambda c: c.range in NUMERIC and (c.minimum is not None or c.maximum is not None),
        _out_of_range,
        _range_message,
    ),
    Rule(
        "unique_identifier",
        "column",
        lambda c: c.identifier and not c.multivalued,
        _repeated,
        _duplicate_message,
    ),
)


@lru_cache(maxsize=1024)
def rules_for(col: Column) -> tuple[Rule, ...]:
    """The rules one column runs, in the order a cell meets them."""
    return tuple(rule for rule in RULES if rule.applies(col))


# --- running the rules over one column ------------------------------------------------------


def _keep_mask(n: int, drop: Indices) -> np.ndarray:
    keep = np.ones(n, dtype=bool)
    keep[drop] = False
    return keep


def _positions_without(n: int, drop: Indices) -> Indices:
    return np.flatnonzero(_keep_mask(n, drop)).tolist()


def _drop(values, drop: Indices):
    return values.filter(pa.array(_keep_mask(len(values), drop)))


def items_of(col: Column, values, empty: Any | None) -> tuple[Any, Any | None]:
    """The non-empty values an item rule checks, and the row of each (None: item i is row i).

    A list cell's items are split on `|`, trimmed, and empty items dropped.
    """
    if col.multivalued and len(values) and pc.any(pc.match_substring(values, "|")).as_py():
        lists = pc.split_pattern(values, LIST_SEPARATOR)
        parts = pc.utf8_trim_whitespace(pc.list_flatten(lists))
        keep = pc.not_equal(parts, "")
        return parts.filter(keep), pc.list_parent_indices(lists).filter(keep)
    if empty is None:
        return values, None
    present = pc.invert(empty)
    return values.filter(present), pc.indices_nonzero(present)


def check_column(col: Column, values, line_of: Callable[[int], int]) -> Iterator[tuple[int, str]]:
    """(row, message) for every failing cell of one column, by row.

    `values` are the column's trimmed strings, "" for an empty cell; `line_of` gives a row's
    file line (only a duplicate's message needs it).

    The cost of errors stays proportional to the errors, not to errors x rows: positions are
    numpy arrays, a column rule's first occurrences come from one vectorised pass per erring
    column (`_first_occurrences`), and a message is worded once per distinct failing text (an
    enum's "did you mean" is computed once, not once per row that repeats the typo).
    """
    rules = rules_for(col)
    found: dict[int, tuple[tuple[int, int], str]] = {}  # row -> ((item, rule order), message)
    empty = pc.equal(values, "") if len(values) else None
    if empty is not None and not pc.any(empty).as_py():
        empty = None
    items, rows = items_of(col, values, empty)
    row_at = None if rows is None else rows.to_numpy(zero_copy_only=False)
    positions: np.ndarray | None = None  # which original items are still being checked

    for order, rule in enumerate(rules):
        if rule.scope == "cell":
            if empty is not None:  # a cell rule only ever fails on an empty cell
                for row in rule.failing(col, values):
                    found[row] = ((-1, order), rule.message(col, ""))
            continue
        if not len(items):
            break
        bad = rule.failing(col, items)
        if not bad:
            continue
        texts = items.take(pa.array(bad, pa.int64())).to_pylist()
        where = np.asarray(bad, dtype=np.int64)
        item_of = (where if positions is None else positions[where]).tolist()
        row_of = item_of if row_at is None else row_at[item_of].tolist()
        first_row: dict[str, int] = {}
        if rule.scope == "column":
            first = _first_occurrences(items, texts)
            first_item = [first[t] for t in texts]
            if positions is not None:
                first_item = positions[first_item].tolist()
            first_row = dict(
                zip(
                    texts,
                    first_item if row_at is None else row_at[first_item].tolist(),
                    strict=True,
                )
            )
        worded: dict[str, str] = {}
        for item, row, text in zip(item_of, row_of, texts, strict=True):
            key = (item, order)
            if row in found and found[row][0] <= key:
                continue
            message = worded.get(text)
            if message is None:
                if rule.scope == "column":
                    message = rule.message(col, text, line_of(first_row[text]))
                else:
                    message = rule.message(col, text)
                worded[text] = message
            found[row] = (key, message)
        keep = _keep_mask(len(items), bad)
        positions = np.flatnonzero(keep) if positions is None else positions[keep]
        items = items.filter(pa.array(keep))
    for row in sorted(found):
        yield row, found[row][1]


def _first_occurrences(items, texts: list[str]) -> dict[str, int]:
    """Each of `texts`' first index among `items`: one vectorised membership pass, then a
    Python look only at the items that hold one of them (not a linear search per text)."""
    wanted = pa.array(sorted(set(texts)), pa.string())
    hits = pc.indices_nonzero(pc.fill_null(pc.is_in(items, value_set=wanted), False))
    first: dict[str, int] = {}
    for index, text in zip(hits.to_pylist(), items.take(hits).to_pylist(), strict=True):
        first.setdefault(text, index)
    return first


def to_python(col: Column, values) -> list[Any]:
    """Typed Python values of a validated column (for building the IR); empty cells are
    None, or () in a list column."""
    if col.multivalued:
        data = values.to_pylist()
        if col.range in NOT_TEXT:
            return [
                tuple(typed(col, p.strip()) for p in v.split(LIST_SEPARATOR) if p.strip())
                for v in data
            ]
        if not len(values) or not pc.any(pc.match_substring(values, LIST_SEPARATOR)).as_py():
            one = {v: ((v,) if v else ()) for v in set(data)}  # one tuple per distinct value
            return [one[v] for v in data]  # single values: the common case
        return [
            tuple(p.strip() for p in v.split(LIST_SEPARATOR) if p.strip()) if v else ()
            for v in data
        ]
    if col.range in NOT_TEXT:
        empty = pc.equal(values, "")
        if len(values) and pc.any(empty).as_py():
            values = pc.if_else(empty, pa.scalar(None, pa.string()), values)
        if col.range == "boolean":
            return pc.equal(pc.utf8_lower(values), "true").to_pylist()
        return interned_numbers(numbers(col, values))
    if col.identifier:  # distinct by the rule above: nothing to share
        return [v or None for v in values.to_pylist()]
    return interned(values)


def interned_numbers(values) -> list[Any]:
    """A number column as Python values, each distinct value one object (`interned`): a
    float per cell is 24 bytes, ~100 MB at 4,000,000 confidences of three decimals. Arrow's
    dictionary of floats keeps values of other bits apart (0.0 and -0.0 stay two), so each
    cell keeps its very value."""
    if values.null_count or not len(values):  # empty cells (None): left as they are
        return values.to_pylist()
    encoded = pc.dictionary_encode(values)
    if 2 * len(encoded.dictionary) > len(values):
        return values.to_pylist()
    words = encoded.dictionary.to_pylist()
    return list(map(words.__getitem__, encoded.indices.to_numpy(zero_copy_only=False).tolist()))


def interned(values) -> list[Any]:
    """A text column as Python values (None for empty), each distinct value one str object.

    pyarrow makes a new str per cell; at 4,000,000 rows a column of a few enum values or of
    ids that recur (subjects, objects) would cost ~220 MB of copies, kept by the IR."""
    encoded = pc.dictionary_encode(values)
    if 2 * len(encoded.dictionary) > len(values):  # mostly distinct (names): nothing to share
        return [v or None for v in values.to_pylist()]
    words = [v or None for v in encoded.dictionary.to_pylist()]
    return list(map(words.__getitem__, encoded.indices.to_numpy(zero_copy_only=False).tolist()))

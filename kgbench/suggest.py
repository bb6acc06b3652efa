"""'Did you mean ...?' hints and the wording of a missing or unknown reference: one rule for
the compiler and the harness.

A hint is only worth printing when it is probably what the user meant. Two kinds of words
need different tests:

- **Names** (predicates, classes, fields, enum values): a suggestion is offered when the
  case-folded similarity reaches `SIMILARITY` (0.8: `TARGETZ` -> `TARGETS`, but nothing for a
  word that merely shares a few letters with one of fifty options), or when one typing slip
  (a letter added, dropped, changed or two swapped: `nmae` -> `name`) turns one into the
  other, or when it is the leading words of exactly one option (`causal_path` ->
  `causal_path_assertion_ids`).
- **Identifiers** (anything with a digit in it: `DRG_0099`, `ASR_0012`): two ids that differ
  in a digit name different things, so an id is suggested only when it is the same id written
  differently (case, separators, zero padding: `drg-99` -> `DRG_0099`). Suggesting `DRG_0009`
  for `DRG_0099` would name an unrelated entity.

An empty value is never "unknown ''": it is a missing value, and `unknown()` says it is
required.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

SIMILARITY = 0.8  # lowest difflib ratio (case-folded) at which a name is suggested

_DIGITS = re.compile(r"[0-9]+")
_SEPARATORS = re.compile(r"[^0-9a-z]+")


def _id_key(text: str) -> str:
    """An identifier with case, separators and zero padding removed."""
    folded = _SEPARATORS.sub("", text.casefold())
    return _DIGITS.sub(lambda m: str(int(m.group())), folded)


def id_keys(texts: list[str]) -> list[str]:
    """`_id_key` of each text, by Arrow kernels: a regular-expression call per id cost more
    than the rest of a 10,000-error validation's suggestions together (100,000 ids keyed for
    one lookup). Lower-casing is case-folding only in ASCII, so other text is keyed in Python;
    leading zeros go where a digit run starts (at the start or after a non-digit)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = pa.array(texts, pa.string())
    out = _ascii_id_keys(array).to_pylist()
    if not pc.all(pc.string_is_ascii(array)).as_py():
        out = [k if t.isascii() else _id_key(t) for k, t in zip(out, texts, strict=True)]
    return out


def _ascii_id_keys(array):
    """`_id_key` of each ASCII text of an Arrow string array (another text's key here is not
    its `_id_key`: Arrow lower-cases ASCII letters only)."""
    import pyarrow.compute as pc

    keys = pc.replace_substring_regex(pc.ascii_lower(array), "[^0-9a-z]+", "")
    return pc.replace_substring_regex(keys, "(^|[^0-9])0+([0-9])", r"\1\2")


def close_match(word: str, options: Iterable[str]) -> str | None:
    """The option the user probably meant, or None (see the module docstring)."""
    word = str(word)
    if not word.strip():
        return None
    if isinstance(options, SuggestIndex):
        return options.match(word)
    choices = tuple(sorted({str(o) for o in options}))
    if len(choices) <= SuggestIndex.SMALL:  # a key a large option set would make costly
        return _remembered_match(word, choices)
    return _close_match(word, choices)


def _close_match(word: str, choices: tuple[str, ...]) -> str | None:
    """`close_match` of a word among sorted distinct choices."""
    if any(ch.isdigit() for ch in word):
        key = _id_key(word)
        same = [o for o in choices if o != word and _id_key(o) == key]
        return same[0] if len(same) == 1 else None
    folded = {o.casefold(): o for o in choices}
    best = difflib.get_close_matches(word.casefold(), list(folded), n=1, cutoff=SIMILARITY)
    if best and folded[best[0]] != word:
        return folded[best[0]]
    if len(word) < 4:
        return None
    low = word.casefold()
    slips = [o for f, o in folded.items() if o != word and _one_slip(low, f)]
    if len(slips) == 1:
        return slips[0]
    heads = [o for f, o in folded.items() if f.startswith(low) and not f[len(low)].isalnum()]
    return heads[0] if len(heads) == 1 else None


class SuggestIndex:
    """Many lookups against one large option set (every entity id of a 100,000-row table), in
    bounded time each.

    `close_match` compares a word with every option, which is right for fifty predicates and
    ruinous for a thousand dangling references into a hundred thousand ids (errors x ids). The
    index is built once, on the first lookup: identifiers by their canonical key (one dict
    probe answers "the same id written differently"), names by (length, first letter) and
    (length, last letter), so a name is compared only with options that one typing slip can
    reach. After `max_lookups` lookups it stops suggesting: a report of ten thousand broken
    references needs the references, not ten thousand guesses.
    """

    SMALL = 256  # at most this many options: plain `close_match` is already cheap

    def __init__(self, options: Iterable[str], max_lookups: int = 1000) -> None:
        self._options: Any = (
            options if isinstance(options, (set, frozenset, dict)) else set(options)
        )
        self._array: Any = None  # the options as Arrow (`of_array`), or None
        self._size: int | None = None
        self.max_lookups = max_lookups
        self.lookups = 0
        self._by_key: dict[str, str] | None = None  # canonical key -> an option with it
        self._shared: dict[str, list[str]] | None = None  # keys that several options share
        self._by_shape: dict[tuple[int, str], list[str]] | None = None
        # keys of the words announced by `expect` -> every option with that key
        self._expected: dict[str, list[str]] = {}

    @classmethod
    def of_array(cls, array: Any, max_lookups: int = 1000) -> SuggestIndex:
        """An index of the strings of an Arrow array (repeats allowed), whose Python set is
        made only if a lookup needs it: `expect`, then `match` of an announced id, answer
        from the array. A set of every assertion id was ~11 MB of fresh memory in a
        validation with broken evidence links, for the few ids they name."""
        index = cls(())
        index._options = None
        index._array = array
        return index

    @property
    def options(self) -> Any:
        """The options, as a set (or the dict or frozenset given)."""
        if self._options is None:
            self._options = set(self._array.to_pylist())
        return self._options

    def _count(self) -> int:
        """How many distinct options, without making their set where it is not made."""
        if self._options is not None:
            return len(self._options)
        if self._size is None:
            import pyarrow.compute as pc

            self._size = len(pc.unique(self._array))
        return self._size

    def __contains__(self, value: object) -> bool:
        return value in self.options

    def __iter__(self):
        return iter(self.options)

    def __len__(self) -> int:
        return len(self.options)

    def expect(self, words: Iterable[str], array: Any = None) -> None:
        """Get ready to look up `words` (those among the options are never looked up: left out;
        a superset of the words `match` will get is fine, and a word left out still matches):
        the options that share an identifier key with one of them are all `match` needs for
        those words. A dict of every option's key (`_index_ids`) cost a 10,000-error
        validation ~0.1 s per 100,000 ids, and only its few keys that a broken reference has
        were ever read. `array`: the options as an Arrow string array, where the caller has
        them (the same strings as the options, repeats allowed), so they are not converted.

        An option of ASCII letters, digits and `_` only (the common id) has for key its
        lower-cased text without `_` and without the leading zeros of its digit runs: with
        every `0` dropped too it is its key without zeros, so two literal passes find the few
        options that can have one of the wanted keys, and Python keys those exactly. Any
        other option is keyed as `id_keys` keys it (Arrow, or Python where not ASCII)."""
        if self._count() <= self.SMALL or self._by_key is not None:
            return
        import pyarrow as pa
        import pyarrow.compute as pc

        texts = [w for w in map(str, words) if any(ch.isdigit() for ch in w)]
        if self._options is None:  # the words among the options, by the array
            if array is None:
                array = self._array
            among = pc.is_in(pa.array(texts, pa.string()), value_set=array).to_pylist()
            texts = [w for w, known in zip(texts, among, strict=True) if not known]
        else:
            options = self._options
            texts = [w for w in texts if w not in options]
        wanted = {_id_key(w) for w in texts}
        wanted.difference_update(self._expected)
        if not wanted:
            return
        if array is None:
            try:
                array = pa.array(list(self.options), pa.string())
            except (pa.ArrowTypeError, pa.ArrowInvalid):  # not all str
                array = pa.array([str(o) for o in self.options], pa.string())
        found = self._expected
        for key in wanted:
            found[key] = []

        def keep(option: str, key: str) -> None:
            if key in wanted and option not in found[key]:
                found[key].append(option)

        plain = pc.ascii_is_alnum(pc.replace_substring(array, "_", ""))
        bare = pc.replace_substring(pc.replace_substring(pc.ascii_lower(array), "_", ""), "0", "")
        stems = pa.array(sorted({k.replace("0", "") for k in wanted}), pa.string())
        near = pc.and_(plain, pc.is_in(bare, value_set=stems))
        for option in array.filter(near).to_pylist():
            keep(option, _id_key(option))
        if pc.all(plain).as_py():
            return
        others = array.filter(pc.invert(plain))
        ascii_ = pc.string_is_ascii(others)
        keys = _ascii_id_keys(others)
        hit = pc.and_(ascii_, pc.is_in(keys, value_set=pa.array(sorted(wanted), pa.string())))
        for option, key in zip(
            others.filter(hit).to_pylist(), keys.filter(hit).to_pylist(), strict=True
        ):
            keep(option, key)
        for option in others.filter(pc.invert(ascii_)).to_pylist():  # keyed in Python
            keep(option, _id_key(option))

    def _index_ids(self) -> None:
        """Key every option once (by Arrow kernels, `id_keys`); a dict made in C holds one
        option per key, and only keys that several options share get the full list."""
        options = [str(o) for o in self.options]
        keys = id_keys(options)
        self._by_key = dict(zip(keys, options, strict=True))
        self._shared = {}
        if len(self._by_key) < len(options):
            repeated = {k for k, n in Counter(keys).items() if n > 1}
            for key, option in zip(keys, options, strict=True):
                if key in repeated:
                    self._shared.setdefault(key, []).append(option)

    def match(self, word: str) -> str | None:
        if self.lookups >= self.max_lookups:
            return None
        self.lookups += 1
        if self._count() <= self.SMALL:
            return close_match(word, list(self.options))
        if any(ch.isdigit() for ch in word):
            key = _id_key(word)
            group = self._expected.get(key)
            if group is None:
                if self._by_key is None:
                    self._index_ids()
                assert self._by_key is not None and self._shared is not None
                group = self._shared.get(key)
                if group is None:
                    one = self._by_key.get(key)
                    group = [] if one is None else [one]
            same = [o for o in group if o != word]
            return same[0] if len(same) == 1 else None
        if self._by_shape is None:
            self._by_shape = {}
            for option in map(str, self.options):
                low = option.casefold()
                if low:
                    self._by_shape.setdefault((len(low), low[0]), []).append(option)
                    self._by_shape.setdefault((len(low), "$" + low[-1]), []).append(option)
        low = word.casefold()
        near = {
            o
            for n in range(len(low) - 2, len(low) + 3)
            for key in ((n, low[0]), (n, "$" + low[-1]))
            for o in self._by_shape.get(key, ())
        }
        return close_match(word, near) if near else None


# The same typo repeated on a thousand rows (an unknown class, a misspelt predicate) is
# matched once, not once per row: difflib was a tenth of a 10,000-error validation.
_remembered_match = lru_cache(maxsize=1024)(_close_match)


def _one_slip(a: str, b: str) -> bool:
    """Whether b is a with one letter inserted, deleted, replaced, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and (a[diff[1]] == b[diff[0]])
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1 :]


def suggest(word: str, options: Iterable[str]) -> str:
    """' (did you mean 'X'?)' for a likely intended option, else an empty string."""
    match = close_match(word, options)
    return f" (did you mean '{match}'?)" if match else ""


def missing(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def required(what: str) -> str:
    """The message for a missing value: 'a value is required (expected an entity id)'."""
    article = "an" if what[:1].lower() in "aeiou" else "a"
    return f"a value is required (expected {article} {what})"


def unknown(what: str, value: object, options: Iterable[str]) -> str:
    """'unknown entity 'X' (did you mean ...)', or the required-value message when empty."""
    if missing(value):
        return required(what)
    return f"unknown {what} '{value}'" + suggest(str(value), options)

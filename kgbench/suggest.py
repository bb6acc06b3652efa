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
from collections.abc import Iterable

SIMILARITY = 0.8  # lowest difflib ratio (case-folded) at which a name is suggested

_DIGITS = re.compile(r"[0-9]+")
_SEPARATORS = re.compile(r"[^0-9a-z]+")


def _id_key(text: str) -> str:
    """An identifier with case, separators and zero padding removed."""
    folded = _SEPARATORS.sub("", text.casefold())
    return _DIGITS.sub(lambda m: str(int(m.group())), folded)


def close_match(word: str, options: Iterable[str]) -> str | None:
    """The option the user probably meant, or None (see the module docstring)."""
    word = str(word)
    if not word.strip():
        return None
    choices = sorted({str(o) for o in options})
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

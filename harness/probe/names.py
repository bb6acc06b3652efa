"""Concept names: one normal form for matching, and screening of names a model returned.

A model's answer is evidence, so nothing is repaired: names that are not text, empty, longer
than the declared limit, the asked concept itself (a self-loop) or repeated are dropped and
counted by reason, never silently kept or guessed at.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any

_NON_WORD = re.compile(r"[\W_]+")


def name_key(name: str) -> str:
    """Case-, accent-width- and punctuation-insensitive form: 'LDL-Cholesterol' -> 'ldl
    cholesterol'. Two names with the same key are the same node of a generated graph."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(_NON_WORD.sub(" ", text).split())


def tidy(name: str) -> str:
    """A name as shown: inner whitespace collapsed."""
    return " ".join(name.split())


def screen_concepts(
    values: list[Any], asked: str | None, max_length: int
) -> tuple[list[str], Counter[str]]:
    """The usable names of one answer (in order) and the count of dropped ones by reason."""
    kept: list[str] = []
    dropped: Counter[str] = Counter()
    seen: set[str] = set()
    asked_key = name_key(asked) if asked is not None else None
    for value in values:
        if not isinstance(value, str):
            dropped["not_text"] += 1
            continue
        if len(value) > max_length:
            dropped["too_long"] += 1
            continue
        text = tidy(value)
        key = name_key(text)
        if not key:
            dropped["empty"] += 1
        elif key == asked_key:
            dropped["self_loop"] += 1
        elif key in seen:
            dropped["duplicate"] += 1
        else:
            seen.add(key)
            kept.append(text)
    return kept, dropped

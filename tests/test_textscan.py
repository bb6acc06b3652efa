"""kgbench.textscan: the same answer as the character class it replaces, on every character."""

from __future__ import annotations

import re

from kgbench.textscan import contains_any

SETS = ('"\\' + "".join(map(chr, range(0x20))), ',"\r\n', '\t\r\n\u2028\u2029\x85|"')


def test_contains_any_matches_the_character_class() -> None:
    texts = ["", "plain text", "é ü ß", "emoji 😀", "a\x00b"]
    texts += [f"x{chr(c)}y" for c in range(0x2100)]
    for chars in SETS:
        pattern = re.compile("[" + re.escape(chars) + "]")
        for text in texts:
            assert contains_any(text, chars) == (pattern.search(text) is not None), (chars, text)


def test_contains_any_finds_a_character_at_either_end() -> None:
    assert contains_any('"' + "a" * 100_000, '"\\')
    assert contains_any("a" * 100_000 + "\\", '"\\')
    assert not contains_any("a" * 100_000, '"\\')


def test_joined_strs_is_the_join_of_str_columns_only() -> None:
    from kgbench.textscan import joined_strs

    assert joined_strs(["a", "b"], "\t") == "a\tb"
    assert joined_strs([]) == ""
    assert joined_strs(["a", None]) is None
    assert joined_strs([1.5, "a"]) is None
    assert joined_strs([("a",), "b"]) is None

"""'Did you mean' hints are offered only when they are probably what was meant, and a missing
value is said to be required (kgbench.suggest, shared by the compiler and the harness)."""

from __future__ import annotations

import pytest

from kgbench.suggest import close_match, suggest, unknown


@pytest.mark.parametrize(
    ("word", "options", "expected"),
    [
        ("TARGETZ", ["TARGETS", "INDICATED_FOR"], "TARGETS"),  # one letter changed
        ("nmae", ["id", "name", "category"], "name"),  # two letters swapped
        ("Drugs", ["Drug", "Disease"], "Drug"),  # one letter added
        ("causal_path", ["causal_path_assertion_ids", "claims"], "causal_path_assertion_ids"),
        ("targets", ["TARGETS"], "TARGETS"),  # case only
        ("drg_001", ["DRG_0001", "DRG_0002"], "DRG_0001"),  # same id, other spelling
        ("DRG-0001", ["DRG_0001"], "DRG_0001"),
        # an id with another number names another entity: never suggested
        ("DRG_0099", ["DRG_0009", "DRG_0098", "DRG_0100"], None),
        ("POP_0007", ["POP_0001"], None),
        ("EV_0003", ["EV_0002", "EV_0030"], None),
        # a word that shares a few letters with an option is not a typo of it
        ("Xylophone", ["TARGETS", "PARTICIPATES_IN"], None),
        ("rate", ["date", "rare"], None),  # two equally likely slips: no guess
        ("", ["DRG_0001"], None),
    ],
)
def test_close_match(word: str, options: list[str], expected: str | None) -> None:
    assert close_match(word, options) == expected
    assert (suggest(word, options) != "") is (expected is not None)


def test_a_missing_value_is_required_never_unknown() -> None:
    for empty in ("", "   ", None):
        message = unknown("entity", empty, ["DRG_0001"])
        assert message == "a value is required (expected an entity)"
        assert "unknown" not in message
    assert unknown("evidence source", "EV_9", ["EV_0009"]) == (
        "unknown evidence source 'EV_9' (did you mean 'EV_0009'?)"
    )
    assert unknown("assertion", "ASR_0099", ["ASR_0009"]) == "unknown assertion 'ASR_0099'"

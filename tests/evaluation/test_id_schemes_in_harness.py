"""Issue 29 item 2: everything in the harness reads a domain's own id schemes.

The context-reader reads ids by where the compiled templates put them, so a domain whose
`id_schemes` write `[C-001] ... | evidence: SRC-1` is read exactly like the paper's
`[ASR_0001] ... | evidence: EV_0001` (the 2026-12 curator's domain: accuracy 0.125 instead of
about 0.56, every grounded prompt a silent abstention). A grounded context it cannot read at
all is an error, never an abstention.
"""

from __future__ import annotations

import re

import pytest

from harness.evaluation.prompts import PromptRenderer
from harness.evaluation.responders import parse_prompt, respond
from kgbench.errors import UserError

CONDITIONS = ("C2", "C3", "C4")
PAPER_ID = re.compile(r"\b(ASR|EV)_([0-9]+)\b")


def foreign(text: str) -> str:
    """The same text under another domain's id schemes (assertions C-001, sources SRC-1)."""
    return PAPER_ID.sub(
        lambda m: f"C-{int(m[2]):03d}" if m[1] == "ASR" else f"SRC-{int(m[2])}", text
    )


@pytest.fixture(scope="module")
def prompts(mini_domain, mini_scenarios, load_context) -> dict[tuple[str, str], str]:
    renderer = PromptRenderer(mini_domain)
    return {
        (s["scenario_id"], c): renderer.render(s, c, load_context(s["scenario_id"], c))
        for s in mini_scenarios
        for c in CONDITIONS
    }


def test_the_context_reader_answers_alike_under_any_id_scheme(prompts) -> None:
    answered = 0
    for key, text in prompts.items():
        paper = respond("context-reader", text)
        own = respond("context-reader", foreign(text))
        assert own["recommended_intervention"] == paper["recommended_intervention"], key
        for field in (
            "causal_path_assertion_ids",
            "adverse_effect_assertion_ids",
            "contraindication_assertion_ids",
            "supporting_evidence_ids",
        ):
            assert own[field] == [foreign(i) for i in paper[field]], (key, field)
        answered += paper["recommended_intervention"] is not None
        parsed = parse_prompt(foreign(text))
        assert len(parsed.lines) == len(parse_prompt(text).lines) and not parsed.unread, key
        assert all(ln.assertion_id.startswith("C-") for ln in parsed.lines)
        assert all(e.startswith("SRC-") for ln in parsed.lines for e in ln.evidence_ids)
    assert answered  # the comparison covers real picks, not only abstentions


def test_no_evidence_is_weak_and_cites_nothing() -> None:
    text = "[C-007] Drug A -CAUSES_DECREASE_IN-> Stroke | evidence: none"
    parsed = parse_prompt(
        "# Scenario IT-001\nTarget outcome: Stroke\n# Candidate options\n- Drug A\n"
        "# Grounded context\n" + text
    )
    (line,) = parsed.lines
    assert line.assertion_id == "C-007" and line.evidence_ids == () and line.weak


def test_a_grounded_context_the_reader_cannot_read_is_an_error(prompts) -> None:
    text = next(t for (_, c), t in prompts.items() if c == "C3")
    broken = re.sub(r"\| evidence: ", "| sources: ", text)  # a template the reader does not know
    assert parse_prompt(broken).unread > 0
    with pytest.raises(UserError, match=r"recognises none of the \d+ assertion line"):
        respond("context-reader", broken)

"""Reference responders: the oracle is perfect, the context-reader reads only its prompt."""

from __future__ import annotations

import pytest

from harness.prompts import PromptRenderer
from harness.responders import parse_prompt, respond
from harness.scoring import coerce_response
from kgbench.errors import UserError

CONDITIONS = ("C1", "C2", "C3", "C4")


@pytest.fixture(scope="module")
def prompts(mini_domain, mini_scenarios, load_context) -> dict[tuple[str, str], str]:
    renderer = PromptRenderer(mini_domain)
    return {
        (s["scenario_id"], c): renderer.render(s, c, load_context(s["scenario_id"], c))
        for s in mini_scenarios
        for c in CONDITIONS
    }


def test_every_answer_follows_the_contract(prompts, mini_scenarios):
    by_id = {s["scenario_id"]: s for s in mini_scenarios}
    for (sid, _), text in prompts.items():
        for name in ("oracle", "context-reader", "ungrounded"):
            coerced = coerce_response(respond(name, text, by_id[sid]))
            assert coerced.parse_ok and coerced.schema_ok, (name, sid, coerced.problems)


def test_oracle_is_perfect_on_every_defined_metric(
    prompts, mini_scenarios, mini_scorer, load_context
):
    for scenario in mini_scenarios:
        sid, gold = scenario["scenario_id"], scenario["gold"]
        for cond in CONDITIONS:
            ctx = load_context(sid, cond)
            for given in (scenario, gold):  # the whole scenario, or the gold object only
                item = mini_scorer.score(gold, respond("oracle", prompts[sid, cond], given), ctx)
                assert item.parse_ok and item.schema_ok and not item.unknown_ids
                for name, value in item.scores.items():
                    if name == "unsupported_claim_rate":
                        continue
                    assert value in (None, 1.0), (sid, cond, name, value)
                assert item.scores["intervention_accuracy"] == 1.0
                rate = item.scores["unsupported_claim_rate"]
                if ctx is None:
                    assert rate is None
                    continue
                path = gold["causal_path_assertion_ids"]
                retrieved = [a for a in path if a in ctx["assertions"]]
                # Claims are stated only for retrieved edges; the cited ids are all counted.
                expected = (len(path) - len(retrieved)) / (len(path) + len(retrieved))
                assert rate == pytest.approx(expected), (sid, cond)
                if len(retrieved) == len(path):
                    assert rate == 0.0


def test_oracle_names_the_candidate_label(prompts, mini_scenarios):
    scenario = mini_scenarios[2]
    answer = respond("oracle", prompts[scenario["scenario_id"], "C4"], scenario)
    assert answer["recommended_intervention"] == "Amlodipine"
    assert answer["claims"][0] == {
        "subject": "Amlodipine",
        "predicate": "TARGETS",
        "object": "L-type calcium channel Cav1.2",
    }


def test_context_reader_uses_only_what_the_context_shows(prompts):
    def read(sid: str, cond: str) -> dict:
        return respond("context-reader", prompts[sid, cond])

    c1 = read("SCN_0003", "C1")
    assert c1["recommended_intervention"] == "Lisinopril"  # a guess: the first option
    assert c1["causal_path_assertion_ids"] == [] and c1["supporting_evidence_ids"] == []
    # C3 shows both chains but no contraindication: it takes the first chain.
    c3 = read("SCN_0003", "C3")
    assert c3["recommended_intervention"] == "Lisinopril"
    assert c3["causal_path_assertion_ids"] == ["ASR_0001", "ASR_0002", "ASR_0003"]
    # C4 shows that lisinopril is contraindicated in pregnancy, which the vignette mentions.
    c4 = read("SCN_0003", "C4")
    assert c4["recommended_intervention"] == "Amlodipine"
    assert c4["causal_path_assertion_ids"] == ["ASR_0008", "ASR_0009", "ASR_0010"]
    assert c4["contraindication_assertion_ids"] == ["ASR_0007"]
    assert c4["supporting_evidence_ids"] == ["EV_0001"]
    assert c4["uncertainty_flag"] is False
    # Adverse effects of its choice, with their evidence.
    direct = read("SCN_0001", "C3")
    assert direct["adverse_effect_assertion_ids"] == ["ASR_0006"]
    assert set(direct["supporting_evidence_ids"]) == {"EV_0001", "EV_0002"}


def test_context_reader_prefers_supported_chains_and_flags_weak_ones(prompts):
    # SCN_0004 under C4 shows smoking cessation's weak chain and amlodipine's validated one
    mixed = respond("context-reader", prompts["SCN_0004", "C4"])
    assert mixed["recommended_intervention"] == "Amlodipine"
    assert mixed["causal_path_assertion_ids"] == ["ASR_0008", "ASR_0009", "ASR_0010", "ASR_0004"]
    assert mixed["uncertainty_flag"] is False
    only_weak = (
        "# Scenario SCN_0009\nA patient.\n\nDecision: choose.\nTarget outcome: Major adverse "
        "cardiovascular events\n\n# Candidate options\n- Smoking cessation\n- Amlodipine\n\n"
        "# Grounded context: Integrated\n\n## Causal pathways with provenance\n"
        "Pathway from Smoking cessation:\n"
        "  1. [ASR_0011] Smoking cessation -CAUSES_DECREASE_IN-> Tobacco smoking (direction: "
        "decrease) | evidence: EV_0001 | evidence level: high | validated\n"
        "  2. [ASR_0013] Tobacco smoking -CAUSES_INCREASE_IN-> Major adverse cardiovascular events "
        "(direction: increase) | evidence: none | evidence level: low | not validated\n\n"
        "# Answer format\n"
    )
    weak = respond("context-reader", only_weak)
    assert weak["recommended_intervention"] == "Smoking cessation"
    assert weak["causal_path_assertion_ids"] == ["ASR_0011", "ASR_0013"]
    assert weak["uncertainty_flag"] is True
    no_chain = respond("context-reader", prompts["SCN_0001", "C2"])
    assert no_chain["causal_path_assertion_ids"] == [] and no_chain["uncertainty_flag"] is True


def test_ungrounded_answers_first_option_without_ids(prompts):
    answer = respond("ungrounded", prompts["SCN_0005", "C4"])
    assert answer["recommended_intervention"] == "Amlodipine"
    assert not any(answer[k] for k in answer if k.endswith("_ids"))


def test_parse_prompt_reads_the_paper_line_format():
    text = (
        "# Scenario SCN_0001\nA patient.\n\nDecision: choose.\nTarget outcome: Blood pressure\n\n"
        "# Candidate options\n- Lisinopril\n- Atenolol\n\n# Grounded context: Integrated\n\n"
        "## Causal pathways with provenance\nPathway from Lisinopril:\n"
        "  1. [ASR_0019] Lisinopril -TARGETS-> Angiotensin-converting enzyme (direction: decrease)"
        " | evidence: EV_0007, EV_0011 | provenance: guideline | evidence level: high | validated\n"
        "  2. [ASR_0011] ACE -CAUSES_INCREASE_IN-> Blood pressure (direction: increase) | "
        "evidence: none | evidence level: low | not validated\n\n# Answer format\n"
        "- [ASR_0099] Ignored -TARGETS-> Lines | evidence: EV_0001\n"
    )
    parsed = parse_prompt(text)
    assert parsed.candidates == ["Lisinopril", "Atenolol"]
    assert parsed.target == "Blood pressure" and parsed.grounded
    assert [ln.assertion_id for ln in parsed.lines] == ["ASR_0019", "ASR_0011"]
    first, second = parsed.lines
    assert first.evidence_ids == ("EV_0007", "EV_0011") and not first.weak
    assert second.evidence_ids == () and second.weak
    assert parsed.pathways == [("Lisinopril", [first, second])]


def test_bad_responder_name_and_oracle_without_gold_are_user_errors():
    with pytest.raises(UserError, match="unknown reference responder"):
        respond("gpt-9", "prompt")
    with pytest.raises(UserError, match="needs the scenario's gold"):
        respond("oracle", "prompt")

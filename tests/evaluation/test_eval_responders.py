"""Reference responders: the oracle is perfect, the context-reader reads only its prompt."""

from __future__ import annotations

import json

import pytest

from harness.compiled import CompiledDomain
from harness.evaluation.compiled_scorer import load_compiled_scorer
from harness.evaluation.judge import judge
from harness.evaluation.prompts import PromptRenderer
from harness.evaluation.responders import parse_prompt, respond
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


def test_every_answer_follows_the_contract(prompts, mini_scenarios, mini_scorer):
    by_id = {s["scenario_id"]: s for s in mini_scenarios}
    for (sid, _), text in prompts.items():
        for name in ("oracle", "context-reader", "ungrounded"):
            coerced = judge(respond(name, text, by_id[sid]), mini_scorer.contract)
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
                if not path:  # an abstention cites no chain: no claims to check
                    assert rate is None
                    continue
                retrieved = [a for a in path if a in ctx["assertions"]]
                # Claims are stated only for retrieved edges; the cited ids are all counted.
                expected = (len(path) - len(retrieved)) / (len(path) + len(retrieved))
                assert rate == pytest.approx(expected), (sid, cond)
                if len(retrieved) == len(path):
                    assert rate == 0.0


@pytest.mark.parametrize("domain_name", ["cardio", "afib"])
def test_oracle_is_perfect_on_every_defined_metric_of_a_real_gold(domain_name: str) -> None:
    """The mini fixture's gold predates outcome claims and equal chains; on the committed
    golds the oracle's evidence list holds the outcome trials and every equal chain's sources,
    and each must support what it cites (no context: C1, rendered by the compiled frame)."""
    compiled = CompiledDomain.open(domain_name)
    scorer = load_compiled_scorer(compiled)
    renderer = PromptRenderer(compiled)
    with compiled.generated_scenarios.open(encoding="utf-8") as fh:
        scenarios = [json.loads(line) for line in fh if line.strip()]
    cited_sources = 0
    for scenario in scenarios:
        answer = respond("oracle", renderer.render(scenario, "C1", None), scenario)
        item = scorer.score(scenario["gold"], answer, None)
        assert item.parse_ok and item.schema_ok and not item.unknown_ids
        for name, value in item.scores.items():
            assert value in (None, 1.0), (scenario["scenario_id"], name, value)
        cited_sources += len(answer["supporting_evidence_ids"])
    assert cited_sources > len(scenarios)  # the golds do cite sources: the check has teeth


def test_oracle_names_the_candidate_label(prompts, mini_scenarios):
    scenario = mini_scenarios[2]
    answer = respond("oracle", prompts[scenario["scenario_id"], "C4"], scenario)
    assert answer["recommended_intervention"] == "Amlodipine"
    assert answer["claims"][0] == {
        "subject": "Amlodipine",
        "predicate": "TARGETS",
        "object": "L-type calcium channel Cav1.2",
    }


PROMPT = (
    "# Scenario SCN_0009\n{vignette}\n\nDecision: choose.\nTarget outcome: Stroke\n\n"
    "# Candidate options\n- Lisinopril\n- Metoprolol\n- Amlodipine\n\n"
    "# Grounded context: Integrated\n\n## Causal pathways with provenance\n"
    "Pathway from Lisinopril:\n"
    "  1. [ASR_0001] Lisinopril -TARGETS-> ACE (direction: decrease) | evidence: EV_0006\n"
    "  2. [ASR_0005] ACE -CAUSES_INCREASE_IN-> Stroke (direction: increase) | evidence: EV_0006\n"
    "Pathway from Metoprolol:\n"
    "  1. [ASR_0007] Metoprolol -TARGETS-> Beta-1 receptor (direction: decrease) | evidence: EV_0006\n"
    "  2. [ASR_0009] Beta-1 receptor -CAUSES_INCREASE_IN-> Stroke (direction: increase) | "
    "evidence: EV_0006\n\n"
    "## Outcome evidence for the target, including null results\n"
    "- [ASR_0023] ACE inhibitor -CAUSES_DECREASE_IN-> Stroke (direction: decrease) | evidence: "
    "EV_0001, EV_0004 | class-level claim for ACE inhibitor, applies to Lisinopril\n"
    "- [ASR_0032] Metoprolol -HAS_NO_EFFECT_ON-> Stroke | evidence: EV_0007\n"
    "{amlodipine}"
    "\n## Safety\n"
    "- [ASR_0033] ACE inhibitor -CONTRAINDICATED_FOR-> History of angioedema | evidence: EV_0001"
    " | class-level claim for ACE inhibitor, applies to Lisinopril\n\n# Answer format\n"
)
AMLODIPINE = (
    "- [ASR_0028] Amlodipine -CAUSES_DECREASE_IN-> Stroke (direction: decrease) | evidence: "
    "EV_0005\n"
)


def test_context_reader_answers_from_outcome_evidence_not_from_chains():
    # lisinopril has outcome evidence through its class; metoprolol only a chain and a null
    answer = respond("context-reader", PROMPT.format(vignette="A man.", amlodipine=""))
    assert answer["recommended_intervention"] == "Lisinopril"
    assert answer["causal_path_assertion_ids"] == ["ASR_0001", "ASR_0005"]
    assert set(answer["supporting_evidence_ids"]) >= {"EV_0001", "EV_0004", "EV_0006"}
    assert answer["uncertainty_flag"] is False
    # the class contraindication hits a finding the vignette names: the next supported option
    ruled = respond(
        "context-reader",
        PROMPT.format(vignette="A man with a history of angioedema.", amlodipine=AMLODIPINE),
    )
    assert ruled["recommended_intervention"] == "Amlodipine"
    assert ruled["causal_path_assertion_ids"] == ["ASR_0028"]  # its outcome line, no chain
    assert ruled["contraindication_assertion_ids"] == ["ASR_0033"]
    # nothing supported that the patient can take: abstain, never a surrogate-chain pick
    none = respond(
        "context-reader",
        PROMPT.format(vignette="A man with a history of angioedema.", amlodipine=""),
    )
    assert none["recommended_intervention"] is None and none["uncertainty_flag"] is True


def test_context_reader_on_the_mini_run(prompts):
    c1 = respond("context-reader", prompts["SCN_0003", "C1"])
    assert c1["recommended_intervention"] == "Lisinopril"  # a guess: the first option
    assert c1["causal_path_assertion_ids"] == [] and c1["supporting_evidence_ids"] == []
    # lisinopril's class claim lowers blood pressure; only C4 shows its pregnancy
    # contraindication, which the vignette mentions, so only C4 turns to amlodipine
    for cond in ("C2", "C3"):
        assert respond("context-reader", prompts["SCN_0003", cond])["recommended_intervention"] == (
            "Lisinopril"
        )
    c4 = respond("context-reader", prompts["SCN_0003", "C4"])
    assert c4["recommended_intervention"] == "Amlodipine"
    assert c4["contraindication_assertion_ids"] == ["ASR_0007"]
    assert c4["causal_path_assertion_ids"] == ["ASR_0008", "ASR_0009", "ASR_0010"]
    # no candidate has outcome evidence for MACE in SCN_0004: the reader abstains
    c3 = respond("context-reader", prompts["SCN_0004", "C3"])
    assert c3["recommended_intervention"] is None and c3["uncertainty_flag"] is True


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

"""The noisy oracle: the oracle at a declared error rate, deterministic in (prompt, seed),
reachable in-process (ref:noisy-oracle-<rate>) and through the reference server by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.evaluation.judge import compile_contract, judge
from harness.evaluation.responders import is_responder, noisy_rate, respond
from harness.runner.spec import parse_model_spec
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scenarios(release: Path) -> list[dict]:
    lines = (release / "scenarios.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def prompt_of(scenario: dict) -> str:
    return f"# Scenario {scenario['scenario_id']}\n(prompt text)\n"


def wrong(answer: dict, scenario: dict) -> bool:
    gold = scenario["gold"]
    labels = {c["intervention_id"]: c["label"] for c in scenario["candidates"]}
    right = labels.get(gold["preferred_intervention"]) if gold["preferred_intervention"] else None
    return answer["recommended_intervention"] != right


def test_error_rate_is_what_was_declared_and_errors_are_nested(scenarios) -> None:
    prompts = [(prompt_of(s), s, seed) for s in scenarios for seed in range(25)]  # 2,000 draws
    errs = {}
    for rate in (0.0, 0.1, 0.3, 1.0):
        errs[rate] = {
            i
            for i, (p, s, seed) in enumerate(prompts)
            if wrong(respond(f"noisy-oracle-{rate:g}", p, s, seed), s)
        }
    n = len(prompts)
    assert errs[0.0] == set() and len(errs[1.0]) == n
    assert abs(len(errs[0.1]) / n - 0.1) < 0.03 and abs(len(errs[0.3]) / n - 0.3) < 0.04
    assert errs[0.1] <= errs[0.3]  # a higher rate errs wherever a lower one does


def test_deterministic_in_prompt_and_seed_and_in_the_contract(scenarios) -> None:
    s = scenarios[0]
    answers = {json.dumps(respond("noisy-oracle-0.5", prompt_of(s), s, seed)) for seed in range(40)}
    # the right answer, or one of the wrong candidates
    assert 2 <= len(answers) <= len(s["candidates"]) + 1
    again = respond("noisy-oracle-0.5", prompt_of(s), s, 7)
    assert again == respond("noisy-oracle-0.5", prompt_of(s), s, 7)
    schema = REPO / "generated" / "cardio" / "schemas" / "response.schema.json"
    coerced = judge(again, compile_contract(json.loads(schema.read_text())))
    assert coerced.parse_ok and coerced.schema_ok


def test_names_and_specs() -> None:
    assert noisy_rate("noisy-oracle-0.25") == 0.25 and noisy_rate("noisy-oracle") is None
    assert is_responder("noisy-oracle-1") and not is_responder("noisy-oracle-1.5")
    assert parse_model_spec("ref:noisy-oracle-0.2").name == "noisy-oracle-0.2"
    with pytest.raises(UserError, match="noisy-oracle-<rate>"):
        respond("noisy-oracle-2", "x", {})


def test_the_reference_server_answers_noisy_oracle_names_with_the_request_seed(
    release: Path, scenarios
) -> None:
    from openai import OpenAI

    from harness.server.app import start_server_in_thread

    url, stop = start_server_in_thread(run_dir=release)
    try:
        client = OpenAI(base_url=url, api_key="local", max_retries=0)
        s = scenarios[3]
        for seed in (1, 2, 3):
            reply = client.chat.completions.create(
                model="noisy-oracle-0.5",
                seed=seed,
                messages=[{"role": "user", "content": prompt_of(s)}],
            )
            got = json.loads(reply.choices[0].message.content)
            assert got == respond("noisy-oracle-0.5", prompt_of(s), s, seed)
    finally:
        stop()

"""Response key order is a decision (spec/response.yaml): the compiled schema and the prompt
keep the declared order, and a strict decoder (llguidance's grammar of the compiled schema)
accepts every answer the reference responders send, byte for byte as sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.compiled import CompiledDomain
from harness.evaluation.prompts import build_prompts
from harness.evaluation.responders import RESPONDERS, noisy_name
from harness.runfolder import RunFolder
from harness.server.completions import Answerer
from tests.response_grammar import StrictGrammar

REPO = Path(__file__).resolve().parents[2]
DOMAINS = sorted(p.name for p in (REPO / "domains").iterdir() if (p / "domain.yaml").exists())


def declared_fields() -> list[str]:
    """ModelResponse's attributes in the order spec/response.yaml writes them (read as YAML,
    independently of the compiler)."""
    spec = yaml.safe_load((REPO / "spec" / "response.yaml").read_text(encoding="utf-8"))
    return list(spec["classes"]["ModelResponse"]["attributes"])


def response_schema(domain: str) -> dict:
    path = REPO / "generated" / domain / "schemas" / "response.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("domain", DOMAINS)
def test_compiled_schema_and_prompt_keep_the_declared_order(domain: str) -> None:
    fields = declared_fields()
    assert fields[0] == "recommended_intervention" and fields[-1] == "rationale"
    schema = response_schema(domain)
    assert list(schema["properties"]) == fields
    assert schema["required"] == fields
    claim = schema["$defs"]["Claim"]
    assert list(claim["properties"]) == ["subject", "predicate", "object"]
    frame = (REPO / "generated" / domain / "prompts" / "frame.j2").read_text(encoding="utf-8")
    listed = [line.split("`")[1] for line in frame.splitlines() if line.startswith("- `")]
    assert listed == fields, "the prompt lists the fields in the schema's order"
    embedded = frame[frame.index("{% raw %}") + len("{% raw %}") : frame.index("{% endraw %}")]
    assert list(json.loads(embedded)["properties"]) == fields


def test_strict_grammar_follows_the_schema_order() -> None:
    """The check is not vacuous: llguidance rejects the same answer with its keys reordered."""
    grammar = StrictGrammar(response_schema("cardio"))
    answer = {
        "recommended_intervention": "lisinopril",
        "causal_path_assertion_ids": ["ASR_0019"],
        "adverse_effect_assertion_ids": [],
        "contraindication_assertion_ids": [],
        "supporting_evidence_ids": ["EV_0011"],
        "claims": [{"subject": "lisinopril", "predicate": "lowers", "object": "blood pressure"}],
        "uncertainty_flag": False,
        "rationale": "x",
    }
    assert grammar.problem(json.dumps(answer)) is None
    assert grammar.problem(json.dumps({**answer, "recommended_intervention": None})) is None
    assert grammar.problem(json.dumps(answer, sort_keys=True)) is not None
    assert grammar.problem(json.dumps({**answer, "extra": 1})) is not None
    assert grammar.problem(json.dumps(answer)[:-1]) is not None


def test_every_reference_answer_passes_the_strict_grammar_as_sent(
    mini_domain: CompiledDomain, run_dir: Path, mini_scenarios: list[dict]
) -> None:
    """What the local OpenAI-compatible server sends for each reference responder (the pilot's
    answers) is text a strictly decoding model could have written."""
    grammar = StrictGrammar(mini_domain.json("schemas/response.schema.json"))
    build_prompts(run_dir, str(mini_domain.root))
    gold = {s["scenario_id"]: s["gold"] for s in mini_scenarios}
    prompts = RunFolder.open(run_dir).prompts()
    assert prompts
    names = [*RESPONDERS, noisy_name(0.5)]  # every registered responder, the noisy family too
    checked = 0
    for name in names:
        answerer = Answerer(name, gold)
        for record in prompts:
            body = {"model": name, "messages": record.messages, "seed": 1}
            text = answerer.answer(body)["choices"][0]["message"]["content"]
            assert grammar.problem(text) is None, (name, record.prompt_id, text[:200])
            checked += 1
    assert checked == len(names) * len(prompts)

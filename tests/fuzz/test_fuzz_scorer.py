"""Fuzz the scorer: any answer is scored (values None or in [0, 1], a known parse status),
and `score_response` agrees with `kgbench score` on every input."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.evaluation.compiled_scorer import load_compiled_scorer
from harness.evaluation.judge import PARSE_STATUSES, compile_contract
from harness.evaluation.prompts import build_prompts
from harness.evaluation.run_scoring import score_run
from harness.evaluation.scoring import apply_policy, score_response
from harness.runner.log import JsonlLog
from harness.runner.records import verdict_fields
from kgbench.locations import CHECKOUT as REPO_ROOT

from .settings import budget
from .strategies import contract_like, json_value, model_answer

MINI = REPO_ROOT / "tests" / "fixtures" / "domains" / "mini"
MINI_RUN = REPO_ROOT / "tests" / "evaluation" / "fixtures" / "mini_run"


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    result = compile_domain(str(MINI), out_root=tmp_path_factory.mktemp("gen"))
    return CompiledDomain("mini", result.out_dir)


@pytest.fixture(scope="module")
def scenarios() -> list[dict]:
    return [json.loads(x) for x in (MINI_RUN / "scenarios.jsonl").read_text().splitlines()]


def _context(sid: str, cond: str) -> dict | None:
    path = MINI_RUN / "contexts" / sid / f"{cond}.json"
    return json.loads(path.read_text()) if path.exists() else None


@budget(ms=11.4)
@given(
    answer=st.one_of(model_answer(), contract_like(), json_value),
    which=st.integers(0, 7),
    cond=st.sampled_from(["C1", "C2", "C3", "C4"]),
)
def test_any_answer_is_scored(mini, scenarios, answer, which, cond) -> None:
    scorer = load_compiled_scorer(mini)
    scenario = scenarios[which]
    item = scorer.score(scenario["gold"], answer, _context(scenario["scenario_id"], cond))
    assert item.parse_status in PARSE_STATUSES
    for name, value in item.scores.items():
        assert value is None or 0.0 <= value <= 1.0, (name, value)
    lib = score_response(
        scenario["gold"], answer, _context(scenario["scenario_id"], cond), domain=mini
    )
    assert dict(lib) == item.scores and lib.parse_status == item.parse_status


@budget(ms=126, divisor=8, floor=4)
@given(pool=st.lists(model_answer(), min_size=1, max_size=5), offset=st.integers(0, 4))
@example(
    pool=['{"recommended_intervention": null, "causal_path_assertion_ids": ["\x85"]}'], offset=0
)
def test_score_response_agrees_with_kgbench_score(mini, pool, offset) -> None:
    """Random raw answers to the 32 prompts (cycling through a drawn pool) through the
    runner's judge and log, then `kgbench score`, and through `score_response`: equal scores
    and statuses under both policies."""
    answers = [pool[(i + offset) % len(pool)] for i in range(32)]
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        shutil.copytree(MINI_RUN, run_dir)
        build_prompts(run_dir, str(mini.root))
        prompts = [
            json.loads(x) for x in (run_dir / "prompts/prompts.jsonl").read_text().splitlines()
        ]
        contract = compile_contract(mini.json("schemas/response.schema.json"))
        log = JsonlLog(run_dir / "responses" / "fuzz.jsonl")
        records = []
        for prompt, raw in zip(prompts, answers, strict=True):
            records.append(
                {
                    "key": prompt["prompt_id"],
                    "prompt_id": prompt["prompt_id"],
                    "replicate": 0,
                    "model": "openai:fuzz",
                    "status": "ok",
                    "raw": raw,
                    **verdict_fields(raw, contract),
                }
            )
        log.append(records)
        log.close()
        score_run(run_dir, "fuzz", bootstrap=100, domain=str(mini.root))
        items = [
            json.loads(x)  # split on \n only: an answer may hold U+0085 or U+2028 (make fuzz)
            for x in (run_dir / "scores/fuzz/items.jsonl").read_text().split("\n")
            if x
        ]
        scenarios = {
            json.loads(x)["scenario_id"]: json.loads(x)
            for x in (run_dir / "scenarios.jsonl").read_text().splitlines()
        }
        raw_of = {r["prompt_id"]: r["raw"] for r in records}
        for item in items:
            gold = scenarios[item["scenario_id"]]["gold"]
            ctx = _context(item["scenario_id"], item["condition"])
            raw = raw_of[item["prompt_id"]]
            for policy in ("intent_to_treat", "per_protocol"):
                lib = score_response(gold, raw, ctx, domain=mini, policy=policy)
                assert lib.parse_status == item["parse_status"], item["prompt_id"]
                expected = apply_policy(item["scores"], item["parse_status"], policy)
                assert dict(lib) == expected, (item["prompt_id"], policy)

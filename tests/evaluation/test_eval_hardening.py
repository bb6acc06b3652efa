"""Scoring hardening: the review's section 3 and 4 failures, the declared policy for
unparseable answers, and agreement between `score_response` and `kgbench score`.

Timings here are generous bounds (20x the targets `make bench` reports) so they hold on a
loaded two-core machine; the figures themselves come from bench/hostile_bench.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.compiled import CompiledDomain
from harness.evaluation.claims import claim_reader, unsupported_claims
from harness.evaluation.compiled_scorer import load_compiled_scorer
from harness.evaluation.judge import compile_contract, fenced_blocks, parse_text
from harness.evaluation.lexicon import MEMO_SIZE, MEMO_TEXT, Lexicon, norm
from harness.evaluation.metric_inputs import MetricInputs
from harness.evaluation.metrics import DEFAULT_UNPARSEABLE_POLICY
from harness.evaluation.prompts import build_prompts
from harness.evaluation.responses_log import MixedLogError
from harness.evaluation.run_scoring import score_run
from harness.evaluation.scoring import score_response
from harness.runner.api import answer_with_reference
from harness.runner.log import JsonlLog
from harness.runner.records import verdict_fields
from kgbench.untrusted import MAX_DEPTH

REPO = Path(__file__).resolve().parents[2]
MB = 1_000_000


def adversarial_answers() -> dict[str, str]:
    """1 MB answers built to hit every super-linear path the review found or suspected."""
    claim = '{"subject": "Lisinopril", "predicate": "lowers", "object": "Blood pressure"}'
    claims = ", ".join([claim] * (MB // (len(claim) + 2)))
    ids = ", ".join(f'"ASR_{i:06d}"' for i in range(MB // 14))
    return {
        "fence then whitespace (review 3b)": "```" + " " * MB + "x",
        "json fence then whitespace": "```json" + "\n" * MB + "x",
        "many unclosed fences": "```" * (MB // 3),
        "brace storm": "{" * MB,
        "nested arrays": "[" * MB,
        "closing braces": "}" * MB,
        "claims": '{"claims": [' + claims + "]}",
        "cited ids": '{"causal_path_assertion_ids": [' + ids + "]}",
        "one long name": '{"recommended_intervention": "' + "lisinopril " * (MB // 11) + '"}',
        "prose naming drugs": "I recommend lisinopril or amlodipine. " * (MB // 38),
        "lone surrogates": '{"rationale": "' + "\\ud83d" * (MB // 6) + '"}',
        "fenced answer in whitespace": "```json\n{}\n```" + " \t" * (MB // 2),
    }


# --- review 3b: linear-time parsing and scoring -------------------------------------------


def test_fence_parsing_matches_the_regex_it_replaces():
    text = 'a ```json {"a": 1}``` b ```\n[2]\n``` c ```JSON\n3``` d ``` unclosed'
    assert fenced_blocks(text) == ['{"a": 1}', "[2]", "3"]
    assert parse_text('Answer:\n```json\n{"a": 1}\n```') == ({"a": 1}, "extracted")
    assert parse_text('{"a": 1}') == ({"a": 1}, "whole")
    assert parse_text("``` " * 10) == (None, None)


@pytest.mark.parametrize("kind", sorted(adversarial_answers()))
def test_a_1mb_adversarial_answer_is_scored_quickly(mini_scorer, load_context, kind):
    """Each 1 MB answer is scored, every score in range (its time is measured by `make bench`,
    hostile_bench, against a 50 ms target; tests assert no timings)."""
    raw = adversarial_answers()[kind]
    gold = {"preferred_intervention": "DRG_0001", "causal_path_assertion_ids": ["ASR_0001"]}
    context = load_context("SCN_0001", "C4")
    item = mini_scorer.score(gold, raw, context)
    assert all(v is None or 0.0 <= v <= 1.0 for v in item.scores.values())


def test_parsing_time_grows_linearly(mini_scorer):
    """The unclosed fence of review 3b at 64 kB and 1 MB: 16x the text, not 256x the time."""

    def best(n: int) -> float:
        raw = "```" + " " * n + "x"
        times = []
        for _ in range(5):
            start = time.perf_counter()
            mini_scorer.score({}, raw, None)
            times.append(time.perf_counter() - start)
        return min(times)

    small, large = best(MB // 16), best(MB)
    assert large < 64 * small + 0.05, (small, large)


def test_name_memo_is_bounded_and_agrees_with_a_fresh_lexicon(mini_domain):
    """The resolution memo (issue 17, item 5) never changes an answer and never grows past
    MEMO_SIZE entries; texts longer than MEMO_TEXT are resolved but not kept."""
    memoised, fresh = Lexicon.from_graph(mini_domain.graph), Lexicon.from_graph(mini_domain.graph)
    names = sorted(memoised.names)[:50]
    texts = [f"the drug {a} and {b} daily" for a in names for b in names[:5]]
    for text in texts + names:
        for _ in range(2):  # the second call answers from the memo
            assert memoised.resolve(text) == fresh._resolve(text)
            assert memoised.resolve_choice(text) == fresh._resolve_choice(text)
    long_text = "lisinopril " * (MEMO_TEXT // 10)
    assert memoised.resolve(long_text) == fresh._resolve(long_text)
    assert long_text not in memoised._memo["resolve"]
    for i in range(MEMO_SIZE + 10):
        memoised.resolve_equivalents(f"unknown name {i}")
    assert all(len(memo) <= MEMO_SIZE for memo in memoised._memo.values())


def _scan_supported(
    claim: dict[str, str], lexicon: Lexicon, context: dict[str, Any], spec: Any
) -> bool:
    """The assertion-by-assertion scan the per-response index replaced (the reference): an
    assertion with the claim's ends and its own predicate, or a role (and sign) the declared
    compatibility table lists for the claim's kind."""
    reader = claim_reader(spec)
    subj = lexicon.equivalents(lexicon._resolve(claim["subject"]))
    obj = lexicon.equivalents(lexicon._resolve(claim["object"]))
    kind = reader.kind_of(norm(claim["predicate"]))
    table = {k.name: k for k in spec.claim_support.kinds}
    for a in context["assertions"].values():
        if a["subject_id"] in subj and a["object_id"] in obj:
            if norm(claim["predicate"]) and norm(claim["predicate"]) == norm(a["predicate"]):
                return True
            role = lexicon.predicate_roles.get(a["predicate"])
            for s in table[kind].supported_by if kind else ():
                if s.role == role and s.direction in (None, a.get("direction")):
                    return True
    return False


def test_claims_join_on_either_side_of_the_context(mini_domain):
    """The per-response index joins claims to assertions from the smaller side (the claim's
    names, or the context's subjects): whichever drives, a claim is judged as the
    assertion-by-assertion scan judged it."""
    graph = mini_domain.graph
    lexicon = Lexicon.from_graph(graph)
    spec = next(m for m in load_compiled_scorer(mini_domain).metrics if m.claim_support)
    names = [e["name"] for e in graph["entities"]]
    names += [c["class_name"] for c in graph.get("intervention_classes", [])]
    every = {"assertions": {a["assertion_id"]: a for a in graph["assertions"]}}
    one = {"assertions": {a["assertion_id"]: a for a in graph["assertions"][:1]}}
    checked = 0
    predicates = ("", "lowers", "increases", "TREATS", "has no effect on", "may cause", "TARGETS")
    for context in (every, one):
        for subject in names:
            for obj in names[:8]:
                for predicate in predicates:
                    claim = {"subject": subject, "predicate": predicate, "object": obj}
                    inp = MetricInputs(lexicon, context, {"claims": [claim]}, None, spec)
                    expected = 0.0 if _scan_supported(claim, lexicon, context, spec) else 1.0
                    assert unsupported_claims(None, None, inp) == expected, claim
                    checked += expected == 0.0
    assert checked, "some claims are supported"


# --- review 3c / 4f: lone surrogates ------------------------------------------------------


def _records(run_dir: Path, domain: CompiledDomain, raws: dict[str, str], **extra: Any) -> None:
    """A runner log answering each prompt with `raws[prompt_id]` (through the runner's own
    judge and writer, so the records are exactly what `kgbench run` appends)."""
    contract = compile_contract(domain.json("schemas/response.schema.json"))
    prompts = [json.loads(x) for x in (run_dir / "prompts/prompts.jsonl").read_text().splitlines()]
    log = JsonlLog(run_dir / "responses" / "hostile.jsonl")
    records = []
    for p in prompts:
        raw = raws.get(p["prompt_id"], "{}")
        records.append(
            {
                "key": f"key-{p['prompt_id']}",
                "prompt_id": p["prompt_id"],
                "scenario_id": p["scenario_id"],
                "condition": p["condition"],
                "replicate": 0,
                "model": "openai:hostile",
                "status": "ok",
                "raw": raw,
                **verdict_fields(raw, contract),
                **extra,
            }
        )
    log.append(records)
    log.close()


@pytest.fixture
def prompted(run_dir: Path, mini_domain: CompiledDomain) -> Path:
    build_prompts(run_dir, str(mini_domain.root))
    return run_dir


def test_lone_surrogates_are_logged_and_scored(prompted: Path, mini_domain: CompiledDomain):
    """Review 3c and 4f: a truncated emoji ("\\ud83d") crashed the log writer and `score`."""
    surrogate = json.loads('"\\ud83d"')
    raws = {
        "SCN_0001/C2": '{"rationale": "cut \\ud83d", "recommended_intervention": "Lisinopril"}',
        "SCN_0001/C3": "not json " + surrogate,
        "SCN_0001/C4": json.dumps({"causal_path_assertion_ids": ["ASR_" + surrogate]}),
    }
    _records(prompted, mini_domain, raws)
    back = [json.loads(x) for x in (prompted / "responses/hostile.jsonl").read_bytes().splitlines()]
    assert {r["prompt_id"]: r["raw"] for r in back}["SCN_0001/C3"] == raws["SCN_0001/C3"]
    score_run(prompted, "hostile", bootstrap=100, domain=str(mini_domain.root))
    items = [
        json.loads(x) for x in (prompted / "scores/hostile/items.jsonl").read_bytes().splitlines()
    ]
    c4 = next(i for i in items if i["prompt_id"] == "SCN_0001/C4")
    assert c4["unknown_ids"] == ["ASR_" + surrogate]


def test_a_deeply_nested_answer_does_not_stop_the_runner(tmp_path: Path, mini_domain):
    contract = compile_contract(mini_domain.json("schemas/response.schema.json"))
    for raw in ("[" * 100_000, "[" * 500 + "]" * 500, '{"a":' * (MAX_DEPTH + 5) + "1" + "}" * 70):
        verdict = verdict_fields(raw, contract)
        assert verdict["parsed"] is None and not verdict["parse_ok"]
        log = JsonlLog(tmp_path / "log.jsonl")
        log.append([{"key": raw[:10], "raw": raw, "parsed": verdict["parsed"]}])
        log.close()
    assert len(JsonlLog(tmp_path / "log.jsonl").load()[0]) == 2  # two distinct keys


# --- review 3f: numbers from the log are checked ------------------------------------------


def test_a_corrupt_replicate_cannot_inflate_scoring(prompted: Path, mini_domain):
    """Review 3f: one record with replicate 1,000,000 made `score` build 320 million items."""
    _records(prompted, mini_domain, {})
    with (prompted / "responses/hostile.jsonl").open("a") as fh:
        fh.write(json.dumps({"prompt_id": "SCN_0001/C2", "replicate": 1_000_000, "status": "ok"}))
        fh.write("\n")
    score_run(prompted, "hostile", bootstrap=100, domain=str(mini_domain.root))
    panel = json.loads((prompted / "scores/hostile/panel.json").read_text())
    assert panel["replicates"] == 1
    assert panel["log"]["out_of_range_records"] == 1
    items = (prompted / "scores/hostile/items.jsonl").read_text().splitlines()
    assert len(items) == 32


def test_the_declared_replicates_bound_the_log(prompted: Path, mini_domain):
    _records(prompted, mini_domain, {})
    run_json = prompted / "run.json"
    run_json.write_text(json.dumps({**json.loads(run_json.read_text()), "replicates": 2}))
    with (prompted / "responses/hostile.jsonl").open("a") as fh:
        for rep in (1, 2, 7):
            fh.write(json.dumps({"prompt_id": "SCN_0001/C2", "replicate": rep, "status": "ok"}))
            fh.write("\n")
    score_run(prompted, "hostile", bootstrap=100, domain=str(mini_domain.root))
    panel = json.loads((prompted / "scores/hostile/panel.json").read_text())
    assert panel["replicates"] == 2
    assert panel["log"]["out_of_range_records"] == 2


# --- review 4e: one log, one request identity ---------------------------------------------


def test_score_refuses_a_log_mixing_two_request_identities(prompted: Path, mini_domain):
    """Review 4e: a second run with another --base-url appended 320 duplicate records and
    `score` silently kept the last."""
    _records(prompted, mini_domain, {}, params={"base_url": "http://127.0.0.1:8001/v1"})
    text = (prompted / "responses/hostile.jsonl").read_text()
    other = text.replace("8001", "8002").replace('"key":"key-', '"key":"other-')
    (prompted / "responses/hostile.jsonl").write_text(text + other)
    with pytest.raises(MixedLogError, match="answered under two request identities"):
        score_run(prompted, "hostile", bootstrap=100, domain=str(mini_domain.root))
    assert not (prompted / "scores").exists()


# --- one scoring policy, declared ---------------------------------------------------------


def test_the_default_policy_is_the_declared_one(mini_scorer):
    declared = yaml.safe_load((REPO / "spec/declarations/metrics.yaml").read_text())[
        "unparseable_policy"
    ]
    assert DEFAULT_UNPARSEABLE_POLICY == declared == mini_scorer.policy
    assert "intent-to-treat" in (REPO / "README.md").read_text()


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ('{"recommended_intervention": "Lisinopril"}', "schema_error"),
        ("Sure:\n```json\n{}\n```", "extracted"),
        ("I recommend lisinopril.", "unparseable"),
        ("[1, 2]", "unparseable"),
        ('{"recommended_intervention": ', "unparseable"),
    ],
)
def test_score_response_returns_the_parse_status(raw, status):
    gold = {"preferred_intervention": "DRG_0001", "acceptable_interventions": ["DRG_0001"]}
    scores = score_response(gold, raw, None, domain="cardio")
    assert scores.parse_status == status
    per_protocol = score_response(gold, raw, None, domain="cardio", policy="per_protocol")
    if status == "unparseable":
        assert scores["intervention_accuracy"] == 0.0  # intent-to-treat: a wrong answer
        assert all(v is None for v in per_protocol.values())  # per-protocol: left out
    else:
        assert dict(per_protocol) == dict(scores)


def test_a_complete_answer_parses_ok():
    full = {
        "recommended_intervention": "Lisinopril",
        "causal_path_assertion_ids": [],
        "adverse_effect_assertion_ids": [],
        "contraindication_assertion_ids": [],
        "supporting_evidence_ids": [],
        "claims": [],
        "uncertainty_flag": False,
        "rationale": "",
    }
    assert score_response({}, full, None, domain="cardio").parse_status == "ok"
    assert score_response({}, json.dumps(full), None, domain="cardio").parse_status == "ok"


# --- score_response and kgbench score agree -----------------------------------------------


def test_a_class_given_as_the_preferred_answer_scores_the_same_everywhere():
    """The review found `score_response` (no lexicon: no classes) and `kgbench score` (the
    compiled lexicon) disagreeing on "ACE inhibitor" for lisinopril; both now read the
    compiled domain the context names."""
    cardio = CompiledDomain.open("cardio")
    scorer = load_compiled_scorer(cardio)
    scenario = json.loads((cardio.root / "scenarios/scenarios.jsonl").read_text().splitlines()[0])
    gold = scenario["gold"]
    context = {"domain": "cardio", "assertions": {}, "entities": {}, "parameters": {}}
    for name in ("ACE inhibitor", "CLS_001", "Lisinopril", "ramipril", "Renin-angiotensin"):
        resp = {"recommended_intervention": name}
        expected = scorer.score(gold, resp, context).scores
        assert dict(score_response(gold, resp, context)) == expected, name
        assert (
            dict(score_response(gold, resp, None, domain="cardio"))
            == scorer.score(gold, resp, None).scores
        )


def test_reference_answers_agree_between_the_library_and_the_command(prompted, mini_domain):
    answer_with_reference(prompted, "context-reader")
    score_run(prompted, "ref-context-reader", bootstrap=100, domain=str(mini_domain.root))
    items = [
        json.loads(x)
        for x in (prompted / "scores/ref-context-reader/items.jsonl").read_text().splitlines()
    ]
    log = {
        json.loads(x)["prompt_id"]: json.loads(x)
        for x in (prompted / "responses/ref-context-reader.jsonl").read_text().splitlines()
    }
    scenarios = {
        json.loads(x)["scenario_id"]: json.loads(x)
        for x in (prompted / "scenarios.jsonl").read_text().splitlines()
    }
    for item in items:
        ctx_path = prompted / "contexts" / item["scenario_id"] / f"{item['condition']}.json"
        ctx = json.loads(ctx_path.read_text()) if ctx_path.exists() else None
        raw = log[item["prompt_id"]]["raw"]
        got = score_response(scenarios[item["scenario_id"]]["gold"], raw, ctx, domain=mini_domain)
        assert dict(got) == item["scores"], item["prompt_id"]
        assert got.parse_status == item["parse_status"]

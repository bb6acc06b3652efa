"""Hostile-input benchmark (issue 11): `kgbench score` on 10,000 hostile responses, and 1 MB
adversarial answers one by one, each beside a baseline measured in the same run.

* `kgbench score` (a fresh process, default settings: 10,000 bootstrap resamples) on a
  cardio run folder of 80 scenarios x 4 conditions x 32 replicates = 10,240 records, every
  one hostile: the kinds of the 2026-11 reliability review (random JSON, wrong types, large
  fields, deep nesting, NaN, near-miss ids, malformed claims, fenced or wrapped JSON, brace
  storms, an unclosed fence followed by 20 kB of whitespace, lone surrogates, ANSI and RTL
  codes, non-object JSON, long lists, prose naming drugs, odd keys), strings capped at 20 kB
  as in the review's own run (section 3c). Wall time and peak
  memory (the child's max RSS), against targets of 5 s and 500 MB, and against the same
  command on the same folder with well-formed answers (baseline).
* Each 1 MB adversarial answer scored on its own with the compiled scorer: the slowest,
  against a target of 50 ms, beside a well-formed 1 MB answer (baseline).

Contexts are built from the compiled graph (no Neo4j needed): each scenario's gold
assertions plus others, shaped as `kgbench extract` writes them.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.timing import load_average
from harness.compiled import CompiledDomain
from harness.evaluation.compiled_scorer import load_compiled_scorer
from harness.evaluation.judge import compile_contract
from harness.runfolder import RunFolder
from harness.runner.records import verdict_fields
from kgbench.io import json_line_bytes
from kgbench.locations import GENERATED_DIR

REPLICATES = 32
TARGET_S = 5.0
TARGET_MB = 500.0
TARGET_ANSWER_MS = 50.0
MB = 1_000_000


def _context(graph: dict[str, Any], scenario: dict[str, Any], cond: str, rng) -> dict:
    ents = {e["id"]: e for e in graph["entities"]}
    by_id = {a["assertion_id"]: a for a in graph["assertions"]}
    evidence: dict[str, list[str]] = {}
    for s in graph["supports"]:
        evidence.setdefault(s["assertion_id"], []).append(s["evidence_id"])
    gold = scenario["gold"]
    wanted = [
        *gold["causal_path_assertion_ids"],
        *gold["adverse_effect_assertion_ids"],
        *gold["contraindication_assertion_ids"],
    ]
    wanted += [a["assertion_id"] for a in rng.sample(graph["assertions"], 20)]

    def ref(i: str) -> dict[str, str]:
        return {"id": i, "name": ents[i]["name"], "category": ents[i]["category"]}

    return {
        "schema_version": "1.0.0",
        "domain": graph["domain"],
        "scenario_id": scenario["scenario_id"],
        "condition": cond,
        "parameters": {
            "candidate_ids": [c["intervention_id"] for c in scenario["candidates"]],
            "target_id": scenario["target_outcome_id"],
            "context_ids": [p for p in [scenario.get("population_id")] if p],
        },
        "entities": {
            c["intervention_id"]: ref(c["intervention_id"]) for c in scenario["candidates"]
        },
        "sections": [],
        "assertions": {
            a: {
                **by_id[a],
                "subject": ref(by_id[a]["subject_id"]),
                "object": ref(by_id[a]["object_id"]),
                "evidence": [{"evidence_id": e} for e in sorted(evidence.get(a, []))],
            }
            for a in sorted(set(wanted))
        },
    }


def _good(scenario: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    g = scenario["gold"]
    return {
        "recommended_intervention": names.get(g["preferred_intervention"] or "", "none"),
        "causal_path_assertion_ids": g["causal_path_assertion_ids"],
        "adverse_effect_assertion_ids": g["adverse_effect_assertion_ids"],
        "contraindication_assertion_ids": g["contraindication_assertion_ids"],
        "supporting_evidence_ids": g["evidence_source_ids"],
        "claims": [{"subject": "lisinopril", "predicate": "lowers", "object": "blood pressure"}],
        "uncertainty_flag": g["expects_uncertainty"],
        "rationale": "Well-formed baseline answer.",
    }


def _hostile(kind: int, rng: random.Random, good: dict[str, Any], ids: list[str]) -> Any:
    """One hostile answer (raw text, or an object as a strict endpoint would return)."""
    k = kind % 20
    if k == 0:
        return json.dumps({str(rng.random()): [rng.random()] * 5})
    if k == 1:
        return {**good, "causal_path_assertion_ids": "ASR_0001", "uncertainty_flag": "yes"}
    if k == 2:
        return json.dumps({**good, "rationale": "x" * rng.randint(1_000, 20_000)})
    if k == 3:
        return json.dumps({**good, "causal_path_assertion_ids": ids * 200})
    if k == 4:
        return "[" * 5_000 + "]" * 5_000
    if k == 5:
        return json.dumps(good).replace('"uncertainty_flag": false', '"uncertainty_flag": NaN')
    if k == 6:
        return {**good, "causal_path_assertion_ids": [i.lower() + "\u200b" for i in ids[:5]]}
    if k == 7:
        return {**good, "claims": [{"subject": 1}, "claim", None, {"object": []}] * 50}
    if k == 8:
        return "Here is my answer:\n```json\n" + json.dumps(good) + "\n```\nThanks!"
    if k == 9:
        return "{" * rng.randint(1_000, 20_000)
    if k == 10:
        return "```" + " " * 20_000 + "x"
    if k == 11:
        return json.dumps(
            {**good, "rationale": "\u202e\x1b[31m" + "\ud83d" * 50}, ensure_ascii=True
        )
    if k == 12:
        return json.dumps([good, good])
    if k == 13:
        return json.dumps({**good, "supporting_evidence_ids": [f"EV_{i}" for i in range(2_000)]})
    if k == 14:
        return "I would recommend lisinopril, amlodipine or atorvastatin. " * 200
    if k == 15:
        return {"\x00": 1, "": None, "recommended_intervention": {"nested": True}}
    if k == 16:
        return json.dumps(good)[: rng.randint(0, 200)]
    if k == 17:
        return {**good, "claims": [{"subject": "s" * 400, "predicate": "p", "object": "o"}] * 40}
    if k == 18:
        return "null"
    return "```" * rng.randint(100, 3000)


def build_run(root: Path, hostile: bool, seed: int = 11) -> Path:
    """A cardio run folder with 10,240 records, hostile or well-formed."""
    domain = _domain()
    graph = domain.graph
    names = {e["id"]: e["name"] for e in graph["entities"]}
    scenarios = [
        json.loads(x)
        for x in (domain.root / "scenarios" / "scenarios.jsonl").read_text().splitlines()
    ]
    rng = random.Random(seed)
    run = root / ("hostile" if hostile else "baseline")
    (run / "prompts").mkdir(parents=True)
    (run / "responses").mkdir()
    (run / "scenarios.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scenarios))
    RunFolder(run).describe(domain, replicates=REPLICATES)
    conditions = [c.id for c in domain.conditions]
    grounded = {c.id for c in domain.conditions if c.grounded}
    prompts = []
    for s in scenarios:
        for c in conditions:
            pid = f"{s['scenario_id']}/{c}"
            prompts.append({"prompt_id": pid, "scenario_id": s["scenario_id"], "condition": c,
                            "messages": [{"role": "user", "content": pid}]})  # fmt: skip
            if c in grounded:
                path = run / "contexts" / s["scenario_id"] / f"{c}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(_context(graph, s, c, rng)))
    (run / "prompts" / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    contract = compile_contract(domain.json("schemas/response.schema.json"))
    by_sid = {s["scenario_id"]: s for s in scenarios}
    ids = [a["assertion_id"] for a in graph["assertions"]]
    with (run / "responses" / "model.jsonl").open("wb") as out:
        kind = 0
        for p in prompts:
            good = _good(by_sid[p["scenario_id"]], names)
            for rep in range(REPLICATES):
                answer = _hostile(kind, rng, good, rng.sample(ids, 8)) if hostile else good
                kind += 1
                raw = answer if isinstance(answer, str) else json.dumps(answer)
                record = {
                    "key": f"{p['prompt_id']}#{rep}",
                    "prompt_id": p["prompt_id"],
                    "replicate": rep,
                    "model": "openai:bench",
                    "status": "ok",
                    "raw": raw,
                    **verdict_fields(raw, contract),
                }
                out.write(json_line_bytes(record))  # lone surrogates escaped, as the runner does
    return run


def _domain() -> CompiledDomain:
    for name in ("cardio", "afib"):
        if (GENERATED_DIR / name / "scenarios" / "scenarios.jsonl").exists():
            return CompiledDomain.open(name)
    raise SystemExit("no compiled domain with scenarios under generated/; run `make compile`")


# `kgbench score` in a fresh interpreter that reports its own peak memory: VmHWM (the high-water
# mark of this process's memory map since exec). The child's ru_maxrss would not do: Linux
# carries the pre-exec size of the forked benchmark process into it.
SCORE_AND_REPORT = """
import sys
from kgbench.cli import app
try:
    app(["score", "--run-dir", sys.argv[1]], standalone_mode=False)
finally:
    with open("/proc/self/status") as fh:
        hwm = next(line.split()[1] for line in fh if line.startswith("VmHWM:"))
    sys.stdout.write(f"VmHWM {hwm}\\n")
"""


def score_once(run: Path) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of one `kgbench score` process."""
    shutil.rmtree(run / "scores", ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", SCORE_AND_REPORT, str(run)], capture_output=True, text=True
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"kgbench score failed ({proc.returncode}): {proc.stderr[-2000:]}")
    peak_kb = next(
        int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("VmHWM")
    )
    return took, peak_kb / 1024


def _verdict(value: float, target: float) -> str:
    return "PASS" if value < target else "FAIL"


def answers_1mb() -> dict[str, str]:
    claim = '{"subject": "Lisinopril", "predicate": "lowers", "object": "Blood pressure"}'
    return {
        "unclosed fence + whitespace": "```" + " " * MB + "x",
        "brace storm": "{" * MB,
        "nested arrays": "[" * MB,
        "many fences": "```" * (MB // 3),
        "claims": '{"claims": [' + ", ".join([claim] * (MB // (len(claim) + 2))) + "]}",
        "cited ids": '{"causal_path_assertion_ids": ['
        + ", ".join(f'"ASR_{i:06d}"' for i in range(MB // 14))
        + "]}",
        "long name": '{"recommended_intervention": "' + "lisinopril " * (MB // 11) + '"}',
        "prose": "I recommend lisinopril or amlodipine. " * (MB // 38),
        "lone surrogates": '{"rationale": "' + "\\ud83d" * (MB // 6) + '"}',
    }


def main(quick: bool = False) -> list[str]:
    domain = _domain()
    runs = 2 if quick else 3
    lines = [
        f"## Hostile input ({domain.name}: {80 * 4 * REPLICATES:,} responses per run folder, "
        "`kgbench score` with default settings, fresh process each)"
    ]
    with tempfile.TemporaryDirectory() as tmp:
        hostile = build_run(Path(tmp), hostile=True)
        baseline = build_run(Path(tmp), hostile=False)
        size = sum(f.stat().st_size for f in (hostile / "responses").iterdir()) / MB
        score_once(hostile), score_once(baseline)  # warm-up (imports, caches)
        h, b = [], []
        for _ in range(runs):  # interleaved, so a drift in machine speed hits both alike
            h.append(score_once(hostile))
            b.append(score_once(baseline))
    h_s, h_mb = statistics.median(x for x, _ in h), max(m for _, m in h)
    b_s, b_mb = statistics.median(x for x, _ in b), max(m for _, m in b)
    state = "cold both: a fresh process each, after one warm-up run of each, interleaved"

    def spread(values: list[float], unit: str) -> str:
        return f"(min {min(values):.2f} {unit}, max {max(values):.2f} {unit}, n={len(values)})"

    lines += [
        f"  hostile log {size:.0f} MB; 20 kinds of hostile answer, equally often; {state}; "
        f"{load_average()}",
        f"  kgbench score, hostile:   median {h_s:6.2f} s {spread([x for x, _ in h], 's')} "
        f"target < {TARGET_S:.0f} s: {_verdict(h_s, TARGET_S)}; peak {h_mb:6.0f} MB (max of "
        f"n={len(h)}) target < {TARGET_MB:.0f} MB: {_verdict(h_mb, TARGET_MB)}",
        f"  kgbench score, baseline:  median {b_s:6.2f} s {spread([x for x, _ in b], 's')}, "
        f"peak {b_mb:6.0f} MB (well-formed answers, same folder layout); no target (baseline)",
        f"  ratio hostile/baseline: time {h_s / b_s:.2f}, memory {h_mb / b_mb:.2f}",
    ]
    scorer = load_compiled_scorer(domain)
    scenario = json.loads((domain.root / "scenarios/scenarios.jsonl").read_text().splitlines()[0])
    context = _context(domain.graph, scenario, "C4", random.Random(3))
    gold = scenario["gold"]
    good = json.dumps(
        {**_good(scenario, {}), "rationale": "x" * (MB - 400)}  # a well-formed 1 MB answer
    )

    def times_ms(raw: str) -> list[float]:
        scorer.score(gold, raw, context)  # warm-up: the answer's names enter the memo
        times = []
        for _ in range(3 if quick else 7):
            start = time.perf_counter()
            scorer.score(gold, raw, context)
            times.append((time.perf_counter() - start) * 1000)
        return times

    timed = {k: times_ms(v) for k, v in answers_1mb().items()}
    medians = {k: statistics.median(v) for k, v in timed.items()}
    slowest = max(medians, key=medians.get)
    worst = timed[slowest]
    good_ms = times_ms(good)
    lines += [
        f"  1 MB adversarial answers ({len(timed)} kinds), each scored alone in this warm "
        f"process (one warm-up each): slowest kind {slowest}: median {medians[slowest]:.1f} ms "
        f"(min {min(worst):.1f}, max {max(worst):.1f}, n={len(worst)}); target < "
        f"{TARGET_ANSWER_MS:.0f} ms: {_verdict(medians[slowest], TARGET_ANSWER_MS)}",
        f"  baseline: a well-formed 1 MB answer, same state: median "
        f"{statistics.median(good_ms):.1f} ms (min {min(good_ms):.1f}, max {max(good_ms):.1f}, "
        f"n={len(good_ms)}); no target (baseline)",
        "  medians: " + "; ".join(f"{k} {v:.1f}" for k, v in sorted(medians.items())) + " (ms)",
    ]
    return lines


if __name__ == "__main__":
    print("\n".join(main(quick=True)))

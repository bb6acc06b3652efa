"""Scorer benchmarks (issue 5): responses scored per second, against naive baselines in the
same run.

Workload: responses of the cardio domain (afib when cardio is not compiled), a mix of what
the scorer meets in a run: well-formed answers citing real and invented ids with free-text
claims, answers with wrong field types, and raw text that is not JSON. Each response is
scored against a C4-like extracted context built from the domain's graph.

* ours: the compiled scorer (`load_compiled_scorer`): lexicon built once, response contract
  read once from the schema, name containment by dictionary lookup of n-grams, claim texts'
  resolutions memoised, claims joined to an index of the context's assertions. Held to its
  floor (issue 33, item 1), twice: with the memos warm (the state of a run scoring thousands
  of answers) and with them emptied before every pass (the floor's too).
* floor "minimal hand-written scorer" (bench/scorer_floor.py): the cardio panel written out
  by hand, the same id arithmetic on the same answers, sharing only the lexicon's name
  resolution and the claim table. Before timing, the bench asserts that it and the scorer
  agree on every value of every item (and on the unknown ids). Target: the scorer takes at
  most the floor's time (<= 1.0x; the 2026-12 review measured 0.68-0.87x). Issue 17's
  absolute 25,000 responses/s is retired: the review showed that even this floor cannot
  reach it on this machine, so it said nothing about the scorer.
* baseline "reference panel pass": the same coercion and lexicon, but the panel scored by
  `score_panel` (each metric through KINDS and `is_defined`, id lists turned into sets as each
  metric reads them) instead of the compiled `PanelPlan`; the two give identical scores
  (tests/evaluation/test_eval_fast_panel.py).
* baseline "lexicon per response": the same panel, but the lexicon is rebuilt from the graph
  for every response, as a script calling `Lexicon.from_graph` inside its loop would.
* baseline "jsonschema per response": the same panel with the cached lexicon, but each
  response is checked with `jsonschema.validate` (which builds a validator on every call).
* name resolution on its own: n-gram lookup against one regular expression per name (the
  previous implementation), on free-text claim subjects and objects.

Timings are medians of interleaved runs (ours, baseline, ours, baseline...), so a drift in
machine speed hits both alike; each line gives min/max and n, and the header the machine's
load, as the figure is wall-clock throughput.
"""

from __future__ import annotations

import contextlib
import random
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

import jsonschema

from bench import scorer_floor
from bench.timing import figure, load_average, versus_floor
from harness.compiled import CompiledDomain
from harness.evaluation.claims import claim_reader, direction_of
from harness.evaluation.compiled_scorer import MAX_UNKNOWN_IDS, load_compiled_scorer, unknown_ids
from harness.evaluation.judge import judge
from harness.evaluation.lexicon import Lexicon, norm, norm_short
from harness.evaluation.metrics import score_panel
from kgbench.locations import GENERATED_DIR


def _domain() -> CompiledDomain:
    for name in ("cardio", "afib"):
        if (GENERATED_DIR / name / "kg.json").exists():
            return CompiledDomain.open(name)
    raise SystemExit("no compiled domain under generated/; run `make compile` first")


def _context(graph: dict[str, Any], rng: random.Random, k: int = 24) -> tuple[dict, dict]:
    """A C4-like context of k assertions, and a gold whose path lies in it."""
    ents = {e["id"]: e for e in graph["entities"]}
    evidence: dict[str, list[str]] = {}
    for s in graph["supports"]:
        evidence.setdefault(s["assertion_id"], []).append(s["evidence_id"])
    chosen = rng.sample(graph["assertions"], k)

    def ref(i: str) -> dict[str, str]:
        return {"id": i, "name": ents[i]["name"], "category": ents[i]["category"]}

    assertions = {
        a["assertion_id"]: {
            **a,
            "subject": ref(a["subject_id"]),
            "object": ref(a["object_id"]),
            "evidence": [{"evidence_id": e} for e in sorted(evidence.get(a["assertion_id"], []))],
        }
        for a in chosen
    }
    ids = list(assertions)
    subjects = sorted({a["subject_id"] for a in chosen})
    context = {
        "entities": {i: ref(i) for i in subjects[:4]},
        "parameters": {"candidate_ids": subjects[:3], "target_id": chosen[0]["object_id"]},
        "sections": [],
        "assertions": assertions,
    }
    gold = {
        "preferred_intervention": subjects[0],
        "acceptable_interventions": subjects[:2],
        "causal_path_assertion_ids": ids[:4],
        "adverse_effect_assertion_ids": ids[4:6],
        "contraindication_assertion_ids": ids[6:7],
        "evidence_source_ids": sorted({e for a in ids[:4] for e in evidence.get(a, [])}),
        "expects_uncertainty": rng.random() < 0.2,
    }
    return context, gold


def _response(graph: dict[str, Any], context: dict, rng: random.Random) -> Any:
    ids = list(context["assertions"])
    names = [e["name"] for e in graph["entities"]]
    roll = rng.random()
    if roll < 0.1:
        return "I would recommend " + rng.choice(names) + " because it lowers risk."
    answer = {
        "recommended_intervention": rng.choice(names) + rng.choice(["", " 10 mg daily"]),
        "causal_path_assertion_ids": rng.sample(ids, 4) + rng.choice([[], ["ASR_9999"]]),
        "adverse_effect_assertion_ids": rng.sample(ids, 2),
        "contraindication_assertion_ids": rng.sample(ids, 1),
        "supporting_evidence_ids": ["EV_0001", "EV_0003", "EV_0404"][: rng.randint(1, 3)],
        "claims": [
            {
                "subject": f"the drug {rng.choice(names)}",
                "predicate": rng.choice(["lowers", "increases", "TARGETS", "is associated with"]),
                "object": f"{rng.choice(names)} in this patient",
            }
            for _ in range(rng.randint(1, 5))
        ],
        "uncertainty_flag": rng.random() < 0.3,
        "rationale": "A short explanation. " * rng.randint(1, 20),
    }
    if roll < 0.2:
        answer["uncertainty_flag"] = "no"
        answer["claims"] = "lisinopril lowers blood pressure"
    return answer


FLOOR_TARGET = 1.0  # issue 33, item 1: the compiled scorer's time at most the floor's


def workload(graph: dict[str, Any], n: int, seed: int = 20261130) -> list[tuple[dict, Any, dict]]:
    """n (gold, response, context) items of the bench's mix, the same for the same seed."""
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        context, gold = _context(graph, rng)
        items.append((gold, _response(graph, context, rng), context))
    return items


def _rates(runs: list[float], n: int) -> list[float]:
    return [n / t for t in runs]


def _forget(scorer: Any) -> None:
    """Empty every memo the scorer keeps, so the next pass starts cold."""
    for memo in scorer.lexicon._memo.values():
        memo.clear()
    norm_short.cache_clear()
    direction_of.cache_clear()


def _interleave(fns: list[Callable[[], None]], runs: int) -> list[list[float]]:
    for fn in fns:
        fn()  # warm-up
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - start)
    return times


def agreement(scorer: Any, items: list[tuple[dict, Any, dict]], lex: Lexicon, reader: Any) -> int:
    """How many values the floor and the scorer computed alike; raises at the first that
    differs (a floor that scores something else would make the ratio meaningless)."""
    agreed = 0
    for i, (gold, resp, ctx) in enumerate(items):
        ours = scorer.score(gold, resp, ctx)
        values, unknown = scorer_floor.score(gold, resp, ctx, lex, reader)
        if values != ours.scores or tuple(unknown) != ours.unknown_ids:
            raise AssertionError(
                f"scorer floor disagrees on item {i}: floor {values} {unknown}, "
                f"scorer {ours.scores} {ours.unknown_ids}"
            )
        agreed += len(values)
    return agreed


def _regex_resolve(lex: Lexicon, text: str) -> set[str]:
    """The previous containment match: one regular expression per known name."""
    key = norm(text)
    if key in lex.names:
        return set(lex.names[key])
    hits: set[str] = set()
    for name, ids in lex.names.items():
        if len(name) >= 4 and re.search(rf"\b{re.escape(name)}\b", key):
            hits |= ids
    return hits


def main(quick: bool = False) -> list[str]:
    domain = _domain()
    scorer = load_compiled_scorer(domain)
    graph = domain.graph
    schema = domain.json("schemas/response.schema.json")
    n = 300 if quick else 2000
    runs = 3 if quick else 5
    items = workload(graph, n)

    def ours() -> None:
        for gold, resp, ctx in items:
            scorer.score(gold, resp, ctx)

    def lexicon_per_response() -> None:
        for gold, resp, ctx in items:
            lex = Lexicon.from_graph(graph)
            score_panel(scorer.metrics, gold, judge(resp, scorer.contract).response, ctx, lex)

    def jsonschema_per_response() -> None:
        for gold, resp, ctx in items:
            with contextlib.suppress(jsonschema.ValidationError):
                jsonschema.validate(resp, schema)
            clean = judge(resp, scorer.contract).response
            score_panel(scorer.metrics, gold, clean, ctx, scorer.lexicon)

    def reference_pass() -> None:
        for gold, resp, ctx in items:
            clean = judge(resp, scorer.contract).response
            score_panel(scorer.metrics, gold, clean, ctx, scorer.lexicon)
            unknown_ids(clean, scorer.lexicon, MAX_UNKNOWN_IDS)

    def ours_cold() -> None:
        _forget(scorer)
        ours()

    (unsupported,) = (m for m in scorer.metrics if m.kind == "unsupported_claims")
    reader = claim_reader(unsupported)
    lex = scorer.lexicon

    def floor() -> None:
        for gold, resp, ctx in items:
            scorer_floor.score(gold, resp, ctx, lex, reader)

    def floor_cold() -> None:
        _forget(scorer)
        floor()

    agree = agreement(scorer, items, lex, reader)

    cpu_start = time.process_time()
    t_ours, t_floor, t_cold, t_floor_cold, t_ref, t_lex, t_js = _interleave(
        [
            ours,
            floor,
            ours_cold,
            floor_cold,
            reference_pass,
            lexicon_per_response,
            jsonschema_per_response,
        ],
        runs,
    )
    cpu = time.process_time() - cpu_start
    wall = sum(map(sum, (t_ours, t_floor, t_cold, t_floor_cold, t_ref, t_lex, t_js)))
    state = "warm process, baselines interleaved in the same process"
    floor_label = "minimal hand-written scorer"
    lines = [
        f"## Scorer ({domain.name}: {len(graph['entities'])} entities, "
        f"{len(scorer.lexicon.names)} names; {n} responses, 10% not JSON, 10% wrong types; "
        f"{load_average()}, this process got {cpu / wall:.0%} of a core)",
        f"  floor agrees with the scorer on {agree}/{agree} values ({n} items x "
        f"{len(scorer.metrics)} metrics, and every item's unknown ids)",
        *versus_floor(
            "ours: compiled scorer, memos warm",
            t_ours,
            floor_label,
            t_floor,
            target=FLOOR_TARGET,
            state=f"{state}, memos warm for both",
            digits=4,
        ),
        figure(
            "  ours: compiled scorer, memos warm (rate)",
            _rates(t_ours, n),
            unit="responses/s",
            target=None,
            higher_is_better=True,
            state=state,
            no_target="(information)",
        ),
        *versus_floor(
            "ours: compiled scorer, memos emptied per pass",
            t_cold,
            floor_label,
            t_floor_cold,
            target=FLOOR_TARGET,
            state="cold memos for both, warm process",
            digits=4,
        ),
        figure(
            "  ours: compiled scorer, memos emptied (rate)",
            _rates(t_cold, n),
            unit="responses/s",
            target=None,
            higher_is_better=True,
            state="cold memos, warm process",
            no_target="(information)",
        ),
        figure(
            "baseline: reference panel pass (score_panel)",
            _rates(t_ref, n),
            unit="responses/s",
            target=None,
            higher_is_better=True,
            state=state,
        ),
        figure(
            "baseline: lexicon rebuilt per response",
            _rates(t_lex, n),
            unit="responses/s",
            target=None,
            higher_is_better=True,
            state=state,
        ),
        figure(
            "baseline: jsonschema.validate per response",
            _rates(t_js, n),
            unit="responses/s",
            target=None,
            higher_is_better=True,
            state=state,
        ),
        f"  speed-up vs the reference pass: {statistics.median(t_ref) / statistics.median(t_ours):.2f}x; "
        f"vs lexicon per response: {statistics.median(t_lex) / statistics.median(t_ours):.1f}x; "
        f"vs jsonschema per response: {statistics.median(t_js) / statistics.median(t_ours):.1f}x",
    ]
    texts = [
        c[k]
        for _, resp, _ in items
        if isinstance(resp, dict) and isinstance(resp.get("claims"), list)
        for c in resp["claims"]
        for k in ("subject", "object")
    ]
    # The regex baseline is slow (more names than re's pattern cache): a subset, one run.
    texts = texts[: 100 if quick else 300]
    lex = scorer.lexicon
    mismatches = sum(lex._resolve(t) != _regex_resolve(lex, t) for t in texts)
    # the n-gram path itself (`_resolve`, not the memo in front of it), one run as the
    # regex baseline takes seconds per name
    t_ngram, t_regex = _interleave(
        [lambda: [lex._resolve(t) for t in texts], lambda: [_regex_resolve(lex, t) for t in texts]],
        1,
    )
    lines += [
        figure(
            "name resolution: n-gram lookup, no memo",
            _rates(t_ngram, len(texts)),
            unit="names/s",
            target=None,
            higher_is_better=True,
            state="warm process, one run (the baseline takes minutes)",
            no_target="no target (a component of the scorer figure)",
        ),
        figure(
            "name resolution: one regex per name",
            _rates(t_regex, len(texts)),
            unit="names/s",
            target=None,
            higher_is_better=True,
            state="warm process, interleaved with the line above",
        ),
        f"  speed-up: {statistics.median(t_regex) / statistics.median(t_ngram):.0f}x; "
        f"same ids for {len(texts) - mismatches}/{len(texts)} free-text names",
    ]
    return lines


if __name__ == "__main__":
    print("\n".join(main(quick=True)))

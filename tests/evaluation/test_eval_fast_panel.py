"""The compiled panel (`PanelPlan`, what `kgbench score` and the compiled scorer run) gives
exactly what the reference pass (`score_panel`: KINDS and `is_defined`, metric by metric)
gives, and the per-response assertion index finds what the previous reader found, on a
varied set: fixture and cardio contexts, answers of every shape a model returns, odd golds,
and contexts whose assertions are hand-written or malformed (issue 17, item 5)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.compiled import CompiledDomain
from harness.evaluation.claims import CITED_ASSERTION_FIELDS, index_assertions
from harness.evaluation.compiled_scorer import load_compiled_scorer, unknown_ids
from harness.evaluation.judge import FieldRule, judge
from harness.evaluation.lexicon import Lexicon
from harness.evaluation.metrics import DEFINED_WHEN, KINDS, PanelPlan, score_panel
from kgbench.contract import Metric
from kgbench.locations import GENERATED_DIR

ODD_VALUES: list[Any] = [None, True, False, 0, 3.5, "", "x", [], {}, [1, None, "a"], {"a": 1}]


def _reference_index(context_assertions: dict[str, Any], subjects: set[str]) -> dict:
    """The index reader before issue 17's item 5 (both ids by subscript, then per field)."""
    index: dict[str, list] = {}
    for a in context_assertions.values():
        try:
            s_id, o_id = a["subject_id"], a["object_id"]
        except (KeyError, TypeError):
            s_id = o_id = None
        if not (s_id and o_id):
            if not isinstance(a, dict):
                continue
            s_id = a.get("subject_id") or (
                a["subject"].get("id") if isinstance(a.get("subject"), dict) else None
            )
            o_id = a.get("object_id") or (
                a["object"].get("id") if isinstance(a.get("object"), dict) else None
            )
        if isinstance(s_id, str) and s_id in subjects and isinstance(o_id, str):
            index.setdefault(s_id, []).append((o_id, a))
    return index


def _reference_unknown(response: dict[str, Any], lexicon: Lexicon) -> list[str]:
    """unknown_ids before issue 17's item 5 (a set comprehension per field)."""
    out: set[str] = set()
    for key in CITED_ASSERTION_FIELDS:
        out |= {i for i in response.get(key, []) if i not in lexicon.assertions}
    out |= {i for i in response.get("supporting_evidence_ids", []) if i not in lexicon.evidence_ids}
    return sorted(out)


def _odd_assertions(graph: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Assertions as a hand-written or damaged context may hold them."""
    ents = [e["id"] for e in graph["entities"]]
    out: dict[str, Any] = {}
    for i, a in enumerate(rng.sample(graph["assertions"], min(12, len(graph["assertions"])))):
        a = dict(a)
        roll = i % 8
        if roll == 1:  # ids only in the references
            s, o = a.pop("subject_id"), a.pop("object_id")
            a["subject"], a["object"] = {"id": s}, {"id": o}
        elif roll == 2:  # a subject id but no object id
            a.pop("object_id")
            a["object"] = {"id": rng.choice(ents)}
        elif roll == 3:
            a["subject_id"] = rng.choice(ODD_VALUES)
        elif roll == 4:
            a["object_id"] = rng.choice(ODD_VALUES)
            a["object"] = rng.choice([{"id": rng.choice(ents)}, "x", None])
        elif roll == 5:
            a = rng.choice(["not an assertion", [a["subject_id"]], None, 7])
        elif roll == 6:
            a["predicate"], a["direction"] = rng.choice(ODD_VALUES), rng.choice(ODD_VALUES)
        out[
            f"K{i}" if roll == 7 else (a.get("assertion_id") if isinstance(a, dict) else f"X{i}")
        ] = a
    return out


def _answer(graph: dict[str, Any], ids: list[str], rng: random.Random) -> Any:
    names = [e["name"] for e in graph["entities"]] + [e["id"] for e in graph["entities"]]
    names += [c["class_name"] for c in graph.get("intervention_classes", [])]

    def name() -> str:
        return (
            rng.choice(["", "the drug ", "low-dose "])
            + rng.choice(names)
            + rng.choice(["", " 10 mg daily", " or " + rng.choice(names), " in this patient"])
        )

    def id_list() -> Any:
        pick = rng.sample(ids, min(len(ids), rng.randint(0, 4))) + rng.choice([[], ["ASR_9999"]])
        return rng.choice([pick, pick, pick, rng.choice(ODD_VALUES), [*pick, 5, None]])

    roll = rng.random()
    if roll < 0.08:
        return rng.choice(["not JSON at all", '```json\n{"claims": 3}\n```', "[1, 2]", ""])
    answer: dict[str, Any] = {
        "recommended_intervention": rng.choice([name(), name(), None, "", "  ", 4]),
        "causal_path_assertion_ids": id_list(),
        "adverse_effect_assertion_ids": id_list(),
        "contraindication_assertion_ids": id_list(),
        "supporting_evidence_ids": rng.choice(
            [["EV_0001", "EV_0003", "EV_0404"][: rng.randint(0, 3)], "EV_0001", None]
        ),
        "claims": [
            rng.choice(
                [
                    {
                        "subject": name(),
                        "predicate": rng.choice(["lowers", "increases", "TREATS", "", "is"]),
                        "object": name(),
                    },
                    {"subject": name(), "object": name()},
                    "a claim in words",
                ]
            )
            for _ in range(rng.randint(0, 6))
        ],
        "uncertainty_flag": rng.choice([True, False, "no", None]),
    }
    for key in rng.sample(sorted(answer), rng.randint(0, 2)):
        del answer[key]
    return answer


def _gold(graph: dict[str, Any], ids: list[str], rng: random.Random) -> dict[str, Any]:
    ents = [e["id"] for e in graph["entities"]] + [
        c["class_id"] for c in graph.get("intervention_classes", [])
    ]
    gold = {
        "preferred_intervention": rng.choice([rng.choice(ents), None, ""]),
        "acceptable_interventions": rng.choice([rng.sample(ents, 2), [], rng.choice(ODD_VALUES)]),
        "causal_path_assertion_ids": rng.sample(ids, min(len(ids), rng.randint(0, 4))),
        "adverse_effect_assertion_ids": rng.choice([ids[:2], [], "ASR_1", None]),
        "contraindication_assertion_ids": ids[2:3],
        "evidence_source_ids": ["EV_0001"],
        "expects_uncertainty": rng.choice([True, False, None, "yes"]),
    }
    if rng.random() < 0.5:  # every equal validated chain (the chain kinds read them)
        gold["causal_paths"] = rng.choice(
            [
                [gold["causal_path_assertion_ids"], rng.sample(ids, min(len(ids), 3))],
                [],
                "ASR_1",
                [[1, 2], "ASR_1", []],
            ]
        )
    for key in rng.sample(sorted(gold), rng.randint(0, 1)):
        del gold[key]
    return gold


def _domains() -> list[CompiledDomain]:
    return [
        CompiledDomain.open(name)
        for name in ("cardio", "afib")
        if (GENERATED_DIR / name / "kg.json").exists()
    ]


@pytest.fixture(scope="module", params=["mini", *(d.name for d in _domains())])
def domain(request: pytest.FixtureRequest, mini_domain: CompiledDomain) -> CompiledDomain:
    if request.param == "mini":
        return mini_domain
    return next(d for d in _domains() if d.name == request.param)


def _every_combination(declared: tuple[Metric, ...]) -> list[Metric]:
    """The declared panel plus every kind under every defined_when rule, on the declared
    (response field, gold field) pairs in turn: rules and kinds no domain declares together
    yet (gold_true, a set kind on the recommendation) are held equal too."""
    pairs = sorted({(m.response_field, m.gold_field) for m in declared})
    out = list(declared)
    # a kind's own declarations (a chain kind's reading, the claim table) as the panel has
    # them; the chain kinds under both readings
    own = {m.kind: m for m in declared}
    combos = [(k, r, None) for k in sorted(KINDS) for r in DEFINED_WHEN]
    combos += [
        (k, r, "gold_path") for k in sorted(KINDS) if k.startswith("chain_") for r in DEFINED_WHEN
    ]
    for i, (kind, rule, reading) in enumerate(combos):
        rf, gf = pairs[i % len(pairs)]
        model = own.get(kind)
        out.append(
            Metric(
                name=f"{kind}.{rule}.{reading}",
                title=kind,
                kind=kind,
                response_field=rf,
                gold_field=gf,
                defined_when=rule,
                higher_is_better=True,
                reading=reading or (model.reading if model else None),
                claim_support=model.claim_support if model else None,
            )
        )
    return out


def test_compiled_panel_equals_the_reference_pass(domain: CompiledDomain) -> None:
    scorer = load_compiled_scorer(domain)
    graph = domain.graph
    rng = random.Random(17)
    metrics = _every_combination(scorer.metrics)
    plan = PanelPlan(metrics)
    by_id = {a["assertion_id"]: a for a in graph["assertions"]}
    compared = defined = 0
    for n in range(600):
        chosen = rng.sample(sorted(by_id), min(len(by_id), 20))
        kind = n % 4
        if kind == 0:
            context: Any = None  # C1
        elif kind == 1:
            context = {"assertions": {a: by_id[a] for a in chosen}}
            if n % 8 == 1:  # chains from candidates to a target (the chain kinds read them)
                last = by_id[chosen[2]] if len(chosen) > 2 else by_id[chosen[0]]
                context["parameters"] = {"target_id": last["object_id"]}
                context["sections"] = [
                    {
                        "paths": [
                            {"candidate_id": by_id[c]["subject_id"], "assertion_ids": chosen[:3]}
                        ]
                    }
                    for c in chosen[:2]
                ]
        elif kind == 2:
            context = {"assertions": _odd_assertions(graph, rng)}
        else:
            context = rng.choice([{}, {"assertions": None}, {"assertions": [1]}, "context"])
        ids = chosen + list(context["assertions"]) if kind == 2 else chosen
        gold = _gold(graph, ids, rng)
        raw = _answer(graph, ids, rng)
        response = judge(raw, scorer.contract).response
        # as the run scores it (the contract's fields, typed), and as a library caller may
        # hand it over (no coercion: any JSON under any field)
        for answer in (response, raw if isinstance(raw, dict) else {}):
            # the graph's lexicon, or (a caller without a compiled domain) the context's
            own = n % 5 == 0 and kind != 3  # from_context reads only a context's dicts
            lexicon = Lexicon.from_context(context, gold) if own else scorer.lexicon
            expected = score_panel(metrics, gold, answer, context, lexicon)
            assert plan.score(gold, answer, context, lexicon) == expected, (gold, answer, context)
            compared += 1
            defined += sum(v is not None for v in expected.values())
        item = scorer.score(gold, raw, context)
        assert item.scores == score_panel(scorer.metrics, gold, response, context, scorer.lexicon)
        assert unknown_ids(response, scorer.lexicon) == _reference_unknown(response, scorer.lexicon)
    assert compared == 1200 and defined > 20_000, "a varied set, most metrics defined"


def test_assertion_index_reads_as_before(domain: CompiledDomain) -> None:
    graph = domain.graph
    rng = random.Random(5)
    ents = [e["id"] for e in graph["entities"]]
    found = 0
    for _ in range(300):
        assertions = _odd_assertions(graph, rng)
        subjects = set(rng.sample(ents, min(20, len(ents) // 2)))
        subjects |= {a["subject_id"] for a in graph["assertions"][:: rng.randint(3, 9)]}
        ours = index_assertions(assertions, subjects)
        assert ours == _reference_index(assertions, subjects)
        found += sum(map(len, ours.values()))
    assert found, "some assertions are indexed"


class _Text(str):
    """A str subclass: a string to the contract as to isinstance."""


@pytest.mark.parametrize("keys", [("subject", "predicate", "object"), ("subject",), ()])
def test_claims_are_cleaned_as_before(keys: tuple[str, ...]) -> None:
    """Claims reduced to the contract's keys, read with one C call per claim, keep exactly the
    claims the per-key check kept (strings only, str subclasses included, extra keys dropped)."""
    rng = random.Random(3)
    values = [*ODD_VALUES, "lowers", _Text("raises"), b"bytes", ["a"], "x" * 5000]
    kept = 0
    for _ in range(2000):
        items: list[Any] = []
        for _ in range(rng.randint(0, 6)):
            item = {k: rng.choice(values[5:] if rng.random() < 0.7 else values) for k in keys}
            if rng.random() < 0.2 and keys:
                item.pop(rng.choice(keys))
            if rng.random() < 0.2:
                item["extra"] = "dropped"
            items.append(item if rng.random() < 0.9 else rng.choice(values))
        expected = [
            {k: v[k] for k in keys}
            for v in items
            if isinstance(v, dict) and all(isinstance(v.get(k), str) for k in keys)
        ]
        ours, _ = FieldRule("object_list", keys)._objects(items)
        assert ours == expected and [list(c) for c in ours] == [list(c) for c in expected]
        kept += len(ours)
    assert kept, "some claims are kept"

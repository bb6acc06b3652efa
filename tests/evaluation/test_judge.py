"""The one answer judge (harness/evaluation/judge.py, issue 32 item 3).

Its meaning: the judge's `schema_ok` is jsonschema's Draft 2020-12 verdict on the same
compiled schema (jsonschema is used here only, as the oracle), over hand-made answers whose
verdict is written down (yes and no) and over generated ones; a schema it cannot interpret is
refused, located; and a record the runner judged is scored as the scorer would judge it.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from harness.compiled import CompiledDomain
from harness.evaluation.compiled_scorer import load_compiled_scorer
from harness.evaluation.judge import (
    PARSE_STATUSES,
    ContractError,
    compile_contract,
    judge,
)
from harness.runner.plan import RequestItem
from harness.runner.records import Judges, verdict_fields
from harness.verify import steps
from tests.fuzz.strategies import contract_like, json_value

CARDIO = CompiledDomain.open("cardio")
SCHEMA: dict[str, Any] = json.loads(CARDIO.schema_path("response").read_text())
ORACLE = Draft202012Validator(SCHEMA)
CONTRACT = compile_contract(SCHEMA, str(CARDIO.schema_path("response")))

CLAIM = {"subject": "Lisinopril", "predicate": "lowers", "object": "Blood pressure"}
VALID: dict[str, Any] = {
    "recommended_intervention": "Lisinopril",
    "causal_path_assertion_ids": ["ASR_0001", "ASR_0002"],
    "adverse_effect_assertion_ids": [],
    "contraindication_assertion_ids": ["ASR_0003"],
    "supporting_evidence_ids": ["EV_0001"],
    "claims": [CLAIM],
    "uncertainty_flag": False,
    "rationale": "ACE inhibition lowers blood pressure.",
}


def _with(**changes: Any) -> dict[str, Any]:
    out = dict(VALID)
    for key, value in changes.items():
        if value is _DROP:
            out.pop(key)
        else:
            out[key] = value
    return out


_DROP = object()

# (name, answer, jsonschema's verdict written down by hand)
HAND_MADE: list[tuple[str, Any, bool]] = [
    ("valid", VALID, True),
    ("abstains with null", _with(recommended_intervention=None, uncertainty_flag=True), True),
    ("empty lists and no claims", _with(claims=[], causal_path_assertion_ids=[]), True),
    ("NaN rationale is not a string", _with(rationale=math.nan), False),
    ("huge whitespace in strings", _with(rationale=" " * 100_000 + "x"), True),
    ("a number for the recommendation", _with(recommended_intervention=3), False),
    ("a list for the recommendation", _with(recommended_intervention=["Lisinopril"]), False),
    ("null where not nullable", _with(rationale=None), False),
    ("null list", _with(claims=None), False),
    ("1 for a boolean", _with(uncertainty_flag=1), False),
    ("string 'false' for a boolean", _with(uncertainty_flag="false"), False),
    ("an id list holding a number", _with(supporting_evidence_ids=["EV_0001", 7]), False),
    ("an id list holding null", _with(causal_path_assertion_ids=[None]), False),
    ("an id list as a string", _with(causal_path_assertion_ids="ASR_0001"), False),
    ("a missing field", _with(rationale=_DROP), False),
    ("an extra field", _with(confidence=0.9), False),
    ("a claim missing a key", _with(claims=[{"subject": "a", "predicate": "b"}]), False),
    ("a claim with a number", _with(claims=[{**CLAIM, "object": 1}]), False),
    ("a claim with an extra key", _with(claims=[{**CLAIM, "evidence": "EV_0001"}]), False),
    ("a claim that is a string", _with(claims=["Lisinopril lowers BP"]), False),
    ("a claim that is null", _with(claims=[CLAIM, None]), False),
    ("an empty object", {}, False),
    ("a list, not an object", [VALID], False),
    ("a string, not an object", "Lisinopril", False),
    ("null, not an object", None, False),
    ("a number, not an object", 1e308, False),
]


@pytest.mark.parametrize(
    ("answer", "verdict"), [(a, v) for _, a, v in HAND_MADE], ids=[n for n, *_ in HAND_MADE]
)
def test_the_judge_agrees_with_jsonschema_on_hand_made_answers(answer: Any, verdict: bool):
    assert ORACLE.is_valid(answer) is verdict  # the case is what its name says
    assert judge(answer, CONTRACT).schema_ok is verdict


def test_the_hand_made_cases_include_both_verdicts():
    assert {v for *_, v in HAND_MADE} == {True, False}


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    answer=st.one_of(
        contract_like(),
        contract_like().map(lambda o: {**VALID, **o}),
        json_value,
        st.lists(
            st.dictionaries(st.sampled_from(["subject", "predicate", "object", "x"]), json_value)
        ).map(lambda claims: _with(claims=claims)),
    )
)
def test_the_judge_agrees_with_jsonschema_on_generated_answers(answer: Any):
    assert judge(answer, CONTRACT).schema_ok is ORACLE.is_valid(answer)


# --- the stage schemas (probe, verify) go through the same judge ---------------------------


def _stage_schemas() -> list[dict[str, Any]]:
    v = next(c.verify for c in CARDIO.conditions if c.verify is not None)
    probe = [
        json.loads(p.read_text())
        for p in sorted((CARDIO.root / "probe" / "schemas").glob("*.json"))
    ]
    return [steps.generate_schema(v), steps.revise_schema(v), *probe]


PREDICATE = "INDICATED_FOR"
STAGE_ANSWERS: list[Any] = [
    {"relation": "both", "reasoning": "r"},
    {"relation": "sideways", "reasoning": "r"},
    {"concepts": ["a", "b", "c"], "reasoning": "r"},
    {"concepts": ["a", "b", "c", "d"], "reasoning": "r"},
    {"same_concept": True, "reasoning": "r"},
    {"same_concept": "yes", "reasoning": "r"},
    {"triplets": [{"candidate": "c", "subject": "s", "predicate": PREDICATE, "object": "o"}]},
    {"triplets": [{"candidate": "c", "subject": "s", "predicate": "CURES", "object": "o"}]},
    {"revisions": [{"index": 1, "subject": "s", "predicate": PREDICATE, "object": "o"}]},
    {"revisions": [{"index": 1.0, "subject": "s", "predicate": PREDICATE, "object": "o"}]},
    {"revisions": [{"index": 1.5, "subject": "s", "predicate": PREDICATE, "object": "o"}]},
    {"revisions": [{"index": True, "subject": "s", "predicate": PREDICATE, "object": "o"}]},
    {"revisions": [{"index": 2, "subject": "s", "predicate": PREDICATE, "object": "o", "x": 1}]},
]


@pytest.mark.parametrize("schema", _stage_schemas(), ids=lambda s: ",".join(s["properties"]))
def test_stage_schemas_are_judged_as_jsonschema_judges_them(schema: dict[str, Any]):
    contract, oracle = compile_contract(schema), Draft202012Validator(schema)
    verdicts = set()
    for answer in STAGE_ANSWERS:
        verdicts.add(oracle.is_valid(answer))
        assert judge(answer, contract).schema_ok is oracle.is_valid(answer), answer
    assert verdicts == {True, False}


# --- refusals: a keyword or shape the judge does not interpret ------------------------------


def _prop(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": node}, "required": ["f"]}


REFUSED = [
    (_prop({"type": "string", "pattern": "^A"}), "/properties/f/pattern"),
    (_prop({"type": "string", "minLength": 1}), "/properties/f/minLength"),
    (
        _prop({"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        "/properties/f/uniqueItems",
    ),
    (
        _prop({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
        "/properties/f/items/enum",
    ),
    (_prop({"type": "integer", "enum": [1, 2]}), "/properties/f/enum"),
    (_prop({"type": "object"}), "/properties/f/type"),
    (_prop({"anyOf": [{"type": "string"}, {"type": "number"}]}), "/properties/f/anyOf"),
    (_prop({"description": "no type"}), "/properties/f/type"),
    (_prop({"type": ["string", "number"]}), "/properties/f/type"),
    (
        _prop(
            {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}
        ),
        "/properties/f/items/required",
    ),
    (_prop({"$ref": "#/$defs/Missing"}), "/properties/f"),
    ({"type": "array"}, "/type"),
    (
        {**_prop({"type": "string"}), "additionalProperties": {"type": "string"}},
        "/additionalProperties",
    ),
    ({"type": "object", "properties": {}, "required": ["ghost"]}, "/required"),
    ({"type": "object", "minProperties": 1}, "/minProperties"),
    # hostile schemas (anyone can edit generated/): one located message, never a traceback
    ({**_prop({"$ref": "#/$defs/A"}), "$defs": {"A": {"$ref": "#/$defs/A"}}}, "/$defs/A"),
    (_prop({"$ref": 7}), "/properties/f"),
    ({"type": "object", "properties": {}, "required": [["f"]]}, "/"),
    ({"type": "object", "properties": {"f": []}}, "/properties/f"),
    ([], "/"),
]


@pytest.mark.parametrize(("schema", "pointer"), REFUSED, ids=[p for _, p in REFUSED])
def test_a_schema_the_judge_cannot_interpret_is_refused_and_located(
    schema: dict[str, Any], pointer: str
):
    with pytest.raises(ContractError) as caught:
        compile_contract(schema, "somewhere/response.schema.json")
    assert caught.value.location is not None
    assert caught.value.location.file == "somewhere/response.schema.json"
    assert caught.value.location.field == pointer


def test_the_compiled_schemas_are_accepted():
    for name in ("cardio", "afib"):
        path = CompiledDomain.open(name).schema_path("response")
        assert compile_contract(json.loads(path.read_text()), str(path)).exact


def test_the_runner_refuses_a_stage_schema_before_sending():
    bad = _prop({"type": "string", "format": "date"})
    item = RequestItem("k", "p", "s", "C1", 0, [], {}, schema=bad)
    with pytest.raises(ContractError, match="format"):
        Judges({}, [item])
    good = RequestItem("k", "p", "s", "C1", 0, [], {}, schema=_prop({"type": "string"}))
    assert Judges({}, [good]).for_item(good).fields["f"].kind == "string"


# --- one verdict: the runner's record, the scorer's reading ---------------------------------

TEXTS = [
    (json.dumps(VALID), "ok", True),
    ("  \n" + json.dumps(VALID) + "\n\n", "ok", True),
    (json.dumps(_with(rationale=None)), "schema_error", True),
    ("Here:\n```json\n" + json.dumps(VALID) + "\n```", "extracted", False),
    ("I recommend " + json.dumps(VALID) + " as above.", "extracted", False),
    (json.dumps([VALID]), "unparseable", True),
    ("Lisinopril, because it lowers blood pressure.", "unparseable", False),
    (json.dumps(VALID)[:-5], "unparseable", False),
    ('{"a":' * 70 + "1" + "}" * 70, "unparseable", False),
]


@pytest.mark.parametrize(("raw", "status", "whole"), TEXTS)
def test_the_record_carries_the_judges_status_and_never_a_repaired_answer(
    raw: str, status: str, whole: bool
):
    record = verdict_fields(raw, CONTRACT)
    assert record["parse_status"] == status and status in PARSE_STATUSES
    assert record["parse_ok"] is whole
    assert (record["parsed"] is not None) is whole  # fenced or wrapped: left in raw only
    assert record["judged_with"] == CONTRACT.digest


@pytest.fixture(scope="module")
def scorer():
    return load_compiled_scorer(CARDIO)


@pytest.mark.parametrize(("raw", "status", "whole"), TEXTS)
def test_a_judged_record_scores_as_judging_it_again(scorer, raw: str, status: str, whole: bool):
    """The scorer takes the runner's "ok" as judged; the figures are those of judging the
    record again as an old runner's record (no `judged_with`)."""
    gold = {"correct_intervention_id": "X", "acceptable_intervention_ids": [], "gold_path": []}
    record = {"status": "ok", "raw": raw, **verdict_fields(raw, CONTRACT)}
    old = {k: v for k, v in record.items() if k not in ("parse_status", "judged_with")}
    (new_verdict, new_whole), (old_verdict, old_whole) = (
        scorer.judgement_of(record),
        scorer.judgement_of(old),
    )
    assert new_whole is old_whole is (whole and status != "unparseable")
    assert new_verdict.parse_status == old_verdict.parse_status == status
    assert new_verdict.response == old_verdict.response
    assert scorer.score(gold, None, None, new_verdict) == scorer.score(
        gold, None, None, old_verdict
    )


def test_a_record_judged_under_another_schema_is_judged_again(scorer):
    """A record that says "ok" under another schema's digest is not believed: the scorer's
    judge finds the missing field."""
    answer = _with(rationale=_DROP)
    record = {"status": "ok", "raw": json.dumps(answer), "parsed": answer, "parse_ok": True,
              "parse_status": "ok", "judged_with": "another-schema"}  # fmt: skip
    verdict, _ = scorer.judgement_of(record)
    assert verdict.parse_status == "schema_error" and not verdict.schema_ok
    assert scorer.judgement_of({**record, "judged_with": CONTRACT.digest})[0].parse_status == "ok"


def test_a_recorded_judgement_is_taken_as_made_under_its_schema_only(scorer):
    """Judged once (record 1.2): under the scorer's own digest the record's judgement is the
    verdict, not judged again (planted fields the answer does not hold show it); under another
    digest, or with a judgement of the wrong shape, the answer is judged again."""
    raw = "Sure:\n```json\n" + json.dumps(VALID) + "\n```"
    record = {"status": "ok", "raw": raw, **verdict_fields(raw, CONTRACT)}
    assert record["parse_status"] == "extracted"
    planted = {**record["judgement"], "fields": {"recommended_intervention": "Planted"}}
    verdict, whole = scorer.judgement_of({**record, "judgement": planted})
    assert verdict.response == {"recommended_intervention": "Planted"} and not whole
    assert verdict.parse_status == "extracted" and verdict.parse_ok
    for other in (
        {**record, "judgement": planted, "judged_with": "another-schema"},
        {**record, "judgement": {**planted, "fields": ["not", "fields"]}},
        {**record, "judgement": {**planted, "problems": "not a list"}},
        {**record, "judgement": {**planted}, "parse_status": "fine"},
        {**record, "judgement": None},
    ):
        again, _ = scorer.judgement_of(other)
        assert again.response["recommended_intervention"] == VALID["recommended_intervention"]
        assert again.parse_status == "extracted"


def test_the_recorded_statuses_are_the_judges():
    """kgbench.contract.judgement cannot import the models that import it: its copy of the
    parse statuses is held equal to the one the record declares."""
    from typing import get_args

    from kgbench.contract.judgement import JudgedStatus

    assert get_args(JudgedStatus) == PARSE_STATUSES

"""The response record (kgbench.contract.ResponseRecord): what the runner writes is the model,
the scorer reads it and the unversioned records of earlier runners alike, with the same
scores, and names a record of a format it does not read (issue 32 item 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.compiled import CompiledDomain
from harness.evaluation.judge import compile_contract
from harness.evaluation.prompts import build_prompts
from harness.evaluation.run_scoring import score_run
from harness.runner.client import Completion
from harness.runner.log import JsonlLog
from harness.runner.plan import RequestItem
from harness.runner.pricing import resolve_prices
from harness.runner.records import Judges, cached_copy, failed_record, ok_record
from harness.runner.spec import parse_model_spec
from kgbench.contract import ResponseRecord, record_version_problem
from kgbench.errors import UserError

SPEC = parse_model_spec("openai:gpt-test")
NEW_FIELDS = ("record_version", "parse_status", "judged_with", "judgement")  # since 1.0
JUDGEMENT = ("judgement",)  # since 1.1


def _answers(scenario_id: str) -> list[str]:
    """One answer per kind the judge tells apart."""
    good = {
        "recommended_intervention": "Lisinopril",
        "causal_path_assertion_ids": ["ASR_0001"],
        "adverse_effect_assertion_ids": [],
        "contraindication_assertion_ids": [],
        "supporting_evidence_ids": ["EV_0001"],
        "claims": [{"subject": "Lisinopril", "predicate": "lowers", "object": "blood pressure"}],
        "uncertainty_flag": False,
        "rationale": scenario_id,
    }
    extra_key = {**good, "claims": [{**good["claims"][0], "why": "x"}]}
    return [
        json.dumps(good),
        "Sure:\n```json\n" + json.dumps(good) + "\n```",
        json.dumps({**good, "uncertainty_flag": "no"}),
        json.dumps(extra_key),
        json.dumps([good]),
        "Lisinopril.",
    ]


def _item(prompt: dict[str, Any], replicate: int = 0) -> RequestItem:
    return RequestItem(
        f"key-{prompt['prompt_id']}#{replicate}",
        prompt["prompt_id"],
        prompt["scenario_id"],
        prompt["condition"],
        replicate,
        prompt["messages"],
        {"temperature": 0.0},
    )


def _write_logs(run_dir: Path, domain: CompiledDomain) -> None:
    """responses/new.jsonl as this runner writes it; responses/old.jsonl the same records as
    the runner before the record had a version wrote them (no record_version, parse_status,
    judged_with)."""
    judges = Judges(domain.json("schemas/response.schema.json"))
    prices = resolve_prices(SPEC, 0.0, 0.0)
    prompts = [json.loads(x) for x in (run_dir / "prompts/prompts.jsonl").read_text().splitlines()]
    records = []
    for n, prompt in enumerate(prompts):
        answers = _answers(prompt["scenario_id"])
        item = _item(prompt)
        if n % 7 == 6:
            records.append(failed_record(item, SPEC, "HTTP 500", attempts=3, mode="online"))
            continue
        completion = Completion(answers[n % len(answers)], "stop", None, {"prompt_tokens": 1})
        records.append(
            ok_record(
                item, SPEC, completion, judges, prices, attempts=1, latency_s=0.1, mode="online"
            )
        )
    v11 = [
        {**{k: v for k, v in r.items() if k not in JUDGEMENT}, "record_version": "1.1.0"}
        for r in records
    ]
    for name, logged in (
        ("new", records),
        ("v11", v11),
        ("old", [{k: v for k, v in r.items() if k not in NEW_FIELDS} for r in records]),
    ):
        log = JsonlLog(run_dir / "responses" / f"{name}.jsonl")
        log.append(logged)
        log.close()


@pytest.fixture
def prompted(run_dir: Path, mini_domain: CompiledDomain) -> Path:
    build_prompts(run_dir, str(mini_domain.root))
    for old in (run_dir / "responses").glob("*.jsonl"):
        old.unlink()
    return run_dir


def test_the_runner_writes_the_contract_record(prompted: Path, mini_domain: CompiledDomain):
    _write_logs(prompted, mini_domain)
    lines = (prompted / "responses/new.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines]
    statuses = set()
    for record in records:
        ResponseRecord.model_validate(record)
        assert record["record_version"] == ResponseRecord.FORMAT
        assert record_version_problem(record) is None
        statuses.add(record["parse_status"])
    assert statuses == {"ok", "extracted", "schema_error", "unparseable", None}


def test_a_record_that_breaks_its_model_is_not_written():
    """The "no" case of the writer: a record the model refuses never reaches a log."""
    good = failed_record(
        RequestItem("k", "p", "s", "C1", 0, [], {}), SPEC, "x", attempts=1, mode="online"
    )
    with pytest.raises(ValidationError):
        ResponseRecord.model_validate({**good, "parse_status": "fine"})
    with pytest.raises(ValidationError):
        ResponseRecord.model_validate({**good, "replicate": "first"})
    with pytest.raises(ValidationError):
        ResponseRecord.model_validate({**good, "confidence": 0.9})


def test_old_and_new_records_score_the_same(prompted: Path, mini_domain: CompiledDomain):
    """1.2 records (the judgement recorded, taken as made), 1.1 ones (judged again but an
    exact "ok") and unversioned ones (all judged again) give the same items and panel."""
    _write_logs(prompted, mini_domain)
    score_run(prompted, bootstrap=100, domain=str(mini_domain.root))
    logs = ("new", "v11", "old")
    new, v11, old = (
        [json.loads(x) for x in (prompted / f"scores/{n}/items.jsonl").read_text().splitlines()]
        for n in logs
    )
    assert new == v11 == old
    assert {i.get("parse_status") for i in new} >= {"ok", "extracted", "schema_error"}
    panels = [json.loads((prompted / f"scores/{n}/panel.json").read_text()) for n in logs]
    for panel in panels:
        panel.pop("slug")
    assert panels[0] == panels[1] == panels[2]


def test_a_record_of_each_earlier_format_still_reads(prompted: Path, mini_domain):
    """The model reads the 1.1 records (no judgement) it wrote before 1.2; each new record
    carries the judgement, with its fields only where they are not `parsed` itself."""
    _write_logs(prompted, mini_domain)
    for line in (prompted / "responses/v11.jsonl").read_text().splitlines():
        record = ResponseRecord.model_validate(json.loads(line))
        assert record.record_version == "1.1.0" and record.judgement is None
        assert record_version_problem(json.loads(line)) is None
    recorded = {}
    for line in (prompted / "responses/new.jsonl").read_text().splitlines():
        record = ResponseRecord.model_validate(json.loads(line))
        if record.status == "ok":
            assert record.judgement is not None
            recorded[record.parse_status] = record.judgement
    assert recorded["ok"].fields is None and recorded["ok"].schema_ok  # `parsed` is the fields
    assert recorded["extracted"].fields and recorded["extracted"].json_read
    assert recorded["schema_error"].fields is not None and not recorded["schema_error"].schema_ok
    assert recorded["unparseable"].fields == {}


def test_a_record_of_another_format_is_named_with_its_line(prompted: Path, mini_domain):
    _write_logs(prompted, mini_domain)
    path = prompted / "responses/new.jsonl"
    lines = path.read_text().splitlines()
    future = {**json.loads(lines[2]), "record_version": "2.0.0"}
    path.write_text("\n".join([*lines[:2], json.dumps(future), *lines[3:]]) + "\n")
    with pytest.raises(UserError) as caught:
        score_run(prompted, "new", bootstrap=100, domain=str(mini_domain.root))
    assert "format 2.0.0" in caught.value.message and caught.value.location.line == 3
    assert record_version_problem({"record_version": "1.0.0"}) is None  # a minor below ours
    assert record_version_problem({}) is None  # unversioned: an earlier runner's
    assert record_version_problem({"record_version": 11}) is not None


def test_a_cached_copy_keeps_its_format(prompted: Path, mini_domain: CompiledDomain):
    _write_logs(prompted, mini_domain)
    old = json.loads((prompted / "responses/old.jsonl").read_text().splitlines()[0])
    new = json.loads((prompted / "responses/new.jsonl").read_text().splitlines()[0])
    item = _item({"prompt_id": "X/C1", "scenario_id": "X", "condition": "C1", "messages": []})
    assert "record_version" not in cached_copy(old, item)
    copied = cached_copy(new, item)
    assert ResponseRecord.model_validate(copied).cached and copied["prompt_id"] == "X/C1"


def test_the_record_digest_is_the_scorers_contract(mini_domain: CompiledDomain):
    schema = mini_domain.json("schemas/response.schema.json")
    assert Judges(schema).default.digest == compile_contract(schema).digest


def test_a_judged_answer_is_held_by_its_fields_not_its_text(prompted: Path, mini_domain):
    """Read under the contract it was judged with, an extracted answer's record keeps its
    judged fields and not its raw text (nothing to judge again); under another digest the
    text is kept, to be judged."""
    from harness.evaluation.responses_log import ResponsesLog

    _write_logs(prompted, mini_domain)
    path = prompted / "responses/new.jsonl"
    digest = Judges(mini_domain.json("schemas/response.schema.json")).default.digest
    ours = ResponsesLog.read(path, None, digest).records
    other = ResponsesLog.read(path, None, "another-schema").records
    extracted = [k for k, r in ours.items() if r.get("parse_status") == "extracted"]
    assert extracted
    for key in extracted:
        assert "raw" not in ours[key] and ours[key]["judgement"]["fields"]
        assert isinstance(other[key]["raw"], str)

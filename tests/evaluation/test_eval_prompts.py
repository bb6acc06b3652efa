"""Prompt rendering: deterministic, isolated to the grounded-context block, atomic, clear errors."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest

from harness.evaluation.prompts import PromptRenderer, build_prompts
from harness.runfolder import RUN_FORMAT, RunFolder
from kgbench.errors import UserError


def _split(prompts: dict[str, str]) -> dict[str, str]:
    """Each condition's middle part once the text shared with C1 is cut off both ends."""
    base = prompts["C1"]
    out = {}
    for cond, text in prompts.items():
        pre = 0
        while pre < min(len(base), len(text)) and base[pre] == text[pre]:
            pre += 1
        suf = 0
        while (
            suf < min(len(base), len(text)) - pre
            and base[len(base) - 1 - suf] == text[len(text) - 1 - suf]
        ):
            suf += 1
        assert base[pre : len(base) - suf] == "", f"{cond}: C1 text differs outside one block"
        out[cond] = text[pre : len(text) - suf]
    return out


def test_fixture_scenarios_and_contexts_follow_the_contracts(mini_domain, mini_scenarios):
    schema = mini_domain.json("schemas/scenario.schema.json")
    for scenario in mini_scenarios:
        jsonschema.validate(scenario, schema)
        for cond in ("C2", "C3", "C4"):
            path = Path(__file__).parent / "fixtures/mini_run/contexts"
            ctx = json.loads((path / scenario["scenario_id"] / f"{cond}.json").read_text())
            assert ctx["scenario_id"] == scenario["scenario_id"] and ctx["condition"] == cond
            for section in ctx["sections"]:
                for p in section["paths"]:
                    assert all(a in ctx["assertions"] for a in p["assertion_ids"])


def test_only_the_grounded_block_differs_for_every_scenario(run_dir, mini_domain):
    _out, n = build_prompts(run_dir, str(mini_domain.root))
    records = RunFolder(run_dir).prompts()
    assert n == len(records) == 8 * 4
    by_scenario: dict[str, dict[str, str]] = {}
    for r in records:
        by_scenario.setdefault(r.scenario_id, {})[r.condition] = r.text
    for sid, prompts in by_scenario.items():
        assert sorted(prompts) == ["C1", "C2", "C3", "C4"]
        blocks = _split(prompts)
        assert blocks["C1"] == ""
        assert "Grounded context" not in prompts["C1"]
        assert not re.search(r"\b(ASR|EV)_[0-9]", prompts["C1"])
        for cond in ("C2", "C3", "C4"):
            assert "Grounded context" in blocks[cond], (sid, cond)
            assert prompts[cond].count("# Grounded context") == 1, (sid, cond)
        # The shared parts, in order: header, options, then the answer contract and schema.
        c1 = prompts["C1"]
        assert c1.index(f"# Scenario {sid}") < c1.index("# Candidate options")
        assert c1.index("# Candidate options") < c1.index("# Answer format")
        assert c1.rstrip().endswith("}")


def test_prompts_file_is_deterministic_and_hashes_match(run_dir, mini_domain):
    out, _ = build_prompts(run_dir, str(mini_domain.root))
    first = out.read_bytes()
    build_prompts(run_dir, str(mini_domain.root))
    assert out.read_bytes() == first
    for r in RunFolder(run_dir).prompts():
        content = r.messages[0]["content"]
        assert r.sha256 == hashlib.sha256(content.encode("utf-8")).hexdigest()
        assert r.prompt_id == f"{r.scenario_id}/{r.condition}"
        assert r.messages == [{"role": "user", "content": content}]
    leftovers = [p.name for p in out.parent.iterdir() if p.name != "prompts.jsonl"]
    assert leftovers == []


def test_grounded_lines_read_like_the_paper(run_dir, mini_domain):
    build_prompts(run_dir, str(mini_domain.root))
    text = {r.prompt_id: r.text for r in RunFolder(run_dir).prompts()}
    c4 = text["SCN_0003/C4"]
    assert "Pathway from Lisinopril:\n  1. [ASR_0001] Lisinopril -TARGETS-> " in c4
    assert "- [ASR_0007] Lisinopril -CONTRAINDICATED_FOR-> Pregnancy | evidence: EV_0001" in c4
    # An assertion without a population or source databases (absent in Neo4j) still renders.
    assert "[ASR_0003] RAAS activity -CAUSES_INCREASE_IN-> Blood pressure" in c4
    assert "| evidence: none |" in text["SCN_0004/C4"]
    assert "not validated" in text["SCN_0004/C4"]


def test_missing_context_is_a_clear_error(run_dir, mini_domain):
    (run_dir / "contexts" / "SCN_0002" / "C3.json").unlink()
    with pytest.raises(UserError) as err:
        build_prompts(run_dir, str(mini_domain.root))
    message = str(err.value)
    assert "SCN_0002" in message and "C3.json" in message and "kgbench extract" in message
    assert not (run_dir / "prompts" / "prompts.jsonl").exists()


def test_context_of_the_wrong_shape_is_a_clear_error(run_dir, mini_domain):
    path = run_dir / "contexts" / "SCN_0001" / "C2.json"
    path.write_text(json.dumps({"scenario_id": "SCN_0001", "condition": "C2"}))
    with pytest.raises(UserError, match=r"C2\.json: written by an incompatible kgbench"):
        build_prompts(run_dir, str(mini_domain.root))
    shaped = {"schema_version": "1.0.0", "scenario_id": "SCN_0001", "condition": "C2"}
    path.write_text(json.dumps(shaped))
    with pytest.raises(UserError, match=r"does not match its contract \(Context 2\.0\.0\)"):
        build_prompts(run_dir, str(mini_domain.root))
    path.write_text("{not json")
    with pytest.raises(UserError, match="not valid JSON"):
        build_prompts(run_dir, str(mini_domain.root))


def test_unknown_target_and_missing_scenarios_are_clear_errors(
    tmp_path, mini_domain, mini_scenarios
):
    with pytest.raises(UserError, match=r"scenarios\.jsonl not found"):
        build_prompts(tmp_path, str(mini_domain.root))
    bad = dict(mini_scenarios[0], target_outcome_id="OUT_9999")
    with pytest.raises(UserError, match="OUT_9999"):
        PromptRenderer(mini_domain).render(bad, "C1", None)
    with pytest.raises(UserError, match="unknown condition"):
        PromptRenderer(mini_domain).render(mini_scenarios[0], "C9", None)


def test_run_json_is_versioned_relative_and_rewrites_an_older_one(run_dir, mini_domain):
    """run.json names its compiled domain relative to the run folder; an older run.json (no
    format_version, absolute paths) is rewritten by `prompts`, keeping keys it does not own."""
    old = {"domain": "mini", "compiled_domain": "/gone", "response_schema": "/gone/r.json"}
    (run_dir / "run.json").write_text(json.dumps({**old, "note": "kept"}))
    build_prompts(run_dir, str(mini_domain.root))
    data = json.loads((run_dir / "run.json").read_text())
    assert data["format_version"] == RUN_FORMAT and data["note"] == "kept"
    assert "response_schema" not in data and not Path(data["compiled_domain"]).is_absolute()
    folder = RunFolder(run_dir)
    assert folder.compiled().root.resolve() == mini_domain.root.resolve()
    assert folder.response_schema()[0] == mini_domain.root / "schemas" / "response.schema.json"
    build_prompts(run_dir)  # the run's own domain, from run.json
    assert json.loads((run_dir / "run.json").read_text()) == data

"""Runner hardening: the review's section 4 failures, through the real openai client and the
project's local reference server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.runner.plan import Settings
from kgbench.errors import UserError

from .conftest import read_log
from .helpers import run

SURROGATE = json.loads('"\\ud83d"')  # a truncated emoji: valid JSON, not encodable as UTF-8


def test_an_answer_with_a_lone_surrogate_is_logged_and_never_resent(
    run_folder, server, tmp_path, monkeypatch: pytest.MonkeyPatch
):
    """Review 4f: the log writer crashed on such an answer, and every resume crashed again."""
    import harness.server.completions

    def respond(name: str, prompt: str, gold: Any = None) -> dict[str, Any]:
        return {"recommended_intervention": "Apixaban", "rationale": "cut off " + SURROGATE}

    # the reference server answers through the registry's `respond`, bound at import
    monkeypatch.setattr(harness.server.completions, "respond", respond)
    url, _ = server()
    first = run(run_folder, "openai:context-reader", tmp_path / "cache", base_url=url, limit=4)
    records = read_log(first.log_path)
    assert len(records) == 4 and all(r["status"] == "ok" for r in records)
    assert all(SURROGATE in r["raw"] for r in records)
    again = run(run_folder, "openai:context-reader", tmp_path / "cache", base_url=url, limit=4)
    assert again.tally.previous_ok == 4 and again.tally.sent_ok == 0


def test_another_endpoint_never_appends_to_the_same_log(run_folder, server, tmp_path):
    """Review 4e: a second run with another --base-url re-sent everything into the same log."""
    url_a, _ = server()
    url_b, _ = server()
    first = run(run_folder, "openai:context-reader", tmp_path / "cache", base_url=url_a, limit=8)
    before = first.log_path.read_bytes()
    with pytest.raises(UserError, match=r"another request identity \(base_url"):
        run(run_folder, "openai:context-reader", tmp_path / "cache", base_url=url_b, limit=8)
    with pytest.raises(UserError, match=r"another request identity \(temperature"):
        run(
            run_folder,
            "openai:context-reader",
            tmp_path / "cache",
            base_url=url_a,
            limit=8,
            settings=Settings(temperature=0.7),
        )
    assert first.log_path.read_bytes() == before
    other = run(
        run_folder,
        "openai:context-reader",
        tmp_path / "cache",
        base_url=url_b,
        limit=8,
        log_name="endpoint-b",
    )
    assert other.log_path.name == "endpoint-b.jsonl" and len(read_log(other.log_path)) == 8
    assert (run_folder / "responses" / "endpoint-b.run.json").exists()
    with pytest.raises(UserError, match="is not a plain file name"):
        run(run_folder, "openai:context-reader", tmp_path / "cache", log_name="../x")


def test_pr_surrogate_name_a_prompt_carrying_a_lone_surrogate_is_sent(run_folder, server, tmp_path):
    """Reliability review 2026-12, pr.surrogate-name: a concept name a model wrote with a lone
    surrogate flows into the next stage's prompt, and the openai client could not encode the
    request (UnicodeEncodeError, on every resume). The request body now passes the prompt
    encoder (`kgbench.untrusted.for_prompt`): the surrogate is sent as its visible escape."""
    prompts = run_folder / "prompts" / "prompts.jsonl"
    records = [json.loads(line) for line in prompts.read_text().splitlines()]
    for rec in records[:4]:
        rec["messages"][0]["content"] += f"\nConcept named by the model: {SURROGATE}x\n"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in records))
    url, _ = server()
    first = run(run_folder, "openai:context-reader", tmp_path / "cache", base_url=url, limit=4)
    assert [r["status"] for r in read_log(first.log_path)] == ["ok"] * 4
    again = run(run_folder, "openai:context-reader", tmp_path / "cache", base_url=url, limit=4)
    assert again.tally.previous_ok == 4 and again.tally.sent_ok == 0


def test_the_request_body_escapes_only_lone_surrogates() -> None:
    from harness.runner.client import build_body
    from harness.runner.spec import parse_model_spec

    messages = [{"role": "user", "content": f"a {SURROGATE} b \u00e9\u2028"}]
    body = build_body(parse_model_spec("openai:m"), messages, {}, None)
    assert body["messages"][0]["content"] == "a \\ud83d b \u00e9\u2028"
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # encodable: no exception
    assert messages[0]["content"].startswith(f"a {SURROGATE}")  # the caller's copy untouched


def test_c5_surrogate_triplet_explain_run_prints_escapes(monkeypatch, tmp_path, capsys):
    """c5.surrogate-triplet: explain-run died with UnicodeEncodeError printing a chain that
    holds a model's lone surrogates; the chain passes the terminal encoder."""
    import harness.verify.chains
    from harness.verify.cli import explain_run_command

    chain = f"proposed: Lisinopril{SURROGATE} -> \udfffACE \x1b[2J\n"
    monkeypatch.setattr(harness.verify.chains, "explain_chain", lambda *a: chain)
    explain_run_command("SCN_0001", tmp_path, model="ref:oracle")
    out = capsys.readouterr().out
    assert out == "proposed: Lisinopril\\ud83d -> \\udfffACE \\x1b[2J\n"
    out.encode("utf-8")

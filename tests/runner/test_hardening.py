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

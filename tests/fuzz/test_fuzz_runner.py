"""Fuzz the runner's response handling: whatever text a model sends back, through the real
`openai` client and the project's local server, it is judged, logged durably and read back
unchanged; and the scorer's reading of any responses log is one result or one UserError."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.evaluation.judge import compile_contract
from harness.evaluation.responses_log import ResponsesLog
from harness.runfolder import RUN_FORMAT
from harness.runner.log import JsonlLog
from harness.runner.records import verdict_fields
from kgbench.errors import UserError

from .settings import budget
from .strategies import json_value, model_answer, near_text

SCHEMA = {
    "type": "object",
    "properties": {"recommended_intervention": {"type": ["string", "null"]}},
    "required": ["recommended_intervention"],
    "additionalProperties": False,
}
CONTRACT = compile_contract(SCHEMA)


@budget(ms=7.7)
@given(raw=st.one_of(model_answer(), near_text, st.none()))
@example(raw="1e999")  # found by `make fuzz` (issue 28): parsed to inf, logged as Infinity
@example(raw="NaN")
def test_judging_and_logging_any_answer(raw) -> None:
    verdict = verdict_fields(raw, CONTRACT)
    with tempfile.TemporaryDirectory() as tmp:
        log = JsonlLog(Path(tmp) / "log.jsonl")
        record = {"key": "k", "raw": raw, **verdict}
        log.append([record])
        log.close()
        back, _ = JsonlLog(Path(tmp) / "log.jsonl").load()
        assert back["k"]["raw"] == raw


@budget(ms=11.3)
@given(lines=st.lists(st.one_of(near_text, json_value.map(json.dumps)), max_size=30))
def test_reading_any_responses_log(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.jsonl"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
        try:
            log = ResponsesLog.read(path, max_replicates=3)
        except UserError:
            return
        assert all(0 <= rep < 3 for _, rep in log.records)


@pytest.fixture(scope="module")
def endpoint():
    from harness.server import start_server_in_thread

    url, stop = start_server_in_thread()
    yield url
    stop()


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fuzz",
        "object": "chat.completion",
        "created": 0,
        "model": "fuzz",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


# What the endpoint sends back: a completion whose content is any text; a completion whose
# parts (choices, message, content, usage) have the wrong shape; or any JSON at all.
reply = st.one_of(
    model_answer().map(lambda text: ("content", _completion(text))),
    st.fixed_dictionaries(
        {
            "choices": st.one_of(
                json_value, st.lists(st.fixed_dictionaries({"message": json_value}), max_size=2)
            ),
            "usage": json_value,
            "model": json_value,
        }
    ).map(lambda body: ("broken", body)),
    st.builds(
        lambda content, usage: (
            "broken",
            {**_completion(""), "usage": usage} | {"choices": [{"message": {"content": content}}]},
        ),
        json_value,
        json_value,
    ),
    json_value.map(lambda body: ("broken", body)),
)


@budget(ms=71, divisor=8, floor=4)
@given(replies=st.tuples(reply, reply, reply))
def test_any_reply_through_the_openai_client_is_recorded(
    endpoint: str, replies: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local server answers prompt #i with replies[i], whatever it is: a text answer is
    logged verbatim; a malformed completion is a failed request, never a crash."""
    from rich.console import Console

    from harness.runner.api import RunConfig, run_model
    from harness.runner.engine import RetryPolicy
    from harness.server import completions

    def answer(self: Any, body: dict[str, Any], fault: str | None = None) -> Any:
        return replies[int(body["messages"][-1]["content"].split("#")[-1])][1]

    monkeypatch.setattr(completions.Answerer, "answer", answer)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fuzz-not-a-key")
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        (run_dir / "prompts").mkdir()
        (run_dir / "run.json").write_text(
            json.dumps(
                {"format_version": RUN_FORMAT, "domain": "fuzz", "response_schema": "schema.json"}
            )
        )
        (run_dir / "schema.json").write_text(json.dumps(SCHEMA))
        prompts = [
            {
                "prompt_id": f"P{i}/C1",
                "scenario_id": f"P{i}",
                "condition": "C1",
                "messages": [{"role": "user", "content": f"question #{i}"}],
            }
            for i in range(3)
        ]
        (run_dir / "prompts/prompts.jsonl").write_text(
            "".join(json.dumps(p) + "\n" for p in prompts)
        )
        config = RunConfig(
            run_dir=run_dir,
            model="openai:fuzz",
            base_url=endpoint,
            use_cache=False,
            policy=RetryPolicy(max_attempts=1),
        )
        result = run_model(config, Console(file=io.StringIO()))
        logged = {
            json.loads(x)["prompt_id"]: json.loads(x)
            for x in result.log_path.read_bytes().splitlines()
        }
        for i, (kind, body) in enumerate(replies):
            record = logged[f"P{i}/C1"]
            assert record["status"] in ("ok", "failed")
            if kind == "content":
                assert record["status"] == "ok"
                assert record["raw"] == body["choices"][0]["message"]["content"]

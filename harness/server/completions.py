"""Build OpenAI chat-completion objects from the in-process reference responders.

Shared by the online endpoint and the batch processor, so both answer identically. The
responder reads only the last user message (plus, for the oracles, the gold of the scenario
named in the prompt's `# Scenario <id>` line, and for the noisy oracle the request's seed).
A request's model may name any responder, `noisy-oracle-<rate>` included.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

from harness.evaluation.responders import VERIFIER, is_responder, needs_gold, noisy_rate, respond

from ..runfolder import RunFolder
from ..runner.messages import estimate_tokens, last_user_text, message_text

_SCENARIO = re.compile(r"^# Scenario (\S+)", re.M)
_ids = count(1)


def load_gold(run_dir: Path | None) -> dict[str, dict[str, Any]]:
    """Whole scenarios (gold and labels) by id from the run folder; empty without a run dir.
    The oracle takes the whole scenario so it can name its choice by label."""
    return {} if run_dir is None else RunFolder(run_dir).scenarios_by_id()


class Answerer:
    """Answers a chat request with a reference responder; `fault` shapes a bad answer."""

    def __init__(
        self,
        responder: str,
        gold: dict[str, dict[str, Any]],
        respond: Callable[..., dict[str, Any]] | None = None,
        probe: Any = None,
        probe_responder: str = "oracle",
    ) -> None:
        self.responder = responder
        self.gold = gold
        self._respond = respond
        self.probe = probe  # a harness.probe.responders.ProbeResponder, or None
        self.probe_responder = probe_responder
        self.verify: Any = None  # a harness.verify.responders.VerifyResponder, or None

    def _respond_fn(self) -> Callable[..., dict[str, Any]]:
        if self._respond is None:
            self._respond = respond
        return self._respond

    def answer(self, body: dict[str, Any], fault: str | None = None) -> dict[str, Any]:
        """A chat.completion object for `body`; `malformed`/`truncated` corrupt the content."""
        messages = body.get("messages") or []
        prompt = last_user_text(messages)
        model = str(body.get("model", "reference"))
        obj = self.verify.answer_text(prompt) if self.verify is not None else None
        if obj is not None:
            name = VERIFIER
        elif (obj := self._probe_answer(model, prompt)) is not None:
            name = model if self._is_probe_name(model) else self.probe_responder
        else:
            name = model if is_responder(model) else self.responder
            gold = None
            if needs_gold(name):
                found = _SCENARIO.search(prompt)
                gold = self.gold.get(found.group(1)) if found else None
            if noisy_rate(name) is not None:  # its draws follow the request's seed
                seed = body.get("seed") if type(body.get("seed")) is int else None
                obj = self._respond_fn()(name, prompt, gold, seed=seed)
            else:
                obj = self._respond_fn()(name, prompt, gold)
        text = json.dumps(obj, ensure_ascii=False)
        finish = "stop"
        if fault == "malformed":
            text = text[: max(1, len(text) // 3)] + ' <<not json>> "'
        elif fault == "truncated":
            text = text[: max(1, len(text) // 2)]
            finish = "length"
        prompt_tokens = sum(estimate_tokens(message_text(m)) for m in messages)
        completion_tokens = estimate_tokens(text)
        return {
            "id": f"chatcmpl-ref-{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": f"kgbench-ref-{name}",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    @staticmethod
    def _is_probe_name(model: str) -> bool:
        from harness.probe.responders import is_probe_responder

        return is_probe_responder(model)

    def _probe_answer(self, model: str, prompt: str) -> dict[str, Any] | None:
        """The graph-generation probe's answer when the prompt is one of its steps (the
        request's model names a probe responder, else the server's default one)."""
        if self.probe is None:
            return None
        name = model if self._is_probe_name(model) else self.probe_responder
        return self.probe.answer_text(name, prompt)

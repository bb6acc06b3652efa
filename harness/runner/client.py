"""Transports: send one chat request and classify what came back.

`OpenAITransport` talks to any OpenAI-compatible endpoint through `openai.AsyncOpenAI` with
the client's own retries off (`max_retries=0`), so every retry is the runner's, counted and
visible. `ReferenceTransport` answers in-process with a reference responder (no network).
Both return a `Completion` or raise `RequestFailure` with a `kind` the engine acts on:

- `rate_limited`: 429; back off for Retry-After and shrink concurrency
- `retryable`: 5xx, 408/409, timeouts, dropped connections; exponential backoff
- `permanent`: another 4xx for this request (recorded as failed, not retried)
- `fatal`: the whole run cannot succeed (bad key, unknown model, quota); abort

Every error text passes through `scrub`, so the API key cannot reach a log or a terminal.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from kgbench.untrusted import ParseError, for_prompt, parse_json

from .plan import RequestItem
from .spec import ModelSpec

_KEYLIKE = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|Bearer\s+\S+)")


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove secrets, anything shaped like an API key, and bearer tokens from a message."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _KEYLIKE.sub("***", text)


@dataclass(frozen=True)
class Completion:
    raw: str | None
    finish_reason: str | None
    refusal: str | None
    usage: dict[str, Any] | None
    response_model: str | None = None
    request_id: str | None = None
    system_fingerprint: str | None = None
    structured: bool = False

    @classmethod
    def from_dict(cls, body: dict[str, Any], structured: bool, request_id: str | None = None):
        """From a chat.completion JSON object (as the Batch API returns it).

        The endpoint is not trusted: a completion without a choice, a message or string
        content raises MalformedCompletion (the request failed, it is not an answer), and
        usage counts that are not non-negative integers are dropped, so nothing downstream
        does arithmetic on whatever a server sent.
        """
        choices = body.get("choices")
        choices = choices if isinstance(choices, list) else []
        choice = choices[0] if choices and isinstance(choices[0], dict) else None
        message = choice.get("message") if choice is not None else None
        if not isinstance(message, dict):
            raise MalformedCompletion("the endpoint answered a completion without a message")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise MalformedCompletion(
                f"the endpoint answered message content of type {type(content).__name__}, not text"
            )
        return cls(
            raw=content,
            finish_reason=_text_or_none(choice.get("finish_reason")),
            refusal=_text_or_none(message.get("refusal")),
            usage=_usage(body.get("usage")),
            response_model=_text_or_none(body.get("model")),
            request_id=request_id,
            system_fingerprint=_text_or_none(body.get("system_fingerprint")),
            structured=structured,
        )


class MalformedCompletion(ValueError):
    """A completion object without the fields an answer needs."""


def _text_or_none(value: Any) -> str | None:
    return value[:1000] if isinstance(value, str) else None


def _usage(value: Any) -> dict[str, int] | None:
    """Token counts that are plain non-negative integers (bounded); anything else dropped."""
    if not isinstance(value, dict):
        return None
    out = {
        k: v
        for k, v in value.items()
        if k in ("prompt_tokens", "completion_tokens", "total_tokens")
        and isinstance(v, int)
        and not isinstance(v, bool)
        and 0 <= v < 10**12
    }
    return out or None


class RequestFailure(Exception):
    """A request that did not produce an answer; `kind` says what the engine should do."""

    def __init__(
        self, kind: str, message: str, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after


def _sendable(value: Any) -> Any:
    """Messages as they can be sent: every string through the prompt encoder, since text a
    model wrote earlier (a concept name with a lone surrogate) reaches later prompts, and no
    HTTP client can encode a lone surrogate as UTF-8 (the probe crash-looped on one)."""
    if isinstance(value, str):
        return for_prompt(value)
    if isinstance(value, list):
        return [_sendable(v) for v in value]
    if isinstance(value, dict):
        return {k: _sendable(v) for k, v in value.items()}
    return value


def build_body(
    spec: ModelSpec,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    schema: dict[str, Any] | None,
    schema_name: str = "kgbench_response",
) -> dict[str, Any]:
    """The chat-completions request body; `schema` given means strict structured output.

    api.openai.com gets `max_completion_tokens` (its reasoning models reject `max_tokens`);
    other OpenAI-compatible servers get the widely supported `max_tokens`.
    """
    body: dict[str, Any] = {"model": spec.name, "messages": _sendable(messages)}
    if params.get("temperature") is not None:
        body["temperature"] = params["temperature"]
    if params.get("seed") is not None:
        body["seed"] = params["seed"]
    if params.get("max_tokens") is not None:
        name = "max_completion_tokens" if spec.is_openai_platform else "max_tokens"
        body[name] = params["max_tokens"]
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema_name, "strict": True, "schema": schema},
        }
    return body


def retry_after_seconds(headers: Any) -> float | None:
    """`retry-after-ms` (OpenAI) or `Retry-After` in seconds or as an HTTP date."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _mentions_response_format(exc: Any) -> bool:
    text = f"{getattr(exc, 'message', '')} {getattr(exc, 'param', '')} {exc.body!r}".lower()
    return "response_format" in text or "json_schema" in text


class OpenAITransport:
    """One AsyncOpenAI client for the run; falls back to prompt-only JSON when the endpoint
    rejects `response_format` (400 naming it), once, for the rest of the run."""

    def __init__(
        self,
        spec: ModelSpec,
        api_key: str,
        timeout: float,
        schema: dict[str, Any],
        structured: bool,
    ) -> None:
        from openai import AsyncOpenAI

        self.spec = spec
        self.schema = schema
        self.structured = structured
        self.fell_back = False
        self._secrets = (api_key,)
        self.client = AsyncOpenAI(
            api_key=api_key, base_url=spec.base_url, max_retries=0, timeout=timeout
        )

    def scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    async def complete(self, item: RequestItem) -> Completion:
        """POST the body as built (no SDK re-validation of the large schema per request; the
        raw JSON is read directly, which also tolerates servers that omit optional fields)."""
        import httpx2
        import openai

        structured = self.structured
        schema = self.schema if item.schema is None else item.schema
        body = build_body(
            self.spec, item.messages, item.params, schema if structured else None, item.schema_name
        )
        try:
            response = await self.client.post(
                "/chat/completions", cast_to=httpx2.Response, body=body
            )
        except openai.BadRequestError as exc:
            if structured and _mentions_response_format(exc):
                self.structured = False
                self.fell_back = True
                return await self.complete(item)
            raise self._classify(exc) from None
        except openai.APIError as exc:
            raise self._classify(exc) from None
        try:
            data = parse_json(response.content.decode("utf-8", errors="replace"), allow_nan=True)
        except ParseError:
            text = self.scrub(response.text[:200])
            raise RequestFailure("retryable", f"the endpoint answered non-JSON: {text!r}") from None
        if not isinstance(data, dict):
            raise RequestFailure("retryable", "the endpoint answered JSON that is not an object")
        try:
            return Completion.from_dict(data, structured, response.headers.get("x-request-id"))
        except MalformedCompletion as exc:
            raise RequestFailure("retryable", str(exc)) from None

    def _classify(self, exc: Exception) -> RequestFailure:
        import openai

        message = self.scrub(f"{type(exc).__name__}: {exc}")[:1000]
        if isinstance(exc, openai.APITimeoutError):
            return RequestFailure("retryable", message)
        if isinstance(exc, openai.APIConnectionError):
            return RequestFailure("connection", message)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status == 429:
                if (exc.code or "") == "insufficient_quota":
                    return RequestFailure("fatal", message, status)
                return RequestFailure(
                    "rate_limited", message, status, retry_after_seconds(exc.response.headers)
                )
            if status >= 500 or status in (408, 409):
                return RequestFailure("retryable", message, status)
            if status in (401, 403, 404):
                return RequestFailure("fatal", message, status)
            return RequestFailure("permanent", message, status)
        return RequestFailure("permanent", message)

    async def aclose(self) -> None:
        await self.client.close()


class ReferenceTransport:
    """In-process reference responders: same records, no network, no key."""

    def __init__(self, spec: ModelSpec, gold: dict[str, dict[str, Any]] | None = None) -> None:
        from harness.evaluation.responders import respond

        self.spec = spec
        self.gold = gold or {}
        self._respond = respond
        self.structured = False
        self.fell_back = False

    def scrub(self, text: str) -> str:
        return scrub(text)

    async def complete(self, item: RequestItem) -> Completion:
        from harness.evaluation.responders import needs_gold

        from .messages import estimate_tokens, last_user_text, message_text

        messages, scenario_id = item.messages, item.scenario_id
        prompt = last_user_text(messages)
        oracle = needs_gold(self.spec.name)
        gold = self.gold.get(scenario_id) if oracle else None
        if oracle and gold is None:
            raise RequestFailure("permanent", f"no gold answer for scenario '{scenario_id}'")
        try:
            obj = self._respond(self.spec.name, prompt, gold, item.params.get("seed"))
        except Exception as exc:
            message = scrub(f"responder failed: {type(exc).__name__}: {exc}")
            raise RequestFailure("permanent", message) from None
        raw = json.dumps(obj, ensure_ascii=False)
        tokens_in = sum(estimate_tokens(message_text(m)) for m in messages)
        tokens_out = estimate_tokens(raw)
        usage = {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        }
        return Completion(raw, "stop", None, usage, response_model=self.spec.text)

    async def aclose(self) -> None:
        return None

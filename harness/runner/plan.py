"""The plan of a run: one request per (prompt, replicate), each with its key.

Replicate r of a prompt uses seed `seed + r` when a seed is given: identical seeds would make
replicates identical by construction, which defeats the point of replicating.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgbench.errors import UserError

from ..prompt_file import Prompt
from .keys import request_key
from .spec import ModelSpec


@dataclass(frozen=True)
class Settings:
    """Sampling settings that are part of every request's identity."""

    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    structured: bool = True
    replicates: int = 1


@dataclass(frozen=True)
class RequestItem:
    key: str
    prompt_id: str
    scenario_id: str
    condition: str
    replicate: int
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    schema: dict[str, Any] | None = None
    """This request's own answer schema (stage requests); None: the run's response schema."""
    schema_name: str = "kgbench_response"


def request_params(spec: ModelSpec, settings: Settings, replicate: int) -> dict[str, Any]:
    return {
        "temperature": settings.temperature,
        "seed": None if settings.seed is None else settings.seed + replicate,
        "max_tokens": settings.max_tokens,
        "structured": settings.structured,
        "base_url": spec.base_url,
    }


def plan_requests(prompts: list[Prompt], spec: ModelSpec, settings: Settings) -> list[RequestItem]:
    """All requests in prompt order; two prompts with identical messages are an error,
    because requests are identified by content and they would share one answer."""
    items: list[RequestItem] = []
    seen: dict[str, str] = {}
    for prompt in prompts:
        for r in range(settings.replicates):
            params = request_params(spec, settings, r)
            key = request_key(spec.text, prompt.messages, params, r)
            if key in seen:
                raise UserError(
                    f"prompts '{seen[key]}' and '{prompt.prompt_id}' have identical messages; "
                    "requests are identified by their content, so each prompt must differ"
                )
            seen[key] = prompt.prompt_id
            items.append(
                RequestItem(
                    key,
                    prompt.prompt_id,
                    prompt.scenario_id,
                    prompt.condition,
                    r,
                    prompt.messages,
                    params,
                )
            )
    return items

"""Model specs: `openai:<model>` (optionally with a base URL) or `ref:<responder>`."""

from __future__ import annotations

from dataclasses import dataclass

from kgbench.errors import UserError

from .keys import model_slug

REFERENCE_RESPONDERS = ("oracle", "context-reader", "ungrounded", "first-option")


def _is_noisy_oracle(name: str) -> bool:
    """`noisy-oracle-<rate>`: the QA panel's oracle at a declared error rate."""
    from harness.responders import noisy_rate

    return noisy_rate(name) is not None


@dataclass(frozen=True)
class ModelSpec:
    """Which model answers, and where; `text` is what records and keys carry."""

    provider: str  # "openai" (any OpenAI-compatible endpoint) or "ref" (in-process)
    name: str
    base_url: str | None = None

    @property
    def text(self) -> str:
        return f"{self.provider}:{self.name}"

    @property
    def slug(self) -> str:
        return model_slug(self.text)

    @property
    def is_reference(self) -> bool:
        return self.provider == "ref"

    @property
    def is_openai_platform(self) -> bool:
        """True for api.openai.com itself (prices, batch discount, max_completion_tokens)."""
        return self.provider == "openai" and (
            self.base_url is None or "api.openai.com" in self.base_url
        )


def parse_model_spec(
    text: str, base_url: str | None = None, responders: tuple[str, ...] = REFERENCE_RESPONDERS
) -> ModelSpec:
    """Parse `--model`; a malformed spec is a UserError listing the accepted forms.

    `responders` are the reference responders the caller can run (the QA panel's by default;
    the graph-generation probe has its own)."""
    provider, sep, name = text.partition(":")
    forms = "openai:<model> (with --base-url for other servers) or ref:" + "|ref:".join(responders)
    if not sep or not name.strip():
        raise UserError(f"--model '{text}' is not a model spec; use {forms}")
    name = name.strip()
    if provider == "openai":
        return ModelSpec("openai", name, base_url.rstrip("/") if base_url else None)
    if provider == "ref":
        if name not in responders and not (
            responders is REFERENCE_RESPONDERS and _is_noisy_oracle(name)
        ):
            raise UserError(f"unknown reference responder '{name}'; known: {', '.join(responders)}")
        if base_url:
            raise UserError("--base-url applies to openai: models, not to ref: responders")
        return ModelSpec("ref", name)
    raise UserError(f"unknown model provider '{provider}' in --model '{text}'; use {forms}")

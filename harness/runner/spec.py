"""Model specs: `openai:<model>` (optionally with a base URL) or `ref:<responder>`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from harness.evaluation.responders import is_responder, responder_names
from kgbench.errors import UserError


def model_slug(spec: str) -> str:
    """A file-name-safe form of a model spec: `openai:gpt-4o` -> `openai-gpt-4o`; the name of
    its responses log and scores folder (responses/<slug>.jsonl, scores/<slug>/)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-.") or "model"


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
    text: str, base_url: str | None = None, responders: tuple[str, ...] | None = None
) -> ModelSpec:
    """Parse `--model`; a malformed spec is a UserError listing the accepted forms.

    `responders` are the reference responders the caller can run: None means the QA panel's
    registry (harness.evaluation.responders, noisy oracles included); the graph-generation probe passes
    its own."""
    known = is_responder if responders is None else responders.__contains__
    if responders is None:
        responders = tuple(responder_names())
    provider, sep, name = text.partition(":")
    forms = "openai:<model> (with --base-url for other servers) or ref:" + "|ref:".join(responders)
    if not sep or not name.strip():
        raise UserError(f"--model '{text}' is not a model spec; use {forms}")
    name = name.strip()
    if provider == "openai":
        return ModelSpec("openai", name, base_url.rstrip("/") if base_url else None)
    if provider == "ref":
        if not known(name):
            raise UserError(f"unknown reference responder '{name}'; known: {', '.join(responders)}")
        if base_url:
            raise UserError("--base-url applies to openai: models, not to ref: responders")
        return ModelSpec("ref", name)
    raise UserError(f"unknown model provider '{provider}' in --model '{text}'; use {forms}")


def resolve_model_spec(
    model: str, base_url: str | None = None, responders: tuple[str, ...] | None = None
) -> ModelSpec:
    """The model spec a command sends to; an openai: model without a base URL honours
    $OPENAI_BASE_URL (the SDK would silently use it anyway, and the endpoint must be part of
    every request's key)."""
    if base_url is None and model.startswith("openai:"):
        base_url = os.environ.get("OPENAI_BASE_URL") or None
    return parse_model_spec(model, base_url, responders)


def safe_url(url: str | None) -> str | None:
    """A base URL without user:password, query or fragment, fit for files."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


PROVIDERS = ("openai", "ref")


# What `kgbench run --log-name` accepts (harness.runner.api.log_stem): a reading command
# takes no other, so `../responses/x` cannot reach outside the run's folders.
PLAIN_LOG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def log_name_for(model: str | None, log_name: str | None = None) -> str | None:
    """The responses log (or probe folder) a reading command means: `--log-name` as given,
    else the slug of `--model`, which names the model exactly as `kgbench run` does
    (`openai:gpt-4o`, `ref:oracle`); None when neither is given (every log).

    One model naming everywhere: `score`, `report` and `probe-review` take the spec, never
    the slug; a slug given as --model is refused with the spec it probably stands for.
    """
    if model is not None and log_name is not None:
        raise UserError("give --model or --log-name, not both")
    if model is None:
        if log_name is not None and not PLAIN_LOG_NAME.fullmatch(log_name):
            raise UserError(
                f"--log-name {log_name!r} is not a plain file name; expected letters, digits, "
                "'.', '_' and '-' (up to 100 characters), as `kgbench run --log-name` takes it"
            )
        return log_name
    provider, sep, name = model.partition(":")
    if not sep or provider not in PROVIDERS or not name.strip():
        guess = next(
            (f" (did you mean --model {p}:{model[len(p) + 1 :]}?)" for p in PROVIDERS
             if model.startswith(f"{p}-") and len(model) > len(p) + 1),
            "",
        )  # fmt: skip
        raise UserError(
            f"--model '{model}' is not a model spec{guess}; name the model as `kgbench run` "
            "takes it (openai:<model> or ref:<responder>), or a log by --log-name NAME"
        )
    return model_slug(f"{provider}:{name.strip()}")

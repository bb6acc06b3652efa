"""Request keys: the identity of one request across runs, logs and the shared cache.

A key is the sha256 of the canonical JSON of {model, messages, params, replicate}: the same
request always gets the same key, so a restarted run can tell what is already done, and a
different temperature, seed or endpoint never reuses another setting's answer.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kgbench.io import canonical_json


def request_key(
    model: str, messages: list[dict[str, Any]], params: dict[str, Any], replicate: int
) -> str:
    payload = {"model": model, "messages": messages, "params": params, "replicate": replicate}
    # surrogatepass: a lone surrogate in a message hashes to stable bytes instead of raising
    return hashlib.sha256(canonical_json(payload).encode("utf-8", "surrogatepass")).hexdigest()

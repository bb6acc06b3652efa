"""Chat messages as the runner, the reference server and the responders read them.

Shared by the runner's in-process reference transport and the local reference server (and
the probe's responders), so a baseline answers the same text whichever way it is reached;
it lives with the runner because the runner is the lower layer: the server may import it,
never the other way round.
"""

from __future__ import annotations

from typing import Any


def message_text(message: dict[str, Any]) -> str:
    """The text of one message (content parts are joined)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


def last_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return message_text(message)
    return ""


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token) for answers that have no usage: the
    reference responders are free, so this only fills the usage fields records carry."""
    return len(text) // 4

"""A compiled response schema as the grammar a strict decoder enforces (llguidance, on the CPU).

Strict structured output (OpenAI strict mode, and the grammar engines behind vLLM and others)
lets a model write only what the schema's grammar accepts, keys in the schema's property
order. Checking an answer byte by byte against that grammar tells whether a strictly decoded
model could have sent it as it is: `jsonschema` cannot, since it ignores key order.

The vocabulary is one token per byte plus an end-of-sequence token, so no model or tokenizer
needs to be downloaded.
"""

from __future__ import annotations

import json
from typing import Any

import llguidance

EOS = 256


class _ByteTokenizer:
    """The minimal tokenizer llguidance's TokenizerWrapper reads: 256 byte tokens and EOS."""

    def __init__(self) -> None:
        self.eos_token_id = EOS
        self.bos_token_id = None
        self.tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        self.special_token_ids = [EOS]

    def __call__(self, text: bytes | str) -> list[int]:
        return list(text if isinstance(text, bytes) else text.encode("utf-8"))


class StrictGrammar:
    """The grammar of one JSON Schema; `problem(text)` is None when the text is accepted whole."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.tokenizer = llguidance.LLTokenizer(
            llguidance.TokenizerWrapper(_ByteTokenizer()), slices=[]
        )
        self.grammar = llguidance.LLMatcher.grammar_from_json_schema(json.dumps(schema))
        is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(
            self.grammar, self.tokenizer
        )
        if is_error:
            raise ValueError(f"llguidance cannot compile the schema: {messages[0]}")
        self.warnings = messages

    def problem(self, text: str) -> str | None:
        """Why a strict decoder could not have produced `text` (None: it could)."""
        matcher = llguidance.LLMatcher(self.tokenizer, self.grammar, log_level=0)
        tokens = list(text.encode("utf-8"))
        accepted = matcher.validate_tokens(tokens)
        if accepted != len(tokens):
            context = text.encode("utf-8")[max(0, accepted - 40) : accepted + 1]
            return f"rejected at byte {accepted}: ...{context.decode('utf-8', 'replace')!r}"
        matcher.consume_tokens(tokens)
        if not matcher.is_accepting():
            return "the text stops before the answer is complete"
        return None

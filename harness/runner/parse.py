"""Judge a raw answer against the response schema, without repairing it.

A model's answer is evidence: an answer that is not JSON is recorded as such (parsed=null,
parse_ok=false) and scored as a parse failure downstream, never silently fixed or dropped.
Only surrounding whitespace is ignored; code fences, trailing prose or a cut-off object all
count as not parsing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from kgbench.untrusted import MAX_DEPTH, ParseError, depth_of, parse_json

# The response contract nests three levels deep; an answer nested far deeper than any schema
# needs (the kernel reader's MAX_DEPTH) is not stored as parsed JSON, because writing it back
# into a log record (one level deeper still) could exceed the interpreter's recursion limit.


@dataclass(frozen=True)
class Judgement:
    parsed: Any
    parse_ok: bool
    schema_ok: bool
    schema_errors: list[str]


class ResponseJudge:
    """Parses and validates answers against one compiled response schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.validator = Draft202012Validator(schema)
        self._own: dict[str, ResponseJudge] = {}

    def for_item(self, item: Any) -> ResponseJudge:
        """The judge of one request: this one, or one built (once) for the request's own
        schema when it carries one (stage requests, harness.runner.stage)."""
        schema = getattr(item, "schema", None)
        if schema is None:
            return self
        digest = json.dumps(schema, sort_keys=True)
        judge = self._own.get(digest)
        if judge is None:
            judge = self._own[digest] = ResponseJudge(schema)
        return judge

    def judge(self, raw: str | None) -> Judgement:
        if raw is None:
            return Judgement(None, False, False, [])
        try:
            parsed = parse_json(raw, max_depth=None, allow_nan=True)
        except ParseError:  # not JSON, nested ~1,000 deep, an integer Python will not convert
            return Judgement(None, False, False, [])
        if depth_of(parsed) > MAX_DEPTH:
            return Judgement(None, False, False, [f"(root): nested deeper than {MAX_DEPTH} levels"])
        errors = sorted(self.validator.iter_errors(parsed), key=lambda e: list(e.path))
        messages = [
            f"{'/'.join(str(p) for p in e.path) or '(root)'}: {e.message}"[:300] for e in errors[:5]
        ]
        return Judgement(parsed, True, not errors, messages)

"""The judgement recorded with an answer (ResponseRecord 1.2): the one judge's verdict, kept so
that an answer is judged once, when the runner receives it, and never again under the same
response schema.

The runner judges every answer (harness.evaluation.judge) against the schema whose digest the
record names (`judged_with`). Before 1.2 the record kept only part of that verdict (the status,
and `parsed` only for an answer that is JSON as a whole), so the scorer judged every answer
but an exact "ok" a second time. `RecordedJudgement` keeps the rest: whether any JSON was
read, whether it keeps the schema, its problems, and its well-typed contract fields where
they are not the record's `parsed` object itself (an answer extracted from a code fence or
prose, one with mistyped fields). A scorer holding the same contract (same digest) takes
it as made; under another schema, or for a record without one (1.0, 1.1), it judges again.

A module of its own, beside the models: the record is the only document that carries it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The judge's verdicts, as kgbench.contract.models.ParseStatus declares them (this module is
# imported by models, so it cannot import them back; tests/contract holds the two equal).
JudgedStatus = Literal["ok", "schema_error", "extracted", "unparseable"]


class RecordedJudgement(BaseModel):
    """The judge's verdict on one answer beyond the record's own `parse_status`, `parse_ok`
    (the whole answer is JSON) and `schema_ok` (of that whole answer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    json_read: bool = Field(
        description="some JSON value was read from the answer (whole, or from a fence or braces)"
    )
    schema_ok: bool = Field(description="the JSON read keeps the response schema")
    problems: list[str] = Field(description="what was wrong with it, first ones, short messages")
    fields: dict[str, Any] | None = Field(
        default=None,
        description=(
            "the answer's well-typed contract fields, what the scorer scores; null when they "
            "are the record's `parsed` object itself"
        ),
    )


__all__ = ["JudgedStatus", "RecordedJudgement"]

"""Two tiers of errors.

`UserError` is a mistake in the user's input (a spec file, a data row, a flag, an unreachable
server): it carries a location and prints as one clear message with exit code 2, never a
traceback. Anything else that escapes is a broken invariant inside kgbench and keeps its
traceback so it can be reported and fixed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """Where a problem sits: a file, optionally a line or row, optionally a field."""

    file: str
    line: int | None = None
    field: str | None = None
    row_label: str = "line"

    def __str__(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(f"{self.row_label} {self.line}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ", ".join(parts)


class UserError(Exception):
    """A problem the user can fix; printed without a traceback, exit code 2."""

    exit_code = 2

    def __init__(self, message: str, location: Location | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class SpecError(UserError):
    """A spec file or data table is malformed or inconsistent."""


class ServiceError(UserError):
    """An external service (Neo4j, a model endpoint) cannot be reached or refused us."""

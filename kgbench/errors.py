"""Two tiers of errors.

`UserError` is a mistake in the user's input (a spec file, a data row, a flag, an unreachable
server): it carries a location and prints as one clear message with exit code 2, never a
traceback. Anything else that escapes is a broken invariant inside kgbench and keeps its
traceback so it can be reported and fixed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_SHOWN = 50  # problems printed at most; the rest are counted


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
        # the text made once: a report of 10,000 errors (`validate --max-errors 0`) asked
        # for each error's text twice (here and in `UserErrors`), its location's too
        self._text = f"{location}: {message}" if location else message
        super().__init__(self._text)

    def __str__(self) -> str:
        return self._text


class RequestsFailed(Exception):
    """A command ran, but some of its model requests ended failed or missing (exit code 1).

    Not a UserError: nothing in the input was wrong, and the command's outputs (log, summary,
    scores) were written. The root group prints it as one `error:` line and exits 1, so a
    script does not go on as if the model had answered (harness/runner/failures.py).
    """

    exit_code = 1


class SpecError(UserError):
    """A spec file or data table is malformed or inconsistent."""


class ServiceError(UserError):
    """An external service (Neo4j, a model endpoint) cannot be reached or refused us."""


class UserErrors(UserError):
    """Several user errors found in one pass, reported together: one per line, capped.

    The one multi-error type of kgbench (spec and data checks, scenario files, releases), so
    every command prints a long list the same way: in discovery order (a cause before its
    effects), at most `MAX_SHOWN` lines, then how many more there were. `problems` keeps them
    all for callers that inspect them; each is anything that prints as one line.
    """

    def __init__(
        self, problems: Iterable[object], header: str = "", max_shown: int = MAX_SHOWN
    ) -> None:
        self.problems = list(problems)
        cap = max_shown if max_shown > 0 else len(self.problems)  # 0: every one
        shown = [str(p) for p in self.problems[:cap]]
        if len(self.problems) > cap:
            shown.append(f"... and {len(self.problems) - cap} more")
        super().__init__("\n".join([header, *shown] if header else shown))

    def __str__(self) -> str:
        return self.message

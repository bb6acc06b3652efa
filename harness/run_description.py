"""run.json: which compiled domain a run folder belongs to, and what a run fixes for it.

Its one owner: the format (`RUN_FORMAT`, declared in the contract), the fields, the check of
a file read back, and what a rewrite keeps of an older one. Where it sits and which compiled
domain it resolves to is the run folder's (harness.runfolder).

Paths in it are relative to the run folder, so a run folder and the compiled domain it names
can move together. A run.json from an older kgbench (absolute paths, no version) is refused
with one message saying to re-render the prompts, which rewrites it; nothing guesses what an
old file meant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgbench import contract
from kgbench.errors import Location, UserError

RUN_FORMAT = contract.RunDescriptionFile.FORMAT
"""The run.json format this kgbench reads and writes (declared in the contract)."""

RUN_JSON = "run.json"
KNOWN_KEYS = ("format_version", "domain", "compiled_domain", "response_schema", "replicates")


@dataclass(frozen=True)
class RunDescription:
    """The content of run.json (format `RUN_FORMAT`)."""

    domain: str
    compiled_domain: str | None = None  # relative to the run folder; None: generated/<domain>
    response_schema: str | None = None  # relative to the run folder; None: the compiled one
    replicates: int | None = None  # the declared replicates, when a run fixes them
    extra: dict[str, Any] = field(default_factory=dict)  # keys other tools wrote, kept

    def to_json(self) -> dict[str, Any]:
        data = {**self.extra, "format_version": RUN_FORMAT, "domain": self.domain}
        for key in ("compiled_domain", "response_schema", "replicates"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


def parse_description(data: dict[str, Any], run_dir: Path) -> RunDescription:
    """run.json's content, checked: this format, a domain, relative paths, positive
    replicates; each problem is one message naming run.json and what to run."""
    where = Location(str(run_dir / RUN_JSON))
    version = data.get("format_version")
    if version != RUN_FORMAT:
        written = (
            "an older kgbench (no format_version)"
            if version is None
            else f"format {version!r}, not {RUN_FORMAT}"
        )
        raise UserError(
            f"written by {written}; run `kgbench prompts --run-dir {run_dir}` to rewrite "
            "it for this kgbench",
            where,
        )
    domain = data.get("domain")
    if not isinstance(domain, str) or not domain:
        raise UserError("names no 'domain'", where)
    paths = {}
    for key in ("compiled_domain", "response_schema"):
        value = data.get(key)
        if value is not None and (not isinstance(value, str) or Path(value).is_absolute()):
            raise UserError(f"'{key}' must be a path relative to the run folder", where)
        paths[key] = value
    replicates = data.get("replicates")
    if replicates is not None and (
        isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1
    ):
        raise UserError("'replicates' must be a positive integer", where)
    extra = {k: v for k, v in data.items() if k not in KNOWN_KEYS}
    return RunDescription(domain, **paths, replicates=replicates, extra=extra)


def kept_on_rewrite(old: dict[str, Any]) -> dict[str, Any]:
    """What a rewrite of run.json keeps of the one there: of this format, all but the
    version and the domain; of an older one, only what does not name a path (its paths
    meant something else)."""
    if old.get("format_version") == RUN_FORMAT:
        return {k: v for k, v in old.items() if k not in ("format_version", "domain")}
    return {k: v for k, v in old.items() if k not in KNOWN_KEYS}

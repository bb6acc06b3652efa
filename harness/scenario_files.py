"""Scenario files (JSON Lines): where a domain's generated set lives, and reading any set.

A scenario set is read from three kinds of place: the generated set of a compiled domain
(`generated/<domain>/scenarios/scenarios.jsonl`), a run folder's copy, and a gold release;
all go through `read_scenarios`, so each problem is one message naming the file and line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kgbench.errors import Location, UserError
from kgbench.io import iter_jsonl

from .compiled import CompiledDomain


def generated_set(domain: CompiledDomain) -> Path:
    """The scenario set `kgbench generate` writes for a compiled domain."""
    return domain.generated_scenarios


def read_scenarios(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise UserError(
            f"scenario file not found: {path} (run `kgbench generate` or pass --scenarios)"
        )
    out = []
    for n, item in iter_jsonl(path, "scenario", printable=True):
        if "scenario_id" not in item:
            raise UserError("expected a scenario object with a scenario_id", Location(str(path), n))
        out.append(item)
    return out


@contextmanager
def record_fields(path: Path, record: dict[str, Any], command: str) -> Iterator[None]:
    """A record that parses but lacks or mistypes a field the block reads (a hand-edited
    file; older releases keep every field these commands read) is one message naming the
    file and the scenario, never a KeyError traceback (`make fuzz`, 2026-12-05: `audit` of
    a record whose "category" key was damaged). `check-scenarios` says what exactly."""
    try:
        yield
    except (KeyError, TypeError, AttributeError) as exc:
        what = f"{type(exc).__name__}: {str(exc)[:80]}"
        raise UserError(
            f"{path}: scenario {str(record.get('scenario_id'))[:40]!r} lacks or mistypes a "
            f"field {command} reads ({what}); `kgbench check-scenarios {path}` lists the "
            "record's problems"
        ) from None


def find_scenario(scenarios: list[dict[str, Any]], scenario_id: str) -> dict[str, Any]:
    for s in scenarios:
        if s["scenario_id"] == scenario_id:
            return s
    raise UserError(f"scenario '{scenario_id}' not found ({len(scenarios)} scenarios loaded)")

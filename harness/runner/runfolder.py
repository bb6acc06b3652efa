"""Read what the runner needs from a run folder: run.json, prompts, the response schema, gold.

Every problem is a UserError naming the file and line, because a run folder is user input
(written by earlier `kgbench` steps, but also editable by hand).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
from kgbench.errors import Location, UserError

REPO_ROOT = Path(harness.__file__).resolve().parents[1]


@dataclass(frozen=True)
class Prompt:
    prompt_id: str
    scenario_id: str
    condition: str
    messages: list[dict[str, Any]]


@dataclass(frozen=True)
class RunFolder:
    path: Path
    run: dict[str, Any]
    prompts: list[Prompt]
    schema: dict[str, Any]
    schema_path: Path

    @property
    def responses_dir(self) -> Path:
        return self.path / "responses"

    @property
    def batches_dir(self) -> Path:
        return self.path / "batches"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path} does not exist") from None
    except ValueError as exc:
        raise UserError(f"not valid JSON: {exc}", Location(str(path))) from None


def schema_path_for(run_dir: Path, run: dict[str, Any], repo_root: Path = REPO_ROOT) -> Path:
    """`response_schema` from run.json (relative to the run folder, else the repo root), or
    generated/<domain>/schemas/response.schema.json."""
    explicit = run.get("response_schema")
    if explicit:
        for base in (run_dir, repo_root):
            candidate = (base / explicit).resolve()
            if candidate.exists():
                return candidate
        raise UserError(
            f"response_schema '{explicit}' not found", Location(str(run_dir / "run.json"))
        )
    domain = run.get("domain")
    if not domain:
        raise UserError(
            "run.json names no 'domain' (or 'response_schema')", Location(str(run_dir / "run.json"))
        )
    path = repo_root / "generated" / str(domain) / "schemas" / "response.schema.json"
    if not path.exists():
        raise UserError(
            f"domain '{domain}' has no compiled response schema at {path}; "
            f"run `kgbench compile --domain {domain}` first"
        )
    return path


def read_prompts(path: Path, limit: int | None = None) -> list[Prompt]:
    if not path.exists():
        raise UserError(f"{path} does not exist; render the prompts first (kgbench prompts)")
    prompts: list[Prompt] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if limit is not None and len(prompts) >= limit:
                break
            where = Location(str(path), n)
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise UserError(f"not valid JSON: {exc}", where) from None
            messages = row.get("messages") if isinstance(row, dict) else None
            if (
                not isinstance(messages, list)
                or not messages
                or not all(isinstance(m, dict) and "role" in m and "content" in m for m in messages)
            ):
                raise UserError("'messages' must be a non-empty list of {role, content}", where)
            if not row.get("prompt_id"):
                raise UserError("'prompt_id' is missing", where)
            prompts.append(
                Prompt(
                    prompt_id=str(row["prompt_id"]),
                    scenario_id=str(row.get("scenario_id", "")),
                    condition=str(row.get("condition", "")),
                    messages=messages,
                )
            )
    if not prompts:
        raise UserError(f"{path} holds no prompts")
    return prompts


def load_run_folder(run_dir: Path, limit: int | None = None) -> RunFolder:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError(f"run folder {run_dir} does not exist")
    run = _read_json(run_dir / "run.json")
    if not isinstance(run, dict):
        raise UserError("run.json must hold a JSON object", Location(str(run_dir / "run.json")))
    schema_path = schema_path_for(run_dir, run)
    schema = _read_json(schema_path)
    prompts = read_prompts(run_dir / "prompts" / "prompts.jsonl", limit)
    return RunFolder(run_dir, run, prompts, schema, schema_path)


def load_gold(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Whole scenarios (gold and candidate labels) by id from scenarios.jsonl: the oracle
    needs them to name its choice by label; nothing else reads gold."""
    path = Path(run_dir) / "scenarios.jsonl"
    if not path.exists():
        raise UserError(f"ref:oracle needs {path} (the gold answers) and it does not exist")
    gold: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    row = json.loads(line)
                    if not isinstance(row["gold"], dict):
                        raise TypeError
                    gold[str(row["scenario_id"])] = row
                except (ValueError, KeyError, TypeError):
                    raise UserError(
                        "expected a scenario with scenario_id and gold", Location(str(path), n)
                    ) from None
    return gold

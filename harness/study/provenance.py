"""The provenance block: what a study's numbers were computed from, in one small dict.

One function builds it (`provenance_block`) and one renders it (`provenance_rows`), so the
single-model report can later share both: every field is something a reader needs to
reproduce or audit the numbers (code version, compiled domain, the release and its digest,
the study file's hash, each model's endpoint and settings, the statistics' seed). No secret
can reach it: endpoints are recorded without credentials, API keys never.
"""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.compiled import REPO_ROOT


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def git_revision(root: Path = REPO_ROOT) -> str | None:
    """The checked-out commit, with `+dirty` when tracked files differ; None outside git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def provenance_block(
    *,
    domain: str,
    domain_version: str | None,
    compiled_manifest_sha256: str,
    release: dict[str, Any],
    study: dict[str, Any] | None = None,
    models: list[dict[str, Any]],
    statistics: dict[str, Any],
    created_at: str | None = None,
) -> dict[str, Any]:
    """Everything a number in the report rests on.

    `release`: version, digest, pinned digest, content hash, scenario count; `study`: the
    study file and its sha256 (None for a single-model report); `models`: one dict per model
    (name, spec, endpoint, sampling settings, prices); `statistics`: seed, resamples, unit.
    """
    return {
        "created_at": created_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "code": {
            "kgbench": _version("kgbench"),
            "git": git_revision(),
            "python": platform.python_version(),
            "numpy": _version("numpy"),
            "openai": _version("openai"),
        },
        "domain": {
            "name": domain,
            "version": domain_version,
            "compiled_manifest_sha256": compiled_manifest_sha256,
        },
        "release": release,
        "study": study,
        "models": models,
        "statistics": statistics,
    }


def provenance_rows(block: dict[str, Any]) -> list[tuple[str, str]]:
    """The block as (label, value) rows, in reading order, for any renderer."""
    code, dom, rel = block["code"], block["domain"], block["release"]
    rows = [
        ("Created", str(block["created_at"])),
        (
            "Code",
            f"kgbench {code['kgbench']} (git {code['git'] or 'unknown'}), Python "
            f"{code['python']}, numpy {code['numpy']}, openai {code['openai']}",
        ),
        (
            "Domain",
            f"{dom['name']} {dom['version']}; compiled manifest sha256 "
            f"{dom['compiled_manifest_sha256']}",
        ),
        (
            "Release",
            f"{rel.get('version')} ({rel.get('scenarios')} scenarios); digest {rel.get('digest')}"
            + (f"; pinned {rel['pinned_digest']}" if rel.get("pinned_digest") else "; not pinned")
            + f"; content sha256 {rel.get('content_sha256')}",
        ),
    ]
    if block.get("study"):
        study = block["study"]
        rows.append(("Study file", f"{study.get('path')} (sha256 {study.get('sha256')})"))
    for m in block["models"]:
        settings = ", ".join(
            f"{k} {m[k]}"
            for k in ("temperature", "seed", "max_tokens", "structured", "replicates", "batch")
            if m.get(k) is not None
        )
        where = m.get("endpoint") or "in-process"
        rows.append((f"Model {m['name']}", f"{m['spec']} at {where}; {settings}"))
    s = block["statistics"]
    rows.append(
        (
            "Statistics",
            ", ".join(f"{k} {v}" for k, v in s.items() if not isinstance(v, (dict, list))),
        )
    )
    return rows

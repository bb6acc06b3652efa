"""Where a result came from: the provenance block of every kgbench report.

A number in a report is only as good as what can be said about how it was made, so each
report opens with the same facts, collected here once: the QA report (`collect`, rows per
run and per model) and the study report (`provenance_block`, one dict kept in
study/statistics.json, rendered by `provenance_rows`) read the tool's version and commit
(`code_versions`, from kgbench.version) and the compiled domain (`compiled_facts`) through
the same functions, so the two never describe the same thing differently:

- the tool: kgbench's version and, in a clone, its commit;
- the run: its folder (the run id), domain and domain version, how the domain was compiled
  (compiler version, spec version, the compile's manifest digest), the scenario set (count,
  digest) and the gold release it is, if it is one;
- each model: its spec, whether it is a baseline (a reference responder, also when reached
  through the local reference server as `openai:<name>`), endpoint, sampling parameters,
  mode, and when its answers were collected.

Everything comes from files the run already holds (run.json, the responses logs' settings,
the compiled manifest, the release manifests), never from the clock, so rendering a report
twice gives the same bytes (the study's block adds its creation time, since a study is one
invocation). No secret reaches a block: endpoints are recorded without credentials, API keys
never.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.evaluation.responders import is_responder
from harness.evaluation.run_inputs import domain_of
from kgbench import __version__
from kgbench.errors import UserError
from kgbench.io import sha256_file
from kgbench.untrusted import load_json_or_none, parse_json_or_none
from kgbench.version import commit, describe

from ..compiled import CompiledDomain
from ..runfolder import RunFolder

REFERENCE_FINGERPRINT = "kgbench-ref-"  # how the local reference server signs its answers
NOT_RECORDED = "not recorded"

Rows = list[tuple[str, str]]


@dataclass(frozen=True)
class ModelProvenance:
    """One responses log's model and how it answered."""

    log: str
    model: str
    baseline: str | None  # the reference responder's name for a baseline, else None
    rows: Rows

    @property
    def kind(self) -> str:
        return "Baseline" if self.baseline else "Model"


def short(digest: str, n: int = 12) -> str:
    return f"sha256:{digest[:n]}"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def code_versions() -> dict[str, Any]:
    """The code a number was computed with: kgbench's version and, in a clone, its commit
    (kgbench.version, the one place that asks git), and the runtimes the numbers rest on."""
    return {
        "kgbench": __version__,
        "git": commit(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "openai": _version("openai"),
    }


def tool_rows() -> Rows:
    return [("kgbench", describe().removeprefix("kgbench "))]


def compiled_facts(compiled: CompiledDomain) -> dict[str, Any]:
    """The domain and how it was compiled, from generated/<domain>/manifest.json (None where
    the manifest cannot be read: provenance says what it cannot find, it never fails)."""
    path = compiled.manifest_path
    manifest = load_json_or_none(path, max_depth=None)
    try:
        digest: str | None = sha256_file(path) if manifest is not None else None
    except OSError:
        manifest, digest = {}, None
    manifest = manifest if isinstance(manifest, dict) else {}
    compiler = manifest.get("compiler") if isinstance(manifest.get("compiler"), dict) else {}
    return {
        "name": compiled.name,
        "version": manifest.get("domain_version"),
        "spec_version": manifest.get("spec_version"),
        "compiled_by": compiler.get("kgbench"),
        "compiled_manifest_sha256": digest,
    }


def domain_rows(facts: dict[str, Any]) -> Rows:
    """`compiled_facts` as report rows (the QA report's and the study report's)."""
    if facts.get("compiled_manifest_sha256") is None:
        return [("Domain", str(facts["name"])), ("Compiled", NOT_RECORDED)]
    return [
        ("Domain", f"{facts['name']} {facts.get('version') or '?'}"),
        (
            "Compiled",
            f"by kgbench {facts.get('compiled_by') or '?'}, spec "
            f"{facts.get('spec_version') or '?'}; manifest "
            f"{short(facts['compiled_manifest_sha256'])}",
        ),
    ]


def compiled_rows(compiled: CompiledDomain) -> Rows:
    """The domain and how it was compiled (generated/<domain>/manifest.json)."""
    return domain_rows(compiled_facts(compiled))


def release_of(compiled: CompiledDomain, scenarios: Path) -> str:
    """The published gold release whose scenarios.jsonl is byte-identical to `scenarios`."""
    from ..gold_layout import MANIFEST, SCENARIOS, releases

    if not scenarios.is_file():
        return NOT_RECORDED
    digest = sha256_file(scenarios)
    for version, folder in sorted(releases(compiled.gold_dir).items(), reverse=True):
        manifest = load_json_or_none(folder / MANIFEST)
        if not isinstance(manifest, dict):
            continue
        files = {f.get("path"): f.get("sha256") for f in manifest.get("files", [])}
        if files.get(SCENARIOS) == digest:
            return f"{version} (its scenarios.jsonl, byte for byte)"
    return "none: the scenario set is not a published release"


def run_rows(folder: RunFolder, compiled: CompiledDomain) -> Rows:
    rows: Rows = [*tool_rows(), ("Run", folder.path.resolve().name)]
    rows += compiled_rows(compiled)
    if folder.scenarios_file.is_file():
        n = sum(1 for line in folder.scenarios_file.open(encoding="utf-8") if line.strip())
        rows.append(("Scenarios", f"{n} ({short(sha256_file(folder.scenarios_file))})"))
    rows.append(("Gold release", release_of(compiled, folder.scenarios_file)))
    return rows


def baseline_of(model: str, served_by: list[str]) -> str | None:
    """The reference responder behind a log, or None for a model: `ref:<name>`, or answers
    signed by the local reference server (e.g. the pilot's `openai:context-reader`)."""
    provider, _, name = model.partition(":")
    if provider == "ref" and is_responder(name):
        return name
    names = {s.removeprefix(REFERENCE_FINGERPRINT) for s in served_by}
    if served_by and all(s.startswith(REFERENCE_FINGERPRINT) for s in served_by):
        return ", ".join(sorted(names))
    return None


def _served_by(meta: dict[str, Any], log: Path, limit: int = 1000) -> list[str]:
    """The endpoints' fingerprints: as the runner recorded them, else from the log's first
    answers (a log without its settings file, e.g. from an older kgbench)."""
    recorded = meta.get("served_by")
    if isinstance(recorded, list):
        return [str(s) for s in recorded]
    found: set[str] = set()
    try:
        with log.open(encoding="utf-8", errors="replace") as handle:
            for n, line in enumerate(handle):
                if n >= limit:
                    break
                rec = parse_json_or_none(line)
                if isinstance(rec, dict) and isinstance(rec.get("system_fingerprint"), str):
                    found.add(rec["system_fingerprint"])
    except OSError:
        return []
    return sorted(found)


def _parameters(settings: dict[str, Any]) -> str:
    """A model's sampling parameters and mode as one line (both reports)."""
    if not settings:
        return NOT_RECORDED
    parts = []
    for key in ("temperature", "seed", "max_tokens"):
        value = settings.get(key)
        parts.append(f"{key} {value}" if value is not None else f"{key} not sent")
    structured = settings.get("structured")
    if structured is not None:
        parts.append(f"structured output {'on' if structured else 'off'}")
    replicates = settings.get("replicates")
    if replicates is not None:
        parts.append(f"{replicates} replicate(s)")
    if settings.get("batch"):
        parts.append("Batch API")
    return ", ".join(parts)


def model_provenance(folder: RunFolder, log: str, model: str) -> ModelProvenance:
    """What the runner recorded about responses/<log>.jsonl (responses/<log>.run.json)."""
    path = folder.response_log(log)
    meta = folder.log_settings_of(path)
    baseline = baseline_of(model, _served_by(meta, path))
    settings = meta.get("settings") if isinstance(meta.get("settings"), dict) else {}
    if model.startswith("ref:"):
        endpoint = "in process (no network)"
    else:
        endpoint = str(meta.get("base_url") or ("api.openai.com" if meta else NOT_RECORDED))
    kind = f"baseline: reference responder {baseline}" if baseline else "model"
    if baseline and not model.startswith("ref:"):
        kind += " through the local reference server"
    rows: Rows = [
        ("Model", model),
        ("Kind", kind),
        ("Endpoint", endpoint),
        ("Parameters", _parameters(settings)),
        ("Mode", str(meta.get("mode") or NOT_RECORDED)),
        ("Answers collected", str(meta.get("started_at") or NOT_RECORDED)),
        ("Log", f"responses/{path.name}"),
    ]
    return ModelProvenance(log, model, baseline, rows)


@dataclass(frozen=True)
class Provenance:
    run: Rows
    models: dict[str, ModelProvenance]  # by log name (the panel's slug)


def collect(
    run_dir: Path, panels: list[dict[str, Any]], given: CompiledDomain | None = None
) -> Provenance:
    """The provenance of a run folder and of each scored log in `panels`; `given` is the
    caller's open compiled domain (checked against the run, not opened again)."""
    folder = RunFolder(run_dir)
    models = {
        str(p["slug"]): model_provenance(folder, str(p["slug"]), str(p.get("model", p["slug"])))
        for p in panels
    }
    domain = next((str(p["domain"]) for p in panels if p.get("domain")), None)  # shown only
    try:
        # the one rule for a run's domain, as scoring uses it (no second reading of a name)
        compiled: CompiledDomain | None = domain_of(folder, given)
    except UserError:  # provenance says what it cannot find; it never fails the report
        compiled = None
    if compiled is None:
        rows: Rows = [*tool_rows(), ("Run", folder.path.resolve().name)]
        rows.append(("Domain", domain or NOT_RECORDED))
        return Provenance(rows, models)
    dates = sorted(
        v for m in models.values() for k, v in m.rows if k == "Answers collected"
        if v != NOT_RECORDED
    )  # fmt: skip
    rows = run_rows(folder, compiled)
    if not dates:
        span = NOT_RECORDED
    else:
        span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    rows.append(("Answered", span))
    return Provenance(rows, models)


# --- the study's block ----------------------------------------------------------------------


def provenance_block(
    *,
    compiled: CompiledDomain,
    release: dict[str, Any],
    study: dict[str, Any] | None = None,
    models: list[dict[str, Any]],
    statistics: dict[str, Any],
    created_at: str | None = None,
) -> dict[str, Any]:
    """Everything a number in a study report rests on, as one dict (study/statistics.json).

    `release`: version, digest, pinned digest, content hash, scenario count; `study`: the
    study file and its sha256; `models`: one dict per model (name, spec, endpoint, sampling
    settings, prices); `statistics`: seed, resamples, unit. The code and the domain come from
    `code_versions` and `compiled_facts`, as in the QA report.
    """
    return {
        "created_at": created_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "code": code_versions(),
        "domain": compiled_facts(compiled),
        "release": release,
        "study": study,
        "models": models,
        "statistics": statistics,
    }


def provenance_rows(block: dict[str, Any]) -> Rows:
    """A study's block as (label, value) rows, in reading order, for any renderer; the code
    and domain rows read as the QA report's do."""
    code, rel = block["code"], block["release"]
    commit_text = f" (commit {code['git']})" if code.get("git") else ""
    rows: Rows = [
        ("Created", str(block["created_at"])),
        ("kgbench", f"{code['kgbench']}{commit_text}"),
        ("Runtime", f"Python {code['python']}, numpy {code['numpy']}, openai {code['openai']}"),
        *domain_rows(block["domain"]),
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
        where = m.get("endpoint") or "in-process"
        rows.append((f"Model {m['name']}", f"{m['spec']} at {where}; {_parameters(m)}"))
    s = block["statistics"]
    rows.append(
        (
            "Statistics",
            ", ".join(f"{k} {v}" for k, v in s.items() if not isinstance(v, (dict, list))),
        )
    )
    return rows

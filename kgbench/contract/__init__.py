"""The compiled contract: typed, versioned documents between `kgbench compile` and the harness.

The compiler validates what it writes against these models (a mismatch is a bug, raised as
such); the harness reads through `read` / `parse`, which check the format version first and
the shape second, so a compiled domain from another kgbench, or a hand-edited file, is one
message naming the file and what to run (exit code 2), never a KeyError deep in a command.

`python -m kgbench.contract` regenerates the committed JSON Schemas (`--check` compares).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from kgbench import untrusted
from kgbench.errors import Location, UserError

from .models import (
    DOCUMENTS,
    HARNESS_DOCUMENTS,
    PARSE_STATUSES,
    SCORING_API_VERSION,
    ClaimSupport,
    Condition,
    Conditions,
    Context,
    Document,
    KnowledgeGraph,
    LoadPlan,
    Manifest,
    Metric,
    MetricPanel,
    OrderFigures,
    ParseStatus,
    Presentation,
    Probe,
    ProbeGraph,
    ProbeMapping,
    ProbeRun,
    ProbeScores,
    RecordView,
    ResponseRecord,
    RunDescriptionFile,
    ScenarioRules,
    ScoredPanel,
    Section,
    StudyDescription,
    StudyStatistics,
    Verify,
    VerifySummary,
    VolumeMatch,
)

SCHEMAS_DIR = Path(__file__).resolve().parent / "schemas"

D = TypeVar("D", bound=Document)


class IncompatibleArtifact(UserError):
    """A compiled artifact of another format version, or one that breaks its model."""


def compatible(found: str, reads: str) -> bool:
    """A reader of version `reads` reads `found` of the same major and a minor up to its own."""
    try:
        f_major, f_minor = (int(x) for x in found.split(".")[:2])
        r_major, r_minor = (int(x) for x in reads.split(".")[:2])
    except (ValueError, AttributeError):
        return False
    return f_major == r_major and f_minor <= r_minor


def _shown(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - another drive on Windows
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def _remedy(domain: str | None) -> str:
    if domain:
        return f"run `make compile DOMAIN={domain}` (or `kgbench compile --domain {domain}`)"
    return "compile the domain again (`kgbench compile --domain <domain>`)"


def parse(
    model: type[D], data: Any, path: Path, domain: str | None = None, remedy: str | None = None
) -> D:
    """A document from its JSON value: version first (so another kgbench's output is named as
    such), then the model (so a hand edit that breaks it is named with the field). `remedy`
    replaces "compile again" for documents another command writes (e.g. contexts)."""
    check_version(model, data, path, domain, remedy)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(the document)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise IncompatibleArtifact(
            f"does not match its contract ({model.__name__} {model.FORMAT}): {where}: "
            f"{first['msg']}{more}; the file was edited or damaged: {remedy or _remedy(domain)}",
            Location(_shown(path)),
        ) from None


def check_version(
    model: type[Document],
    data: Any,
    path: Path,
    domain: str | None = None,
    remedy: str | None = None,
) -> None:
    """The version check alone, for readers that keep the document as a dict (panels): the
    current field of a major this kgbench reads, or the legacy field of the legacy format."""
    field, found, reads = model.version_in(data)
    if not isinstance(found, str) or not compatible(found, reads):
        was = f"format {found}" if isinstance(found, str) else f"no {field}"
        raise IncompatibleArtifact(
            f"{'written' if remedy else 'compiled'} by an incompatible kgbench ({was}; this "
            f"kgbench reads {model.FORMAT.rsplit('.', 1)[0]}.x); {remedy or _remedy(domain)}",
            Location(_shown(path)),
        )


def read(model: type[D], path: Path, domain: str | None = None) -> D:
    """Read and check one document (see `parse`); a missing or non-JSON file is one message."""
    return parse(model, read_json(path, domain), path, domain)


def read_json(path: Path, domain: str | None = None) -> Any:
    """The JSON value of a compiled document, read by the kernel's reader of untrusted text
    (anyone can edit generated/); missing, unreadable or not JSON is one message naming the
    file and the remedy. No depth walk: compiled documents can be large, and their shape is
    checked by their model (text nested past the interpreter's limit is still refused)."""
    if not path.exists() and not path.is_symlink():
        raise IncompatibleArtifact(f"missing; {_remedy(domain)}", Location(_shown(path)))
    try:
        text = untrusted.read_text(path, "compiled document")
        return untrusted.parse_json(text, max_depth=None)
    except untrusted.ParseError as exc:
        raise IncompatibleArtifact(
            f"not readable JSON ({exc.message}); {_remedy(domain)}",
            Location(_shown(path), exc.line),
        ) from None
    except UserError as exc:
        raise IncompatibleArtifact(
            f"{exc.message}; {_remedy(domain)}", Location(_shown(path))
        ) from None


def record_version_problem(record: dict[str, Any]) -> str | None:
    """Why this kgbench cannot read one responses-log record's format, or None. A record
    without `record_version` is an unversioned one of an earlier runner (ResponseRecord.LEGACY),
    which is read as before."""
    found = record.get(ResponseRecord.VERSION_FIELD, ResponseRecord.LEGACY)
    if isinstance(found, str) and compatible(found, ResponseRecord.FORMAT):
        return None
    shown = found if isinstance(found, str) else repr(found)[:40]
    return (
        f"a response record of format {shown}, which this kgbench does not read (it reads "
        f"{ResponseRecord.FORMAT.rsplit('.', 1)[0]}.x): score it with the kgbench that wrote it"
    )


def check_formats(manifest: Manifest, root: Path) -> None:
    """Every artifact the manifest lists must be in a format this kgbench reads (checked at
    open, before any artifact is read, so the message comes first and names the file)."""
    known = {m.PATH: m for m in DOCUMENTS}
    for path, version in sorted(manifest.formats.items()):
        model = known.get(path)
        if model is not None and not compatible(version, model.FORMAT):
            raise IncompatibleArtifact(
                f"compiled by an incompatible kgbench (format {version}; this kgbench reads "
                f"{model.FORMAT.rsplit('.', 1)[0]}.x); {_remedy(manifest.domain)}",
                Location(_shown(root / path)),
            )


def json_schema(model: type[Document]) -> dict[str, Any]:
    """The committed JSON Schema of one document (draft 2020-12, generated by pydantic)."""
    schema = model.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://w3id.org/kgbench/contract/{schema_file(model)}"
    schema.setdefault("description", (model.__doc__ or "").strip())
    schema["x-format-version"] = model.FORMAT
    return schema


def schema_file(model: type[Document]) -> str:
    return f"{model.__name__}.schema.json"


def schema_bytes(model: type[Document]) -> bytes:
    return (json.dumps(json_schema(model), indent=2, sort_keys=True) + "\n").encode("utf-8")


__all__ = [
    "DOCUMENTS",
    "HARNESS_DOCUMENTS",
    "PARSE_STATUSES",
    "SCHEMAS_DIR",
    "SCORING_API_VERSION",
    "ClaimSupport",
    "Condition",
    "Conditions",
    "Context",
    "D",
    "Document",
    "IncompatibleArtifact",
    "KnowledgeGraph",
    "LoadPlan",
    "Manifest",
    "Metric",
    "MetricPanel",
    "OrderFigures",
    "ParseStatus",
    "Presentation",
    "Probe",
    "ProbeGraph",
    "ProbeMapping",
    "ProbeRun",
    "ProbeScores",
    "RecordView",
    "ResponseRecord",
    "RunDescriptionFile",
    "ScenarioRules",
    "ScoredPanel",
    "Section",
    "StudyDescription",
    "StudyStatistics",
    "Verify",
    "VerifySummary",
    "VolumeMatch",
    "check_formats",
    "check_version",
    "compatible",
    "json_schema",
    "parse",
    "read",
    "record_version_problem",
    "schema_bytes",
    "schema_file",
]

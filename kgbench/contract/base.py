"""The bases of every contract model: strict, immutable, and versioned.

Each document carries its format version (`FORMAT`, written as `format_version`; the compiled
manifest's is `manifest_version`, a response record's `record_version`); a JSON Schema of each
is generated from its model and committed under `kgbench/contract/schemas/` (a test fails when
they drift).

Rules for changing a model: a new optional field is a minor bump of its `FORMAT`; anything a
reader of the previous version could not read (a removed or renamed field, a new required
one, a changed meaning) is a major bump. Readers accept their own major version and any minor
version up to their own (`kgbench.contract.compatible`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

SCORING_API_VERSION = "1"
"""The major version of kgbench's public scoring API (kgbench.scoring): the compiler writes it
into generated/<d>/scorer.py and kgbench.scoring refuses a stub of another (one constant)."""


class Model(BaseModel):
    """Strict and immutable: an unknown key is an error, not a silently ignored typo."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Document(Model):
    """A top-level artifact: its path under generated/<domain>/ and its format version.

    Every document the harness writes names its version `format_version` (issue 32). A
    document that once used another name declares it in `LEGACY_VERSION_FIELD`, with the last
    format written under it in `LEGACY_FORMAT`: such an older file still reads (the one place
    that knows the old name is here), checked against the old format, never the new one.
    """

    FORMAT: ClassVar[str]
    PATH: ClassVar[str]
    VERSION_FIELD: ClassVar[str] = "format_version"
    LEGACY_VERSION_FIELD: ClassVar[str | None] = None
    LEGACY_FORMAT: ClassVar[str | None] = None

    @classmethod
    def version_in(cls, data: Any) -> tuple[str, Any, str]:
        """(the field found, its value, the format a reader of it reads): the current field
        against `FORMAT`, else the legacy one against `LEGACY_FORMAT`."""
        if isinstance(data, dict) and cls.VERSION_FIELD not in data:
            legacy = cls.LEGACY_VERSION_FIELD
            if legacy is not None and legacy in data and cls.LEGACY_FORMAT is not None:
                return legacy, data[legacy], cls.LEGACY_FORMAT
        found = data.get(cls.VERSION_FIELD) if isinstance(data, dict) else None
        return cls.VERSION_FIELD, found, cls.FORMAT

    @model_validator(mode="before")
    @classmethod
    def _legacy_version_name(cls, data: Any) -> Any:
        """An older document's version under its legacy name is read as `VERSION_FIELD`."""
        legacy = cls.LEGACY_VERSION_FIELD
        if isinstance(data, dict) and legacy and legacy in data and cls.VERSION_FIELD not in data:
            data = {
                cls.VERSION_FIELD: data[legacy],
                **{k: v for k, v in data.items() if k != legacy},
            }
        return data


class HarnessDocument(Document):
    """A run-folder document whose body its writer documents; the model fixes its version.

    Only the identifying fields are typed; the rest is kept as written (extra="allow"): each
    writer validates what it writes against its model."""

    model_config = ConfigDict(extra="allow", frozen=True)

    format_version: str

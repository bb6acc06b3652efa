"""The documents a study writes into its folder: its identity and its statistics."""

from __future__ import annotations

from typing import Any, ClassVar

from .base import HarnessDocument


class StudyDescription(HarnessDocument):
    """study/study.json: a study's identity, which claims its folder (harness.study.run)."""

    FORMAT: ClassVar[str] = "2.0.0"  # 2.0: `format_version` (was `format`)
    PATH: ClassVar[str] = "study/study.json"
    LEGACY_VERSION_FIELD: ClassVar[str | None] = "format"
    LEGACY_FORMAT: ClassVar[str | None] = "1.0.0"

    identity: dict[str, Any]


class StudyStatistics(HarnessDocument):
    """study/statistics.json: every comparison of a study (harness.study.stats)."""

    FORMAT: ClassVar[str] = "2.0.0"  # 2.0: `format_version` (was `statistics_version`)
    PATH: ClassVar[str] = "study/statistics.json"
    LEGACY_VERSION_FIELD: ClassVar[str | None] = "statistics_version"
    LEGACY_FORMAT: ClassVar[str | None] = "1.0.0"

    settings: dict[str, Any]

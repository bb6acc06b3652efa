"""Versioned, immutable gold releases: publish, verify, read (with only the release folder)."""

from __future__ import annotations

from .verify import Release, read_release, verify_release

__all__ = ["Release", "read_release", "verify_release"]

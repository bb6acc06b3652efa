"""Where things live, and how paths appear in messages and artifacts."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = REPO_ROOT / "spec"
TEMPLATES_DIR = REPO_ROOT / "templates"
DOMAINS_DIR = REPO_ROOT / "domains"
GENERATED_DIR = REPO_ROOT / "generated"


def display_path(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when possible."""
    try:
        return os.path.relpath(path)
    except ValueError:  # a different drive on Windows
        return str(path)


def repo_relative(path: Path) -> str:
    """A stable, machine-independent name for a file recorded in artifacts (POSIX style)."""
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return path.resolve().as_posix()

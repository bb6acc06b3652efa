"""A study file read for `kgbench study`: the compiler's declaration reader, then the study's
own checks; the composition of the two halves lives here, in the command-line package, since
the harness never imports the compiler (tests/test_import_graph.py)."""

from __future__ import annotations

from pathlib import Path

from compiler.declarations import load_study_file
from harness.study.config import StudyConfig, study_from


def load_study(path: Path, domain: str) -> StudyConfig:
    """The validated study; a SpecError (file, line, field) on the first problem, raised
    before anything runs or is written."""
    return study_from(load_study_file(Path(path)), Path(path), domain)

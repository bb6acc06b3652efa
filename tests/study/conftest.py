"""Fixtures of the study tests: a gold release of cardio's committed scenarios, published into a
temporary copy of the compile (the committed releases are of an older domain version), and a
writer for study files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bench.study_bench import publish_release, study_yaml


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return publish_release(tmp_path_factory.mktemp("release"))


@pytest.fixture
def write_study(tmp_path: Path, release: Path) -> Callable[..., Path]:
    """write_study(text=None, **study_yaml kwargs) -> the study file's path."""

    def write(text: str | None = None, name: str = "study.yaml", **kwargs) -> Path:
        if text is None:
            models = kwargs.pop(
                "models",
                [("oracle", "oracle", None, None), ("guess", "ungrounded", None, None)],
            )
            text = study_yaml(release, models, kwargs.pop("replicates", 1), **kwargs)
        path = tmp_path / name
        path.write_text(text)
        return path

    return write

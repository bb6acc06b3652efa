"""The release paths the README and the lm-eval task's comment tell a user to run with are
published releases, the newest of their domain (issue 31: they named gold/2.1.0, which was
never published, so the documented commands failed as written)."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import REPO

DOCUMENTS = (
    REPO / "README.md",
    REPO / "kgbench" / "integrations" / "lm_eval_tasks" / "kgbench" / "kgbench.yaml",
)
# A release named in a command: `release=generated/<d>/gold/<v>` or `"release": "..."`.
RELEASE = re.compile(r"release\"?[=:]\s*\"?(generated/([a-z0-9_]+)/gold/([0-9][0-9.]*[0-9]))")


@pytest.mark.parametrize("document", DOCUMENTS, ids=[d.name for d in DOCUMENTS])
def test_every_documented_release_is_the_newest_published(document):
    named = RELEASE.findall(document.read_text(encoding="utf-8"))
    assert named, f"{document}: no release named in a command"
    for path, domain, version in named:
        assert (REPO / path / "manifest.json").is_file(), f"{document}: {path} is not published"
        index = json.loads((REPO / "generated" / domain / "gold" / "index.json").read_text())
        versions = [tuple(int(p) for p in r["version"].split(".")) for r in index["releases"]]
        newest = ".".join(map(str, max(versions)))
        assert version == newest, f"{document}: names {path}; the newest release is {newest}"

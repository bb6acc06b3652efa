"""What a gold release folder holds, and how its content is fingerprinted.

    generated/<domain>/gold/<version>/
      manifest.json                 versions, creation time, sha256 and size of every file
      scenarios.jsonl               the scenario records (each carries its schema_version)
      gold.jsonl                    {schema_version, scenario_id, category, gold} per scenario
      schemas/scenario.schema.json  what scenarios.jsonl validates against
      schemas/gold.schema.json      what each gold record's `gold` validates against
      kgx/<domain>_nodes.tsv        the graph the gold was generated from, as KGX (Biolink)
      kgx/<domain>_edges.tsv          nodes and edges, and the prefix map of their CURIEs
      kgx/prefixes.json               (release format 1.1.0 on; see harness.release.graph)

The content hash covers every file except the manifest (whose creation time is the one
non-deterministic value), so "same content" means same bytes, whenever it was published.
This module is self-contained on purpose: a consumer holding only a release folder can use
it (and `harness.release.verify`) without a spec, a graph or a database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering
from pathlib import Path

from kgbench.errors import UserError
from kgbench.io import sha256_text
from kgbench.untrusted import shown

RELEASE_FORMAT = "1.1.0"  # 1.1.0: the release ships its graph (kgx/, manifest `graph`)
MANIFEST = "manifest.json"
SCENARIOS = "scenarios.jsonl"
GOLD = "gold.jsonl"
SCENARIO_SCHEMA = "schemas/scenario.schema.json"
GOLD_SCHEMA = "schemas/gold.schema.json"
DATA_FILES = (SCENARIOS, GOLD, SCENARIO_SCHEMA, GOLD_SCHEMA)
GRAPH_DIR = "kgx"  # the shipped graph's files, listed in the manifest like the data files

# \Z, not $ (which also matches before a final newline: "1.0.2\n" was taken as 1.0.2), and
# [0-9], not \d (which matches any script's digits); at most 9 digits a part (a 5,000-digit
# part made int() raise past Python's conversion limit).
_PART = r"(0|[1-9][0-9]{0,8})"
SEMVER = re.compile(rf"^{_PART}\.{_PART}\.{_PART}\Z")
BUMPS = ("none", "patch", "minor", "major")


@total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> Version:
        m = SEMVER.match(text)
        if not m:
            raise UserError(
                f"release version {shown(text)} is not semantic; expected MAJOR.MINOR.PATCH "
                "(e.g. 1.0.0, each part at most 9 digits)"
            )
        return cls(*(int(g) for g in m.groups()))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def __lt__(self, other: Version) -> bool:
        return (self.major, self.minor, self.patch) < (other.major, other.minor, other.patch)

    def bump_from(self, previous: Version) -> str:
        """Which part of `previous` this version raises (assumes self > previous)."""
        if self.major > previous.major:
            return "major"
        if self.minor > previous.minor:
            return "minor"
        return "patch"

    def next(self, bump: str) -> Version:
        if bump == "major":
            return Version(self.major + 1, 0, 0)
        if bump == "minor":
            return Version(self.major, self.minor + 1, 0)
        return Version(self.major, self.minor, self.patch + 1)


def content_hash(entries: list[dict]) -> str:
    """One hash over the (path, sha256) of every data file, in path order."""
    text = "".join(f"{e['path']} {e['sha256']}\n" for e in sorted(entries, key=lambda e: e["path"]))
    return sha256_text(text)


def releases(root: Path) -> dict[Version, Path]:
    """Published releases under a gold/ folder, by version."""
    out: dict[Version, Path] = {}
    if not root.is_dir():
        return out
    for child in root.iterdir():
        if child.is_dir() and SEMVER.match(child.name) and (child / MANIFEST).is_file():
            out[Version.parse(child.name)] = child
    return out

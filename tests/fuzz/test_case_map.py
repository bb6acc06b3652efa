"""The case map of tests/fuzz/README.md names only tests that exist: every failing case of
the 2026-12 reliability review (84, each once) with at least one test, each `file::test`
defined in that file, each fuzz command parameter a command the target runs."""

from __future__ import annotations

import re

from kgbench.locations import CHECKOUT as REPO

from .test_fuzz_commands import COMMANDS

README = REPO / "tests" / "fuzz" / "README.md"
CASE = re.compile(r"^\| ([a-z0-9]+\.[a-z0-9.-]+) \| (high|medium|low) \| (.+) \|$")
REVIEW_FAILURES = 84  # reliability-review-2026-12.md: 7 high, 17 medium, 60 low


def _rows() -> list[tuple[str, str, list[str]]]:
    rows = []
    for line in README.read_text(encoding="utf-8").splitlines():
        m = CASE.match(line)
        if m:
            rows.append((m.group(1), m.group(2), re.findall(r"`([^`]+::[^`]+)`", m.group(3))))
    return rows


def test_every_failing_case_of_the_review_is_mapped_once() -> None:
    rows = _rows()
    ids = [case for case, _, _ in rows]
    assert len(ids) == REVIEW_FAILURES and len(set(ids)) == len(ids)
    severities = [severity for _, severity, _ in rows]
    assert (severities.count("high"), severities.count("medium")) == (7, 17)
    assert all(tests for _, _, tests in rows)


def test_every_mapped_test_exists() -> None:
    for case, _, tests in _rows():
        for ref in tests:
            path, name = ref.split("::")
            name, _, param = name.partition("[")
            source = (REPO / path).read_text(encoding="utf-8")
            assert re.search(rf"^(?:async )?def {re.escape(name)}\(", source, re.M), (case, ref)
            if param:
                assert param.rstrip("]") in COMMANDS, (case, ref)

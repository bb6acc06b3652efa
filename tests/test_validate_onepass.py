"""Validation reports every data error in one pass (issue 17, item 2), and the synthetic
generator the benchmarks use plants every kind of error it checks (item 1)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.synth import ERROR_KINDS, make_domain
from compiler.frontend import load_domain
from kgbench.errors import UserErrors
from kgbench.suggest import SuggestIndex, close_match

REPO = Path(__file__).resolve().parents[1]
ALL = ("--max-errors", "0")
REPORTED = re.compile(r"data/(\w+\.csv), line (\d+), field '(\w+)': (.*)")

# What each planted kind must read as: the rule that caught it, not a cascade of another.
WORDING = {
    "enum": "expected one of high, moderate, low, very_low; got 'hihg'",
    "pattern": "expected a value matching",
    "range": "expected a value in [0, 1], got 1.7",
    "required": "a value is required",
    "dangling_subject": "unknown entity 'DRG_",
    "dangling_object": "unknown entity 'PRT_",
    "dangling_population": "unknown entity 'POP_",
    "class_mismatch": "TARGETS does not allow a ProteinTarget as its subject",
    "unknown_predicate": "unknown predicate 'TARGETZ' (did you mean 'TARGETS'?)",
    "relation_class_mismatch": "relation_class of a TARGETS assertion must be",
    "direction_mismatch": "direction of a CAUSES_INCREASE_IN assertion must be 'increase'",
    "no_evidence": "assertion has no evidence link",
    "unknown_class": "unknown class 'Drugg' (did you mean 'Drug'?)",
    "id_prefix": "of a Drug must start with 'DRG_'",
    "duplicate_id": "duplicate id 'DRG_000001'",
    "missing_assertion": "unknown assertion 'ASR_",
    "missing_source": "unknown evidence source 'EV_",
    "duplicate_link": "duplicate SUPPORTS link",
    "source_year": "expected a value in [1900, 2100], got 2300",
}


def test_every_kind_has_a_wording() -> None:
    assert set(WORDING) == set(ERROR_KINDS)


def test_every_planted_error_is_reported_once_in_one_pass(tmp_path: Path) -> None:
    """Three of each kind, cell and cross-table errors mixed across all four tables: the CLI
    reports exactly the planted (file, line, field) set, each in its kind's wording, and
    nothing else, with exit 2 and no traceback."""
    domain, planted = make_domain(tmp_path, 2_000, inject_errors=3 * len(ERROR_KINDS))
    assert {p.kind for p in planted} == set(ERROR_KINDS)
    assert len(planted) == 3 * len(ERROR_KINDS)
    proc = subprocess.run(
        [sys.executable, "-m", "kgbench.cli", "validate", "--domain", str(domain), *ALL],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    reported = {
        (m.group(1), int(m.group(2)), m.group(3)): m.group(4)
        for m in REPORTED.finditer(proc.stderr)
    }
    assert proc.stderr.count("error:") == len(planted)  # nothing reported twice or unlocated
    assert set(reported) == {p[:3] for p in planted}
    for p in planted:
        assert WORDING[p.kind] in reported[p[:3]], (p, reported[p[:3]])


def test_default_report_is_capped_and_counts_the_rest(tmp_path: Path) -> None:
    domain, planted = make_domain(tmp_path, 2_000, inject_errors=60)
    proc = subprocess.run(
        [sys.executable, "-m", "kgbench.cli", "validate", "--domain", str(domain)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert len(REPORTED.findall(proc.stderr)) == 50
    assert f"... and {len(planted) - 50} more" in proc.stderr


def test_cell_and_cross_table_errors_come_together(tmp_path: Path) -> None:
    """The reviewer's case: 40 bad cells and 50 dangling references in one file set used to
    report the 40 only; now all 90, cells first (table order), then references."""
    domain, _ = make_domain(tmp_path, 5_000)
    path = domain / "data" / "assertions.csv"
    lines = path.read_text().splitlines()
    for k in range(90):
        cells = lines[1 + 40 * k + 7].split(",")
        if k < 40:
            cells[7] = "hihg"  # evidence_level: a cell rule
        else:
            cells[3] = f"OUT_{900_000 + k}"  # object_id: well-formed, and unknown
        lines[1 + 40 * k + 7] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserErrors) as info:
        load_domain(domain)
    problems = [str(p) for p in info.value.problems]
    assert len(problems) == 90
    assert all("evidence_level" in p for p in problems[:40])
    assert all("field 'object_id': unknown entity 'OUT_9" in p for p in problems[40:])


def test_a_reference_to_a_row_with_a_bad_cell_is_not_a_second_error(tmp_path: Path) -> None:
    """An entity left out for a bad cell still exists for the rows that name it: one message
    (its cell), not one per assertion that references it."""
    domain, _ = make_domain(tmp_path, 2_000)
    path = domain / "data" / "entities.csv"
    lines = path.read_text().splitlines()
    cells = lines[1].split(",")  # DRG_000001, the subject of several TARGETS assertions
    cells[2] = "bad\x01name"  # a control character: a cell rule
    lines[1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    referencing = (domain / "data" / "assertions.csv").read_text().count(",DRG_000001,")
    assert referencing > 1
    with pytest.raises(UserErrors) as info:
        load_domain(domain)
    assert len(info.value.problems) == 1
    assert "entities.csv, line 2, field 'name'" in str(info.value.problems[0])


def test_suggestions_are_bounded_and_still_right() -> None:
    """An index answers an id variant with one dict probe and a name from a bucket of
    options one slip away; after max_lookups it stops guessing."""
    ids = [f"DRG_{i:06d}" for i in range(100_000)]
    index = SuggestIndex(ids, max_lookups=3)
    assert close_match("drg-99", index) == "DRG_000099"
    assert close_match("DRG_9999999", index) is None  # another number: another entity
    assert close_match("DRG_000100", index) is None  # exists: nothing to suggest
    assert close_match("drg-100", index) is None  # the cap reached: no more guesses
    names = SuggestIndex([f"Name{i}x" for i in range(1_000)] + ["TARGETS", "TREATS"])
    assert close_match("TARGETZ", names) == "TARGETS"
    assert close_match("TARGETZ", ["TARGETS", "TREATS"]) == "TARGETS"  # same as unindexed


def test_backends_raise_no_user_errors() -> None:
    """`kgbench validate` runs the frontend only: that is equivalent to a compile because
    every user error comes from the frontend. A backend that imports the user-error types
    would break that, so none may."""
    forbidden = {"UserError", "UserErrors", "SpecError", "ErrorList"}
    for path in sorted((REPO / "compiler" / "backends").glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert not names & forbidden, f"{path.name} uses {sorted(names & forbidden)}"

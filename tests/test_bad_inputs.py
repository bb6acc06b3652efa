"""Every bad-input fixture in tests/bad_inputs/*.txt produces its one clear message, exit
code 2, no traceback, and writes nothing.

cases.txt holds the original fixtures; review_cases.txt holds every compile-time failure of
the 2026-11 reliability review (each titled with its review number), run the same way.

Every case on the mini domain runs twice: on mini as it is, and on mini with a scenarios.yaml
(mini_scenarios.yaml), because the scenario-rule checks are where `validate` and `compile`
once disagreed, and a fixture without scenarios.yaml could not see it.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgbench.cli import app

CASES_DIR = Path(__file__).with_name("bad_inputs")
CASES_FILE = CASES_DIR / "cases.txt"
REVIEW_FILE = CASES_DIR / "review_cases.txt"
MINI_SCENARIOS = CASES_DIR / "mini_scenarios.yaml"
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Edit:
    file: str
    op: str = ""
    old: str = ""
    new: str = ""
    encoding: str = "utf-8"


@dataclass
class Case:
    title: str
    edits: list[Edit] = field(default_factory=list)
    expect: str = ""
    domain: str = "mini"


_ESCAPE = re.compile(r"\\(\\|n|t|r|u[0-9a-fA-F]{4}|\{(\d+)\*([^}]+)\})")


def _unescape(text: str) -> str:
    """`\\n`, `\\t`, `\\r`, `\\\\` (a backslash), `\\uXXXX` (any character, even NUL) and
    `\\{N*text}` (text repeated N times, for oversized or deeply nested inputs)."""

    def sub(m: re.Match[str]) -> str:
        code = m.group(1)
        if code in ("\\", "n", "t", "r"):
            return {"\\": "\\", "n": "\n", "t": "\t", "r": "\r"}[code]
        if code.startswith("u"):
            return chr(int(code[1:], 16))
        return m.group(3) * int(m.group(2))

    return _ESCAPE.sub(sub, text)


DIRECTIVES = "case|domain|file|replace|with|append|create|expect|mkdir|mkfifo|symlink|encoding"


def parse_cases(text: str) -> list[Case]:
    cases: list[Case] = []
    for raw in text.splitlines():
        m = re.match(rf"^# ({DIRECTIVES}):(?: (.*))?$", raw)
        if not m:
            continue
        key, value = m.group(1), _unescape(m.group(2) or "")
        if key == "case":
            cases.append(Case(value))
        elif key == "domain":
            cases[-1].domain = value
        elif key == "file":
            cases[-1].edits.append(Edit(value))
        elif key == "replace":
            cases[-1].edits[-1].op, cases[-1].edits[-1].old = "replace", value
        elif key == "with":
            cases[-1].edits[-1].new = value
        elif key in ("append", "create", "symlink"):
            cases[-1].edits[-1].op, cases[-1].edits[-1].new = key, value
        elif key in ("mkdir", "mkfifo"):
            cases[-1].edits[-1].op = key
        elif key == "encoding":
            cases[-1].edits[-1].encoding = value
        elif key == "expect":
            cases[-1].expect = value
    return cases


CASES = parse_cases(CASES_FILE.read_text(encoding="utf-8"))
REVIEW_CASES = parse_cases(REVIEW_FILE.read_text(encoding="utf-8"))
ALL_CASES = CASES + REVIEW_CASES


def test_there_are_at_least_30_cases() -> None:
    assert len(CASES) >= 30
    assert all(c.expect and c.edits for c in ALL_CASES)


def test_every_compile_failure_of_the_review_has_a_case() -> None:
    """The reliability review's compile-time FAILs (section 1) are all in review_cases.txt."""
    failed = {6, 14, 19, 20, 27, 29, 30, 32, 33, 34, 36, 38, 44, 45, 54, 56}
    failed |= {58, 59, 60, 61, 62, 63, 64, 65, 66, 67}
    titled = {int(m.group(1)) for c in REVIEW_CASES if (m := re.match(r"review (\d+):", c.title))}
    assert failed <= titled, sorted(failed - titled)


def apply(edit: Edit, root: Path) -> None:
    path = root / edit.file
    if edit.op in ("mkdir", "mkfifo", "symlink"):
        path.unlink()
        if edit.op == "mkdir":
            path.mkdir()
        elif edit.op == "mkfifo":
            os.mkfifo(path)
        else:
            target = Path(edit.new)
            path.symlink_to(target if target.is_absolute() else REPO / target)
        return
    if edit.op == "create":
        path.write_text(edit.new + "\n", encoding=edit.encoding)
        return
    text = path.read_text(encoding="utf-8")
    if edit.op == "append":
        text = text + edit.new + "\n"
    else:
        assert edit.old in text, f"fixture text not found in {edit.file}: {edit.old!r}"
        text = text.replace(edit.old, edit.new, 1)
    path.write_text(text, encoding=edit.encoding)


@pytest.fixture
def cardio_copy(tmp_path: Path) -> Path:
    """A writable copy of domains/cardio, at the same depth so its imports resolve."""
    root = tmp_path / "c" / "domains" / "cardio"
    shutil.copytree(REPO / "domains" / "cardio", root)
    os.symlink(REPO / "spec", tmp_path / "c" / "spec")
    return root


def with_scenarios(root: Path) -> None:
    """Give a copy of mini the scenario rules of mini_scenarios.yaml.

    Applied after a case's edits and appended at the end of domain.yaml, so every line a case
    names keeps its number. A domain.yaml the case replaced by something else than a regular
    file (a folder, a FIFO, a link) is left alone: there is nothing to declare rules in.
    """
    domain = root / "domain.yaml"
    if domain.is_symlink() or not domain.is_file():
        return
    shutil.copyfile(MINI_SCENARIOS, root / "scenarios.yaml")
    text = domain.read_text(encoding="utf-8", errors="replace")
    with domain.open("a", encoding="utf-8") as handle:
        handle.write(("" if text.endswith("\n") else "\n") + "scenarios: scenarios.yaml\n")


def test_mini_with_scenarios_is_valid(mini_copy: Path, tmp_path: Path) -> None:
    """The scenario-bearing variant is valid before any case edits it (so a case's message is
    the case's own), and its rules are compiled."""
    with_scenarios(mini_copy)
    result = CliRunner().invoke(app, ["validate", "--domain", str(mini_copy)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["compile", "--domain", str(mini_copy), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "mini" / "scenario_rules.json").is_file()


VARIANTS = [
    (case, variant)
    for case in ALL_CASES
    for variant in (("as is", "with scenarios.yaml") if case.domain == "mini" else ("as is",))
]


@pytest.mark.parametrize("command", ["compile", "validate"])
@pytest.mark.parametrize(
    ("case", "variant"), VARIANTS, ids=[f"{c.title} [{v}]" for c, v in VARIANTS]
)
def test_bad_input(
    case: Case,
    variant: str,
    command: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`validate` runs every check `compile` runs; it must report exactly what `compile` does."""
    root: Path = request.getfixturevalue("cardio_copy" if case.domain == "cardio" else "mini_copy")
    for edit in case.edits:
        apply(edit, root)
    if variant == "with scenarios.yaml":
        with_scenarios(root)
    out = tmp_path / "out"
    monkeypatch.chdir(root)
    args = ["--domain", str(root)] + (["--out", str(out)] if command == "compile" else [])
    result = CliRunner().invoke(app, [command, *args])
    stderr = result.stderr
    assert result.exit_code == 2, f"exit {result.exit_code}\n{result.output}\n{result.exception!r}"
    assert "Traceback" not in result.output
    lines = [ln.removeprefix("error: ") for ln in stderr.splitlines() if ln.startswith("error: ")]
    assert lines, stderr
    assert lines[0].startswith(case.expect), f"\nexpected: {case.expect}\n     got: {lines[0]}"
    assert not out.exists(), "a failed compile must write nothing"


SAME_MESSAGE_CASES = [
    c
    for c in ALL_CASES
    if c.title.startswith(("code review 1.4", "review 38", "causal-chain section", "grounded"))
]


@pytest.mark.parametrize("case", SAME_MESSAGE_CASES, ids=[c.title for c in SAME_MESSAGE_CASES])
def test_validate_reports_exactly_what_compile_reports(
    case: Case, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One pipeline: a domain `compile` rejects, `validate` rejects with the same messages
    (every line, not only the first), including what the backends used to find at compile
    time only (conditions a domain cannot serve) and the scenario rules' cross-checks."""
    assert len(SAME_MESSAGE_CASES) == 4
    root: Path = request.getfixturevalue("cardio_copy" if case.domain == "cardio" else "mini_copy")
    for edit in case.edits:
        apply(edit, root)
    monkeypatch.chdir(root)
    runner = CliRunner()
    compiled = runner.invoke(app, ["compile", "--domain", str(root), "--out", str(tmp_path)])
    validated = runner.invoke(app, ["validate", "--domain", str(root)])
    assert compiled.exit_code == validated.exit_code == 2
    assert compiled.stderr == validated.stderr
    assert compiled.stderr.startswith("error: " + case.expect)

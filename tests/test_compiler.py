"""The compiler end to end: both domains compile, counts hold, output is deterministic,
committed generated/ is fresh, writes are atomic, and artifacts pass their real consumers."""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from compiler.api import PRESERVED, build_artifacts, compile_domain, validate_domain
from compiler.backends.graph import DERIVED_ASSERTION_FIELDS
from compiler.jsonschemas import strict_violations
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[1]
DOMAINS = sorted(p.name for p in (REPO / "domains").iterdir() if (p / "domain.yaml").exists())

PAPER_ENTITIES = {
    "Disease": 10, "Drug": 15, "Intervention": 10, "ProteinTarget": 15, "BiologicalProcess": 13,
    "RiskFactor": 13, "ClinicalOutcome": 10, "AdverseEffect": 14, "Contraindication": 8, "Population": 9,
}  # fmt: skip
PAPER_ASSERTIONS = {
    "TARGETS": 15, "PARTICIPATES_IN": 14, "CAUSES_INCREASE_IN": 65, "CAUSES_DECREASE_IN": 82,
    "ASSOCIATED_WITH": 18, "INDICATED_FOR": 15, "MAY_CAUSE_ADVERSE_EFFECT": 26,
    "CONTRAINDICATED_FOR": 13, "MODIFIES_EFFECT_OF": 9,
}  # fmt: skip


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.relative_to(root).parts[0] not in PRESERVED  # written by other commands
        and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def cardio():
    return validate_domain("cardio")


def test_cardio_covers_the_papers_scale(cardio) -> None:
    """The paper's graph (117 entities, 257 assertions) is a floor: release 2.0.0 added the
    outcome claims and study-level sources the evidence rule needs, never removed a category."""
    entities = Counter(e.category for e in cardio.entities)
    assertions = Counter(a.predicate for a in cardio.assertions)
    for category, floor in PAPER_ENTITIES.items():
        assert entities[category] >= floor, category
    for predicate, floor in PAPER_ASSERTIONS.items():
        if predicate in ("ASSOCIATED_WITH", "MODIFIES_EFFECT_OF"):
            continue  # associations the review found unsupported were retracted or retyped
        assert assertions[predicate] >= floor, predicate
    assert entities["InterventionClass"] == len(cardio.intervention_classes) > 0
    assert assertions["HAS_NO_EFFECT_ON"] > 0, "null results from trials are first-class claims"
    study_level = sum(e.study_level for e in cardio.evidence_sources)
    assert study_level >= 11 and study_level / len(cardio.evidence_sources) > 0.5


def test_cardio_keeps_the_papers_worked_example(cardio) -> None:
    """Lisinopril -> ACE -> RAAS -> blood pressure -> CV events (paper Table 1) is still there,
    and its last hop is now qualified by outcome evidence from trials of the drug's class."""
    by_id = {a.assertion_id: a for a in cardio.assertions}
    names = {e.id: e.name.lower() for e in cardio.entities}
    chain = [by_id[i] for i in ("ASR_0019", "ASR_0010", "ASR_0011", "ASR_0013")]
    assert [a.predicate for a in chain[:2]] == ["TARGETS", "PARTICIPATES_IN"]
    for left, right in itertools.pairwise(chain):
        assert left.object_id == right.subject_id
    lisinopril = chain[0].subject_id
    assert "lisinopril" in names[lisinopril]
    assert by_id["ASR_0028"].predicate == "INDICATED_FOR"
    assert by_id["ASR_0028"].subject_id == lisinopril
    assert "cough" in names[by_id["ASR_0087"].object_id]
    assert "hyperkalemia" in names[by_id["ASR_0091"].object_id]
    evidence = {e.evidence_id: e for e in cardio.evidence_sources}
    assert "JNC" in evidence["EV_0007"].title + evidence["EV_0007"].citation
    assert "HOPE" in evidence["EV_0011"].title + evidence["EV_0011"].citation
    supported = {(s.evidence_id, s.assertion_id) for s in cardio.supports}
    assert ("EV_0007", "ASR_0028") in supported
    # the outcome claim: the drug's class lowers the chain's end point, from outcome trials
    outcome = by_id["ASR_0262"]
    assert (outcome.predicate, outcome.object_id) == ("CAUSES_DECREASE_IN", chain[-1].object_id)
    klass = next(c for c in cardio.intervention_classes if c.class_id == outcome.subject_id)
    assert lisinopril in klass.member_ids
    trials = [evidence[e] for e, a in supported if a == "ASR_0262"]
    assert any(t.study_level and klass.class_id in t.studied_interventions for t in trials)


@pytest.mark.parametrize("domain", DOMAINS)
def test_committed_generated_is_fresh_and_deterministic(domain: str, tmp_path: Path) -> None:
    """`make compile` would not change generated/ (CI fails otherwise), and twice is identical."""
    first = compile_domain(domain, out_root=tmp_path / "a", force=True)
    second = compile_domain(domain, out_root=tmp_path / "b", force=True)
    a, b = tree_bytes(first.out_dir), tree_bytes(second.out_dir)
    assert a == b
    committed = tree_bytes(REPO / "generated" / domain)
    stale = sorted(set(a) ^ set(committed)) + sorted(
        k for k in a if k in committed and a[k] != committed[k]
    )
    assert not stale, (
        f"generated/{domain} is stale; run `make compile DOMAIN={domain}`: {stale[:10]}"
    )


def test_manifest_hashes_every_input_and_output(tmp_path: Path) -> None:
    result = compile_domain("cardio", out_root=tmp_path, force=True)
    manifest = json.loads((result.out_dir / "manifest.json").read_text())
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["spec_version"])
    assert manifest["compiler"]["linkml"] == "1.12.1"
    for entry in manifest["outputs"]:
        data = (result.out_dir / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    inputs = {e["path"] for e in manifest["inputs"]}
    assert {
        "spec/kg.yaml",
        "domains/cardio/schema/cardio.yaml",
        "domains/cardio/data/assertions.csv",
    } <= inputs
    assert any(p.startswith("templates/") for p in inputs)
    written = {
        p.relative_to(result.out_dir).as_posix() for p in result.out_dir.rglob("*") if p.is_file()
    }
    assert written == {e["path"] for e in manifest["outputs"]} | {"manifest.json"}


def test_noop_recompile_and_change_detection(tmp_path: Path, mini_copy: Path) -> None:
    first = compile_domain(mini_copy, out_root=tmp_path / "out")
    assert not first.up_to_date
    assert compile_domain(mini_copy, out_root=tmp_path / "out").up_to_date
    data = mini_copy / "data" / "entities.csv"
    data.write_text(data.read_text().replace("Dry cough", "Dry tickly cough"))
    assert not compile_domain(mini_copy, out_root=tmp_path / "out").up_to_date


def test_failed_compile_leaves_previous_output_untouched(tmp_path: Path, mini_copy: Path) -> None:
    out = tmp_path / "out"
    compile_domain(mini_copy, out_root=out)
    before = tree_bytes(out / "mini")
    data = mini_copy / "data" / "assertions.csv"
    data.write_text(data.read_text().replace(",TARGETS,", ",TARGETZ,", 1))
    with pytest.raises(UserError):
        compile_domain(mini_copy, out_root=out)
    assert tree_bytes(out / "mini") == before
    assert [p.name for p in out.iterdir()] == ["mini"], "no temporary folder may survive"


def test_failure_inside_a_backend_is_atomic(tmp_path: Path, mini_copy: Path, monkeypatch) -> None:
    """A crash after some files were written (disk full, a bug) leaves the old tree in place."""
    from compiler import writer

    out = tmp_path / "out"
    compile_domain(mini_copy, out_root=out)
    before = tree_bytes(out / "mini")
    real_write = Path.write_bytes
    calls = {"n": 0}

    def failing_write(self: Path, content: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 10:
            raise OSError(28, "No space left on device")
        return real_write(self, content)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    from kgbench.io import WriteError  # what the disk refuses is one user error (issue 28)

    with pytest.raises(WriteError, match=r"No space left on device"):
        writer.write_tree(out / "mini", build_artifacts(validate_domain(mini_copy)))
    monkeypatch.undo()
    assert tree_bytes(out / "mini") == before
    assert [p.name for p in out.iterdir()] == ["mini"]


def test_response_schema_is_openai_strict_and_validates_the_contract() -> None:
    schema = json.loads((REPO / "generated/cardio/schemas/response.schema.json").read_text())
    assert strict_violations(schema) == []
    assert schema["required"][:2] == ["recommended_intervention", "causal_path_assertion_ids"]
    good = {
        "recommended_intervention": "lisinopril",
        "causal_path_assertion_ids": ["ASR_0019"],
        "adverse_effect_assertion_ids": [],
        "contraindication_assertion_ids": [],
        "supporting_evidence_ids": ["EV_0011"],
        "claims": [{"subject": "lisinopril", "predicate": "lowers", "object": "blood pressure"}],
        "uncertainty_flag": False,
        "rationale": "x",
    }
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "extra": 1}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in good.items() if k != "claims"}, schema)


def test_strictness_checker_rejects_what_openai_rejects() -> None:
    bad = {"type": "object", "properties": {"a": {"type": "string"}}, "required": [], "allOf": []}
    problems = strict_violations(bad)
    assert any("additionalProperties" in p for p in problems)
    assert any("every property must be required" in p for p in problems)
    assert any("'allOf'" in p for p in problems)


@pytest.mark.parametrize("domain", DOMAINS)
def test_generated_scorer_is_a_stub_over_the_public_scoring_api(domain: str) -> None:
    """scorer.py imports nothing internal (only kgbench.scoring), reads its panel from
    metrics.json, and scores as `kgbench score` does."""
    from harness.compiled import CompiledDomain
    from harness.evaluation.compiled_scorer import load_compiled_scorer

    path = REPO / "generated" / domain / "scorer.py"
    imports = [
        line.split()[1]
        for line in path.read_text().splitlines()
        if line.startswith(("import ", "from "))
    ]
    assert sorted(imports) == ["__future__", "functools", "kgbench", "pathlib", "typing"]
    spec = importlib.util.spec_from_file_location(f"scorer_{domain}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    declared = [m.name for m in validate_domain(domain).metrics]
    assert list(module.panel().metric_names) == declared
    assert "causal_edge_f1" in declared and "unsupported_claim_rate" in declared
    scenario = json.loads(
        (REPO / "generated" / domain / "scenarios/scenarios.jsonl").read_text().splitlines()[0]
    )
    answer = {"recommended_intervention": scenario["candidates"][0]["label"]}
    expected = load_compiled_scorer(CompiledDomain.open(domain)).score(
        scenario["gold"], answer, None
    )
    assert module.score(scenario["gold"], answer, None) == expected.scores


@pytest.mark.parametrize("domain", DOMAINS)
def test_table_schemas_accept_the_compiled_rows(domain: str) -> None:
    gen = REPO / "generated" / domain
    graph = json.loads((gen / "kg.json").read_text())
    for table, key in (
        ("entities", "entities"),
        ("assertions", "assertions"),
        ("evidence_sources", "evidence_sources"),
    ):
        schema = json.loads((gen / "schemas" / f"{table}.schema.json").read_text())
        validator = jsonschema.Draft202012Validator(schema)
        derived = DERIVED_ASSERTION_FIELDS if table == "assertions" else ()
        for row in graph[key]:
            assert all(f in row for f in derived)
            clean = {k: v for k, v in row.items() if v is not None and v != [] and k not in derived}
            errors = list(validator.iter_errors(clean))
            assert not errors, (table, row, errors[0].message)


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_prompt_template_parses(domain: str) -> None:
    """One frame and one context template per condition, each valid Jinja (they are rendered
    on mini in tests/evaluation and on cardio by the pilot test)."""
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    paths = sorted((REPO / "generated" / domain / "prompts").glob("*.j2"))
    for path in paths:
        env.parse(path.read_text())
    conditions = json.loads((REPO / "generated" / domain / "conditions.json").read_text())
    expected = {f"context_{c['id']}.j2" for c in conditions["conditions"]}
    assert {p.name for p in paths} == {"frame.j2", *expected}


CODE_DIRS = ("compiler", "harness", "kgbench", "templates")


def _domain_names() -> list[str]:
    """Every domain a test could mean: committed ones and the test fixtures."""
    fixtures = REPO / "tests" / "fixtures" / "domains"
    found = {*DOMAINS, *(p.name for p in fixtures.iterdir() if (p / "domain.yaml").exists())}
    return sorted(found)


@pytest.mark.parametrize("domain", _domain_names())
def test_no_code_names_a_domain(domain: str) -> None:
    """A domain is spec and data files only: no code (compiler, harness, kgbench, templates)
    names any domain, cardio included, so no command defaults to one either. What a domain
    declares (predicates of its own or not) is its own business."""
    word = re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(domain)}(?![A-Za-z0-9_-])")
    offenders = []
    for code_dir in CODE_DIRS:
        for src in sorted((REPO / code_dir).rglob("*")):
            if src.is_file() and src.suffix in (".py", ".j2"):
                for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
                    if word.search(line):
                        offenders.append(f"{src.relative_to(REPO)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
    if domain in DOMAINS:
        files = [p for p in (REPO / "domains" / domain).rglob("*") if p.is_file()]
        assert {p.suffix for p in files} <= {".yaml", ".csv", ".md"}, files


# Regular-expression fragments of the paper's id formats (DRG_0001, ASR_0001, EV_0001,
# SCN_0001): a prefix and an underscore before digits, or a named paper prefix before a class.
_ID_PATTERN = re.compile(r"_\[0-9\]|_\\d|\[A-Z\]\{2,5\}_|\b(?:ASR|EV|SCN|DRG|CLS)_(?:\[|\\d|\()")


def test_no_harness_module_hard_codes_an_id_pattern() -> None:
    """Issue 29 item 2: a domain declares its own id schemes (`id_schemes`), which the
    compiler owns (compiler/idschemes.py) and writes into the compiled schemas; the harness,
    the kernel and the templates read ids by position or from the compiled contract, never by
    a format of their own (the context-reader once abstained on every grounded prompt of a
    domain with ids like C-001)."""
    offenders = []
    for code_dir in ("harness", "kgbench", "templates"):
        for src in sorted((REPO / code_dir).rglob("*")):
            if src.is_file() and src.suffix in (".py", ".j2"):
                for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
                    if _ID_PATTERN.search(line):
                        offenders.append(f"{src.relative_to(REPO)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
    assert _ID_PATTERN.search(r'LINE = re.compile(r"\[(ASR_[0-9]+)\]")')  # the old reader
    assert _ID_PATTERN.search(r'EVIDENCE_ID = re.compile(r"[A-Za-z][A-Za-z0-9]*_[0-9]+")')


def test_every_command_needs_its_domain() -> None:
    """A command run without --domain says so (exit 2) instead of picking a domain."""
    from typer.testing import CliRunner

    from kgbench.cli import app

    for args in (
        ["compile"],
        ["validate"],
        ["generate"],
        ["load"],
        ["check-scenarios"],
        ["export"],
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "--domain" in result.output, (args, result.output)


def test_bulk_import_files_carry_every_property_the_load_statements_write() -> None:
    """neo4j/import/ is a complete second loading path: each CSV's header names exactly the
    properties the transactional statements write (plus the key), so `kgbench load --bulk`
    cannot drop a field that a new IR field added to the rows."""
    import csv
    import io

    from compiler.backends import neo4j as backend

    ir = validate_domain(REPO / "domains" / "cardio")
    files = {a.path: a.content for a in build_artifacts(ir) if "neo4j/import/" in a.path}

    def header(name: str) -> set[str]:
        text = files[f"neo4j/import/{name}"]
        text = text.decode() if isinstance(text, bytes) else text
        row = next(csv.reader(io.StringIO(text)))
        return {c.split(":")[0] for c in row if c.split(":")[0]}

    assert header("nodes_entities.csv") == {"id", *backend.ENTITY_PROPERTIES}
    assert header("nodes_assertions.csv") == {"id", *backend.ASSERTION_PROPERTIES}
    assert header("nodes_evidence_sources.csv") == {"id", *backend.EVIDENCE_PROPERTIES}
    assert header("relationships_direct.csv") == {"assertion_id", *backend.EDGE_PROPERTIES}
    assert header("relationships_supports.csv") == set(backend.SUPPORT_PROPERTIES)
    plan = json.loads(files["neo4j/import/import.json"])
    assert plan["multiline_fields"] is False
    assert set(plan["nodes"]) | set(plan["relationships"]) == {
        p.rsplit("/", 1)[1] for p in files if p.endswith(".csv")
    }

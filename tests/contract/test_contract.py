"""generated/<domain>/ as a versioned, typed contract: committed JSON Schemas that match the
models, compiled documents that match both, and one clear message (exit code 2) for a domain
compiled by another format version or a document edited by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from harness.compiled import CompiledDomain
from kgbench import contract
from kgbench.cli import app
from kgbench.contract.__main__ import main as regenerate

REPO = Path(__file__).resolve().parents[2]
DOMAINS = sorted(p.name for p in (REPO / "domains").iterdir() if (p / "domain.yaml").exists())
COMPILED = [
    m
    for m in contract.DOCUMENTS
    if m not in contract.HARNESS_DOCUMENTS and m is not contract.ResponseRecord
]


def test_committed_schemas_are_generated_from_the_models() -> None:
    """The drift test: `python -m kgbench.contract` would not change kgbench/contract/schemas/."""
    assert regenerate(["--check"]) == 0, "run `python -m kgbench.contract` and commit"
    for model in contract.DOCUMENTS:
        committed = (contract.SCHEMAS_DIR / contract.schema_file(model)).read_bytes()
        assert committed == contract.schema_bytes(model), model.__name__
        schema = json.loads(committed)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["x-format-version"] == model.FORMAT


@pytest.mark.parametrize("domain", DOMAINS)
def test_compiled_documents_match_their_models_and_committed_schemas(domain: str) -> None:
    root = REPO / "generated" / domain
    manifest = contract.read(contract.Manifest, root / "manifest.json", domain)
    written = {o.path for o in manifest.outputs} | {"manifest.json"}
    checked = 0
    for model in COMPILED:
        if model.PATH not in written:
            assert model is contract.Probe or model is contract.ScenarioRules, model.PATH
            continue
        data = json.loads((root / model.PATH).read_text(encoding="utf-8"))
        contract.parse(model, data, root / model.PATH, domain)
        schema = json.loads((contract.SCHEMAS_DIR / contract.schema_file(model)).read_text())
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(data))
        assert not errors, (model.PATH, errors[0].message)
        if model is not contract.Manifest:
            assert manifest.formats[model.PATH] == model.FORMAT
        checked += 1
    assert checked >= 6
    assert not (root / "cypher" / "conditions.json").exists(), "one conditions file"


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_load_plan_is_what_the_cypher_files_render(domain: str) -> None:
    """plan.json is what `kgbench load` runs; the .cypher files show the same statements."""
    root = REPO / "generated" / domain
    plan = contract.read(contract.LoadPlan, root / "neo4j/plan.json", domain)
    load = (root / "neo4j/load.cypher").read_text()
    checks = (root / "neo4j/validate.cypher").read_text()
    constraints = (root / "neo4j/constraints.cypher").read_text()
    assert plan.dialect == "neo4j-5"
    for s in plan.statements:
        assert s.cypher + ";" in load and (root / "neo4j" / s.rows).is_file()
    for c in plan.checks:
        assert c.cypher + ";" in checks and f"expected {c.expect}:" in checks
    assert all(c + ";" in constraints for c in plan.constraints)


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_entity_class_shares_its_load_statements_text(domain: str) -> None:
    """A freshly started server plans each distinct statement text once, at 50-150 ms of a
    cold JVM's time: the statements of every entity class are one text, the class label a
    statement parameter naming exactly the class of the statement's rows; each predicate's
    edge statement spells its type (a `$(...)` type in a relationship MERGE was 20x slower)."""
    root = REPO / "generated" / domain
    plan = contract.read(contract.LoadPlan, root / "neo4j/plan.json", domain)
    entities = [s for s in plan.statements if s.name.startswith("entity_")]
    assertions = [s for s in plan.statements if s.name.startswith("assertion_")]
    assert len(entities) > 1 and len(assertions) > 1
    assert len({(s.cypher, s.reconcile) for s in entities}) == 1
    assert [s.params for s in entities] == [
        {"class_label": s.name.removeprefix("entity_")} for s in entities
    ]
    for s in entities:
        rows = json.loads((root / "neo4j" / s.rows).read_text())
        assert all(r["props"]["category"] == s.params["class_label"] for r in rows)
    assert len({(s.cypher, s.reconcile) for s in assertions}) == 1
    for s in assertions:
        predicate = s.name.removeprefix("assertion_")
        assert not s.params and f"[r:{predicate} {{assertion_id: row.id}}]" in s.then[0]


@pytest.mark.parametrize(
    "value", ["Drug) DETACH DELETE (n", "Drug`", "", "1Drug", "Drug Class", "Dr\u00fcg"]
)
def test_a_load_statement_parameter_that_is_no_identifier_is_refused(
    tmp_path: Path, value: str
) -> None:
    """`$(...)` takes any string as a label or type; a plan whose parameter is not what a
    validated spec identifier can be (a hand edit, a damaged file) is refused on reading,
    naming the file and the field, before any statement reaches the server."""
    plan = json.loads((REPO / "generated/cardio/neo4j/plan.json").read_text())
    plan["statements"][0]["params"]["class_label"] = value
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    with pytest.raises(contract.IncompatibleArtifact, match=r"statements\.0\.params\.class_label"):
        contract.read(contract.LoadPlan, path, "cardio")


def test_versions_are_compatible_within_a_major_up_to_the_readers_minor() -> None:
    assert contract.compatible("1.0.0", "1.0.0")
    assert contract.compatible("1.0.3", "1.2.0")
    assert not contract.compatible("1.3.0", "1.2.0")  # written by a newer kgbench
    assert not contract.compatible("2.0.0", "1.2.0")
    assert not contract.compatible("garbage", "1.0.0")


@pytest.fixture
def compiled_copy(tmp_path: Path) -> Path:
    """A writable copy of generated/cardio under a generated/ root of its own."""
    root = tmp_path / "generated" / "cardio"
    shutil.copytree(REPO / "generated" / "cardio", root)
    return root


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_domain_compiled_by_another_format_version_is_refused_at_open(
    compiled_copy: Path,
) -> None:
    _edit(compiled_copy / "manifest.json", lambda d: d["formats"].update({"kg.json": "1.0.0"}))
    with pytest.raises(contract.IncompatibleArtifact) as err:
        CompiledDomain.open("cardio", compiled_copy.parent)
    message = str(err.value)
    assert "kg.json" in message and "compiled by an incompatible kgbench" in message
    assert "format 1.0.0" in message and "run `make compile DOMAIN=cardio`" in message


def test_a_manifest_of_the_previous_format_is_refused(compiled_copy: Path) -> None:
    """Before the contract existed, manifests had manifest_version 1.0.0 and no formats."""
    _edit(compiled_copy / "manifest.json", lambda d: d.update(manifest_version="1.0.0"))
    with pytest.raises(contract.IncompatibleArtifact, match=r"manifest\.json: compiled by an"):
        CompiledDomain.open("cardio", compiled_copy.parent)


def test_an_artifact_whose_own_version_differs_is_named(compiled_copy: Path) -> None:
    """A document read later (kg.json) checks its own format_version too."""
    _edit(compiled_copy / "kg.json", lambda d: d.update(format_version="9.0.0"))
    domain = CompiledDomain.open("cardio", compiled_copy.parent)
    with pytest.raises(contract.IncompatibleArtifact, match=r"kg\.json: compiled by .*9\.0\.0"):
        _ = domain.graph


def _score_cli(run_dir: Path, compiled: Path):
    return CliRunner().invoke(
        app, ["score", "--run-dir", str(run_dir), "--domain", str(compiled), "--bootstrap", "100"]
    )


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        (
            lambda d: d["metrics"][0].pop("kind"),
            "does not match its contract (MetricPanel 1.1.0): metrics.0.kind: Field required",
        ),
        (
            lambda d: d.update(unparseable_policy="sometimes"),
            "does not match its contract (MetricPanel 1.1.0): unparseable_policy: Input should be",
        ),
        (
            lambda d: d["metrics"][0].update(kind="vibes"),
            "metric 'intervention_accuracy' has kind 'vibes', which this kgbench does not implement",
        ),
        (lambda d: d.update(format_version="2.0.0"), "compiled by an incompatible kgbench"),
    ],
    ids=["missing field", "bad policy", "unknown kind", "other version"],
)
def test_a_hand_edited_metrics_json_is_one_message_and_exit_2(
    compiled_copy: Path, tmp_path: Path, change, expect: str
) -> None:
    _edit(compiled_copy / "metrics.json", change)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    scenarios = (compiled_copy / "scenarios" / "scenarios.jsonl").read_text().splitlines()
    (run_dir / "scenarios.jsonl").write_text(scenarios[0] + "\n")
    result = _score_cli(run_dir, compiled_copy)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, result.stderr
    assert "metrics.json" in lines[0] and expect in lines[0], lines[0]
    assert "run `make compile DOMAIN=cardio`" in lines[0]


def test_the_contract_carries_every_field_of_the_compilers_records() -> None:
    """kg.json's records are the IR's records as data: the compiler keeps fast NamedTuples and
    the contract typed models, so a field added to one and not the other fails here, not in
    a harness that silently reads a missing key."""
    from compiler import ir
    from kgbench.contract import models as contract

    for ir_record, model in (
        (ir.Assertion, contract.Assertion),
        (ir.Entity, contract.Entity),
        (ir.EvidenceSource, contract.EvidenceSource),
    ):
        missing = set(ir_record._fields) - set(model.model_fields)
        assert not missing, f"{model.__name__} lacks {sorted(missing)}"

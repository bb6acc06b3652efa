"""The probe declaration compiles into generated/<d>/probe/, and bad declarations give one
located message and exit 2 (a root that is not an entity, k below 1, bad templates...)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from compiler.api import check_domain, compile_domain
from compiler.jsonschemas import strict_violations
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def test_compiled_probe_files(cardio_probe):
    data = cardio_probe.data
    assert data["settings"]["max_depth"] == 2 and data["settings"]["path_bound"] == 6
    assert data["settings"]["concepts_per_answer"] == 3
    assert data["settings"]["path_mode"] in ("directed", "undirected")
    assert len(data["roots"]) == 20
    categories = {r["category"] for r in data["roots"]}
    assert {"Disease", "RiskFactor", "ClinicalOutcome"} <= categories
    for step in ("expand_effects", "expand_causes", "edge_check", "verify_mapping"):
        schema = cardio_probe.schema(step)
        assert strict_violations(schema) == []
        assert next(iter(schema["properties"])) == "reasoning"  # reasoning first in strict decoding
    expansion = cardio_probe.schema("expand_effects")
    assert expansion["properties"]["concepts"]["maxItems"] == 3
    jsonschema.validate({"reasoning": "r", "concepts": ["a", "b"]}, expansion)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"reasoning": "r", "concepts": ["a", "b", "c", "d"]}, expansion)


def test_prompts_render_with_the_seed_wording(cardio_probe):
    user = cardio_probe.messages(
        "expand_effects", root="Stroke", concept="Stroke", n=3, known_concepts="- Stroke"
    )[1]["content"]
    assert 'What does "Stroke" directly cause?' in user and "had not occurred" in user
    causes = cardio_probe.render("expand_causes", root="R", concept="X", n=3, known_concepts="")
    assert 'What directly causes "X"?' in causes and "without which" in causes
    system = cardio_probe.render("system")
    assert "counterfactual" in system and "cardiovascular" in system


def test_afib_roots_come_from_the_declared_rule():
    data = json.loads((REPO / "generated" / "afib" / "probe" / "probe.json").read_text())
    assert [r["id"] for r in data["roots"]] == [
        "DIS_0001", "OUT_0001", "OUT_0002", "OUT_0003", "BPR_0001", "BPR_0002", "BPR_0003",
    ]  # fmt: skip


def test_compile_is_byte_deterministic(tmp_path):
    a = compile_domain("cardio", out_root=tmp_path / "a", force=True).out_dir / "probe"
    b = compile_domain("cardio", out_root=tmp_path / "b", force=True).out_dir / "probe"
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    committed = REPO / "generated" / "cardio" / "probe"
    assert all((a / f).read_bytes() == (committed / f).read_bytes() for f in files)


@pytest.fixture
def cardio_copy(tmp_path: Path) -> Path:
    """A writable copy of domains/cardio at the same depth, so its imports resolve."""
    root = tmp_path / "domains" / "cardio"
    shutil.copytree(REPO / "domains" / "cardio", root)
    os.symlink(REPO / "spec", tmp_path / "spec")
    return root


CASES = [
    (
        "roots:\n  - DIS_0001\n  - DIS_9999\n",
        # a different number is never suggested (kgbench.suggest: ids only when written differently)
        r"probe\.yaml, line 3, field 'roots': unknown entity 'DIS_9999'; expected an entity id",
    ),
    (
        "roots: [DIS_0001]\nsettings:\n  path_bound: 0\n",
        r"probe\.yaml, line 3, field 'path_bound': 0 is less than the minimum of 1",
    ),
    (
        "roots: [DIS_0001, DIS_0001]\n",
        r"probe\.yaml, line 1, field 'roots': root 'DIS_0001' is listed twice",
    ),
    (
        "roots: [DIS_0001]\nroot_rule:\n  classes: [Disease]\n  per_class: 1\n",
        r"exactly one of 'roots' or 'root_rule'",
    ),
    (
        "root_rule:\n  classes: [Diseas]\n  per_class: 2\n",
        r"field 'classes': unknown class 'Diseas' \(did you mean 'Disease'\?\)",
    ),
    (
        "roots: [DIS_0001]\nsettings:\n  path_mode: sideways\n",
        r"field 'path_mode': expected one of directed, undirected; got 'sideways'",
    ),
    ("roots: [DIS_0001]\nseeds: 3\n", r"unknown field 'seeds'"),
]


@pytest.mark.parametrize(("text", "message"), CASES)
def test_bad_domain_probe_declarations(cardio_copy, text, message):
    (cardio_copy / "probe.yaml").write_text(text)
    with pytest.raises(UserError, match=message):
        check_domain(cardio_copy)


def test_bad_templates_in_the_spec_are_located(cardio_reference, tmp_path):
    from compiler.api import validate_domain
    from compiler.probe import check_probe

    spec = (REPO / "spec" / "declarations" / "probe.yaml").read_text()
    bad = spec.replace('What does "{{ concept }}" directly cause?', "What does {{ concep }} cause?")
    bad = bad.replace("Consider two medical concepts", "{% if %}Consider")
    bad = bad.replace(
        "reference_roles: [mechanistic, causal, adverse_effect]",
        "reference_roles: [interaction]",
    )
    (tmp_path / "probe.yaml").write_text(bad)
    domain = validate_domain("cardio")
    with pytest.raises(UserError) as info:
        check_probe(
            REPO / "domains" / "cardio" / "probe.yaml",
            tmp_path / "probe.yaml",
            {e.id: e.category for e in domain.entities},
            [c.name for c in domain.entity_classes],
            domain.predicates,
        )
    lines = str(info.value).splitlines()
    assert any(
        "field 'expand_effects': unknown template field 'concep' (did you mean 'concept'?)" in x
        for x in lines
    )
    assert any("field 'edge_check': malformed template" in x for x in lines)
    assert any("field 'reference_roles': no predicate of this domain" in x for x in lines)


def test_validate_exits_2_with_one_line_and_no_traceback(cardio_copy):
    (cardio_copy / "probe.yaml").write_text("roots: [RSK_0001, OUT_9]\n")
    result = subprocess.run(
        [sys.executable, "-c", "from kgbench.cli import app; app()", "validate", "--domain",
         str(cardio_copy)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "probe.yaml, line 1, field 'roots': unknown entity 'OUT_9'" in " ".join(
        result.stderr.split()
    )

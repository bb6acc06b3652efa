"""Issue 29 item 2: the LinkML JSON export follows the domain's declared id schemes.

A domain with its own ids (tests/fixtures/domains/t2dcare: entities drug-01, assertions CL001,
sources REF01) once exported CURIEs that failed the paper's id patterns on every id under
linkml-validate; the merged schema now carries the declared patterns, and LinkML's own
validator accepts the export (and still rejects an id outside the scheme).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from compiler.export import export_domain

REPO = Path(__file__).resolve().parents[1]
T2D = REPO / "tests" / "fixtures" / "domains" / "t2dcare"
BIN = Path(sys.executable).parent


def _linkml_validate(config: Path, data: Path) -> list[str]:
    done = subprocess.run(
        [str(BIN / "linkml-validate"), "--config", str(config), str(data)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return re.findall(r"^\[ERROR\] .*$", done.stdout, flags=re.M) if done.returncode else []


def test_the_linkml_export_of_a_domain_with_its_own_ids_validates(tmp_path: Path) -> None:
    export = export_domain(T2D, "linkml-json", tmp_path / "export")
    schema = yaml.safe_load((export.out_dir / "t2dcare.schema.yaml").read_text())
    patterns = " ".join(re.findall(r'"pattern": "([^"]*)"', json.dumps(schema)))
    assert "ASR_" not in patterns and "EV_" not in patterns and "CL[0-9]{3}" in patterns
    config = export.out_dir / "linkml-validate.yaml"
    schema_only = tmp_path / "jsonschema.yaml"
    schema_only.write_text(
        "\n".join(
            line
            for line in config.read_text().splitlines()
            if "Shacl" not in line and "shacl_path" not in line
        )
        + "\n"
    )
    data_path = export.out_dir / "t2dcare.json"
    assert _linkml_validate(schema_only, data_path) == []
    data = json.loads(data_path.read_text())
    data["assertions"][0]["assertion_id"] = "kgbench.t2dcare:ASR_0001"  # the paper's format
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    errors = _linkml_validate(schema_only, bad)
    assert errors and any("ASR_0001" in e for e in errors), errors


def test_the_kgx_export_of_the_curator_domain_keeps_its_ids(tmp_path: Path) -> None:
    """Issue 29 (done when: export): the fixture's KGX nodes and edges carry its own ids, one
    node per entity and one edge per assertion, every edge's ends among the nodes."""
    export = export_domain(T2D, "kgx", tmp_path / "kgx")
    files = {p.name: p for p in export.out_dir.rglob("*") if p.is_file()}
    nodes_file = next(p for n, p in files.items() if n.endswith("nodes.jsonl"))
    edges_file = next(p for n, p in files.items() if n.endswith("edges.jsonl"))
    nodes = [json.loads(line) for line in nodes_file.read_text().splitlines() if line]
    edges = [json.loads(line) for line in edges_file.read_text().splitlines() if line]
    entities = (T2D / "data" / "entities.csv").read_text().splitlines()[1:]
    claims = (T2D / "data" / "assertions.csv").read_text().splitlines()[1:]
    ids = {n["id"] for n in nodes}
    assert {f"kgbench.t2dcare:{line.split(',')[0]}" for line in entities} <= ids
    assert len(edges) >= len(claims)
    assert all(e["subject"] in ids and e["object"] in ids for e in edges)
    text = nodes_file.read_text() + edges_file.read_text()
    assert "ASR_" not in text and "EV_0" not in text and "CL050" in text

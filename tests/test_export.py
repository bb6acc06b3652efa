"""`kgbench export`: KGX for Biolink tools, LinkML's JSON form for LinkML's own validators.

Checked with the real consumers: `kgx validate` (offline, against the packaged Biolink Model,
through tools/kgx/) on the cardio and afib exports, and `linkml-validate` (its JSON Schema and
SHACL plugins) on the LinkML JSON form, which must reject exactly what kgbench's own
validator rejects on the same change to the tables.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compiler.api import check_domain, validate_domain
from compiler.export import artifacts, export_domain
from compiler.export.linkml_json import graph
from kgbench.cli import app
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def cardio():
    return validate_domain("cardio")


@pytest.fixture(scope="module")
def afib():
    return validate_domain("afib")


def _jsonl(art) -> list[dict]:
    return [json.loads(line) for line in art.content.decode().splitlines()]


def _kgx(domain) -> dict[str, list[dict]]:
    arts = {a.path: a for a in artifacts(domain, "kgx", Path("unused"))}
    return {
        "nodes": _jsonl(arts[f"{domain.name}_nodes.jsonl"]),
        "edges": _jsonl(arts[f"{domain.name}_edges.jsonl"]),
        "tsv_nodes": arts[f"{domain.name}_nodes.tsv"].content.decode().splitlines(),
        "prefixes": json.loads(arts["prefixes.json"].content),
    }


# --- KGX content --------------------------------------------------------------------------


def test_kgx_nodes_and_edges(cardio) -> None:
    kgx = _kgx(cardio)
    nodes = {n["id"]: n for n in kgx["nodes"]}
    edges = {e["id"]: e for e in kgx["edges"]}
    assert len(nodes) == len(cardio.entities) + len(cardio.evidence_sources)
    members = sum(len(c.member_ids) for c in cardio.intervention_classes)
    assert len(edges) == len(cardio.assertions) + members
    assert all(i.startswith("kgbench.cardio:") for i in [*nodes, *edges])
    assert kgx["prefixes"]["kgbench.cardio"] == "https://w3id.org/kgbench/cardio/"
    drug = nodes["kgbench.cardio:DRG_0001"]
    assert drug["category"] == ["biolink:Drug"] and drug["xref"] == ["DRUGBANK:DB00722"]
    assert nodes["kgbench.cardio:INT_0001"]["category"] == ["biolink:Treatment"]
    trial = nodes["kgbench.cardio:EV_0004"]
    # no PMID and no journal ISSN: a Publication, not an Article (which requires published_in)
    assert trial["category"] == ["biolink:Publication"] and trial["publication_type"] == [
        "MESH:D016430"
    ]
    # the paper's worked example: ASR_0019 lisinopril TARGETS (inhibits) ACE, ASR_0010 ACE
    # PARTICIPATES_IN the RAAS
    target = edges["kgbench.cardio:ASR_0019"]
    assert (
        target["predicate"],
        target["qualified_predicate"],
        target["object_aspect_qualifier"],
        target["object_direction_qualifier"],
    ) == ("biolink:affects", "biolink:causes", "activity", "decreased")
    assert edges["kgbench.cardio:ASR_0010"]["predicate"] == "biolink:actively_involved_in"
    raises = edges["kgbench.cardio:ASR_0011"]
    assert (raises["predicate"], raises["object_direction_qualifier"]) == (
        "biolink:affects",
        "increased",
    )
    for a in cardio.assertions:
        e = edges[cardio.curie(a.assertion_id)]
        assert e["knowledge_level"] and e["agent_type"], a.assertion_id
        assert e["primary_knowledge_source"] == "infores:kgbench"
        if a.population_id:
            assert e["population_context_qualifier"] == cardio.curie(a.population_id)
    supported = {}
    for s in cardio.supports:
        supported.setdefault(s.assertion_id, []).append(cardio.curie(s.evidence_id))
    for aid, sources in supported.items():
        e = edges[cardio.curie(aid)]
        assert e["publications"] == e["has_evidence"] == sorted(sources)
        assert all(s in nodes for s in sources)
    assert kgx["tsv_nodes"][0].split("\t")[:3] == ["id", "category", "name"]


def test_kgx_writes_dose_adjustment_as_related_to_from_the_drug(afib) -> None:
    """Biolink has no dose-adjustment predicate: the claim is a `related_to` edge from the drug
    to the population, naming itself in kgbench_predicate, never "renal impairment affects
    rivaroxaban" (an `affects` with subject and object swapped, ecosystem review E2)."""
    edges = {e["id"]: e for e in _kgx(afib)["edges"]}
    rows = [a for a in afib.assertions if a.predicate == "REQUIRES_DOSE_ADJUSTMENT_IN"]
    assert rows
    for a in rows:
        e = edges[afib.curie(a.assertion_id)]
        assert e["predicate"] == "biolink:related_to"
        assert e["kgbench_predicate"] == "REQUIRES_DOSE_ADJUSTMENT_IN"
        assert (e["subject"], e["object"]) == (afib.curie(a.subject_id), afib.curie(a.object_id))
        assert not {"object_direction_qualifier", "negated"} & set(e)
    ddi = [a for a in afib.assertions if a.predicate == "INTERACTS_WITH"]
    assert {edges[afib.curie(a.assertion_id)]["predicate"] for a in ddi} == {
        "biolink:pharmacologically_interacts_with"
    }
    procedures = [e for e in afib.entities if e.category == "Procedure"]
    nodes = {n["id"]: n for n in _kgx(afib)["nodes"]}
    assert {nodes[afib.curie(e.id)]["category"][0] for e in procedures} == {"biolink:Treatment"}


def test_exports_are_deterministic(tmp_path: Path) -> None:
    for fmt in ("kgx", "linkml-json"):
        a = export_domain("afib", fmt, tmp_path / "a")
        b = export_domain("afib", fmt, tmp_path / "b")
        for name in a.files:
            if name == "linkml-validate.yaml":  # names its own folder
                continue
            assert (a.out_dir / name).read_bytes() == (b.out_dir / name).read_bytes(), name


def test_export_command(tmp_path: Path) -> None:
    out = tmp_path / "kgx"
    result = CliRunner().invoke(
        app, ["export", "--domain", "afib", "--format", "kgx", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "afib_edges.jsonl",
        "afib_edges.tsv",
        "afib_nodes.jsonl",
        "afib_nodes.tsv",
        "prefixes.json",
    ]
    bad = CliRunner().invoke(app, ["export", "--domain", "afib", "--format", "rdf"])
    assert bad.exit_code == 2 and "unknown export format 'rdf'" in bad.output


def test_export_of_bad_input_writes_nothing(mini_copy: Path, tmp_path: Path) -> None:
    path = mini_copy / "schema.yaml"
    path.write_text(
        path.read_text().replace("biolink:has_adverse_event", "biolink:has_side_effekt")
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["export", "--domain", str(mini_copy), "--out", str(out)])
    assert result.exit_code == 2
    assert re.search(
        r"schema\.yaml, line \d+, field 'meaning': predicate MAY_CAUSE_ADVERSE_EFFECT: "
        r"'biolink:has_side_effekt' is not a predicate of the Biolink Model 4\.4\.6",
        result.output,
    ), result.output
    assert not out.exists()


# --- kgx validate, offline ----------------------------------------------------------------


def _kgx_tools():
    from tools.kgx import validate as kgx_validate

    if not kgx_validate.KGX_PYTHON.exists():
        if os.environ.get("KGBENCH_REQUIRE_KGX"):
            pytest.fail(f"{kgx_validate.KGX_PYTHON} is missing (make kgx-venv)")
        pytest.skip(".venv-kgx is not installed (make kgx-venv)")
    return kgx_validate


@pytest.mark.parametrize("domain", ["cardio", "afib"])
def test_kgx_validate_reports_no_error(domain: str, tmp_path: Path) -> None:
    kgx_validate = _kgx_tools()
    result = export_domain(domain, "kgx", tmp_path)
    for fmt in ("tsv", "jsonl"):
        report = kgx_validate.run_kgx_validate(result.out_dir, domain, fmt)
        assert kgx_validate.count(report) == 0, json.dumps(report, indent=1)[:3000]
        assert kgx_validate.count(report, "WARNING") == 0, json.dumps(report, indent=1)[:3000]


def test_kgx_validate_is_really_checking(tmp_path: Path) -> None:
    """Negative controls: a missing knowledge_level and, without the domain's declared
    prefix, the local CURIEs are what kgx reports."""
    kgx_validate = _kgx_tools()
    result = export_domain("afib", "kgx", tmp_path)
    edges = (tmp_path / "afib_edges.jsonl").read_text().splitlines()
    first = json.loads(edges[0])
    del first["knowledge_level"]
    (tmp_path / "afib_edges.jsonl").write_text("\n".join([json.dumps(first), *edges[1:]]) + "\n")
    report = kgx_validate.run_kgx_validate(result.out_dir, "afib", "jsonl")
    assert "Required edge property 'knowledge_level' is missing" in json.dumps(report)
    report = kgx_validate.run_kgx_validate(result.out_dir, "afib", "tsv", extra_prefixes=False)
    messages = [m for msgs in report["ERROR"].values() for m in msgs]
    assert messages and all("CURIE prefix 'kgbench.afib'" in m for m in messages)


# --- LinkML's own validators --------------------------------------------------------------

MUTATIONS = {"ASR_0019": ("predicate", "TARGETZ"), "ASR_0010": ("subject_id", "PRT_9999")}


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


def _slice(data: dict, keep: set[str]) -> dict:
    """The assertions `keep` with everything they reference: a small but complete graph."""
    out = copy.deepcopy(data)
    out["assertions"] = [a for a in data["assertions"] if a["assertion_id"] in keep]
    refs = {
        a[k]
        for a in out["assertions"]
        for k in ("subject_id", "object_id", "population_id")
        if k in a
    }
    out["assertion_evidence"] = [s for s in data["assertion_evidence"] if s["assertion_id"] in keep]
    sources = {s["evidence_id"] for s in out["assertion_evidence"]}
    out["evidence_sources"] = [e for e in data["evidence_sources"] if e["evidence_id"] in sources]
    for e in out["evidence_sources"]:
        refs |= set(e.get("studied_interventions", ())) | set(e.get("studied_populations", ()))
    out["entities"] = [e for e in data["entities"] if e["id"] in refs]
    out["intervention_class_members"] = []
    return out


def test_linkml_validate_rejects_what_kgbench_rejects(tmp_path: Path, cardio_copy: Path) -> None:
    export = export_domain("cardio", "linkml-json", tmp_path / "export")
    config = export.out_dir / "linkml-validate.yaml"
    data = json.loads((export.out_dir / "cardio.json").read_text())
    c = {k: f"kgbench.cardio:{k}" for k in MUTATIONS}

    # 1. the whole graph, by LinkML's JSON Schema plugin: the clean export passes, an unknown
    #    predicate is rejected by the domain's narrowing of `predicate` to its enum
    schema_only = tmp_path / "jsonschema.yaml"
    schema_only.write_text(
        "\n".join(
            line
            for line in config.read_text().splitlines()
            if "Shacl" not in line and "shacl_path" not in line
        )
        + "\n"
    )
    assert _linkml_validate(schema_only, export.out_dir / "cardio.json") == []
    bad = copy.deepcopy(data)
    for a in bad["assertions"]:
        if a["assertion_id"] == c["ASR_0019"]:
            a["predicate"] = "TARGETZ"
    (tmp_path / "bad_predicate.json").write_text(json.dumps(bad))
    errors = _linkml_validate(schema_only, tmp_path / "bad_predicate.json")
    index = [a["assertion_id"] for a in bad["assertions"]].index(c["ASR_0019"])
    assert len(errors) == 1 and "'TARGETZ' is not one of" in errors[0]
    assert f"in /assertions/{index}/predicate" in errors[0]
    linkml_found = {("ASR_0019", "predicate")}

    # 2. references, by LinkML's SHACL plugin (both plugins, as the exported config runs
    #    them) on a slice of the export around the two assertions: a dangling subject_id
    piece = _slice(data, set(c.values()))
    (tmp_path / "slice.json").write_text(json.dumps(piece))
    assert _linkml_validate(config, tmp_path / "slice.json") == []
    for a in piece["assertions"]:
        if a["assertion_id"] == c["ASR_0010"]:
            a["subject_id"] = "kgbench.cardio:PRT_9999"
    (tmp_path / "dangling.json").write_text(json.dumps(piece))
    errors = "\n".join(_linkml_validate(config, tmp_path / "dangling.json"))
    details = subprocess.run(
        [str(BIN / "linkml-validate"), "--config", str(config), str(tmp_path / "dangling.json")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    ).stdout
    assert errors and "Value does not conform to Shape kgbench:Entity" in details
    assert "focusNode https://w3id.org/kgbench/cardio/ASR_0010" in details
    assert "value https://w3id.org/kgbench/cardio/PRT_9999" in details
    assert "resultPath https://w3id.org/biolink/vocab/subject" in details
    linkml_found.add(("ASR_0010", "subject_id"))

    # 3. kgbench's own validator (the default path) on the same change to the CSV table
    table = cardio_copy / "data" / "assertions.csv"
    lines = table.read_text().splitlines()
    for i, line in enumerate(lines):
        aid = line.split(",", 1)[0]
        if aid == "ASR_0019":
            lines[i] = line.replace(",TARGETS,", ",TARGETZ,", 1)
        elif aid == "ASR_0010":
            lines[i] = line.replace(",PRT_0001,", ",PRT_9999,", 1)
    table.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError) as err:  # both problems, one capped UserErrors
        check_domain(cardio_copy)
    rows = {i + 1: line.split(",", 1)[0] for i, line in enumerate(lines)}
    ours = {
        (rows[int(m.group(1))], m.group(2))
        for m in re.finditer(r"assertions\.csv, line (\d+), field '(\w+)'", str(err.value))
    }
    assert ours == linkml_found, str(err.value)
    assert "unknown predicate 'TARGETZ' (did you mean 'TARGETS'?)" in str(err.value)
    assert "unknown entity 'PRT_9999'" in str(err.value)


def test_linkml_json_has_the_domain_graph_shape(cardio) -> None:
    data = graph(cardio)
    assert len(data["entities"]) == len(cardio.entities)
    assertion = next(a for a in data["assertions"] if a["assertion_id"].endswith("ASR_0019"))
    assert assertion["subject_id"] == "kgbench.cardio:DRG_0001"
    assert assertion["validated"] is True and isinstance(assertion["confidence"], float)
    assert assertion["knowledge_level"] == "knowledge_assertion"


@pytest.fixture
def cardio_copy(tmp_path: Path) -> Path:
    """A writable copy of domains/cardio at the same depth, so its imports resolve."""
    root = tmp_path / "c" / "domains" / "cardio"
    shutil.copytree(REPO / "domains" / "cardio", root)
    os.symlink(REPO / "spec", tmp_path / "c" / "spec")
    return root

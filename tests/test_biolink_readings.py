"""The KGX export says what each claim means in Biolink (docs/biolink-mapping.md).

Hand-made cases, including the "no" ones: a smaller-benefit modifier is never exported as a
sensitivity or a therapeutic response, a null result never as an effect, a dose adjustment
never as `affects`; the compiler refuses a reading whose terms state the opposite sign; and
KGX's in-memory transform loses exactly the claims that share subject, predicate and object,
never one that says something else than its survivor.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from compiler.api import check_domain, validate_domain
from compiler.backends import kgx
from compiler.biolink_readings import Reading, choose, parse_reading, sign_conflicts
from compiler.export import artifacts, export_domain
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[1]
TABLE = REPO / "docs" / "biolink-mapping.md"
QUALIFIERS = (
    "qualified_predicate",
    "object_aspect_qualifier",
    "object_direction_qualifier",
    "response_context_qualifier",
)
CONDITION_TEXT = {
    "event": "event, intervention",
    "risk_event": "event, not intervention",
    "increase": "increase",
    "decrease": "decrease",
    "default": "default",
}


@pytest.fixture(scope="module")
def domains():
    return {name: validate_domain(name) for name in ("cardio", "afib")}


def _edges(domain) -> dict[str, dict]:
    arts = {a.path: a for a in artifacts(domain, "kgx", Path("unused"))}
    lines = arts[f"{domain.name}_edges.jsonl"].content.decode().splitlines()
    return {json.loads(line)["id"].split(":", 1)[1]: json.loads(line) for line in lines}


def _nodes(domain) -> dict[str, dict]:
    arts = {a.path: a for a in artifacts(domain, "kgx", Path("unused"))}
    lines = arts[f"{domain.name}_nodes.jsonl"].content.decode().splitlines()
    return {json.loads(line)["id"].split(":", 1)[1]: json.loads(line) for line in lines}


def _table() -> dict[tuple[str, str], tuple[str, frozenset]]:
    """(kgbench predicate, condition) -> (Biolink predicate, qualifiers) from the docs table."""
    rows = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not re.fullmatch(r"[A-Z_]+", cells[0]):
            continue
        quals = frozenset(
            tuple(x.strip() for x in q.split(":", 1)) for q in cells[3].split(";") if q.strip()
        )
        rows[(cells[0], cells[1])] = (cells[2], quals)
    return rows


def _terms(edge: dict) -> tuple[str, frozenset]:
    return edge["predicate"], frozenset((q, edge[q]) for q in QUALIFIERS if q in edge)


# --- the table holds the export -----------------------------------------------------------


def test_every_declared_reading_is_the_documented_one(domains) -> None:
    table = _table()
    seen = set()
    for domain in domains.values():
        for predicate, readings in domain.biolink_readings:
            for r in readings:
                key = (predicate, CONDITION_TEXT[r.condition])
                seen.add(key)
                assert key in table, f"{domain.name}: {key} is not in {TABLE.name}"
                assert table[key] == (r.predicate, frozenset(r.qualifiers)), key
    assert {k for k in table if k[0] != "MEMBER_OF"} == seen  # no stale row either


def test_every_exported_edge_is_a_row_of_the_table(domains) -> None:
    documented = {(p, *terms) for (p, _), terms in _table().items()}
    for domain in domains.values():
        for eid, e in _edges(domain).items():
            assert (e["kgbench_predicate"], *_terms(e)) in documented, (domain.name, eid, e)


# --- what the edges say -------------------------------------------------------------------


def test_a_smaller_benefit_is_resistance_never_sensitivity_or_therapeutic_response(
    domains,
) -> None:
    cardio = domains["cardio"]
    edges = _edges(cardio)
    smaller = [a for a in cardio.assertions if a.predicate == "MODIFIES_EFFECT_OF"]
    assert {a.assertion_id for a in smaller if a.direction == "decrease"} == {
        "ASR_0249",
        "ASR_0250",
        "ASR_0253",
        "ASR_0254",
    }
    for a in smaller:
        e = edges[a.assertion_id]
        assert "response_context_qualifier" not in e
        if a.direction == "decrease":
            assert e["predicate"] == "biolink:associated_with_resistance_to"
        else:
            assert e["predicate"] == "biolink:associated_with_sensitivity_to"
        assert e["subject"] == cardio.curie(a.subject_id)  # the population, not the drug


def test_a_null_result_is_never_readable_as_an_effect(domains) -> None:
    effect_terms = {"biolink:affects", "biolink:preventative_for_condition", "biolink:treats"}
    for domain in domains.values():
        edges = _edges(domain)
        nulls = [a for a in domain.assertions if a.predicate == "HAS_NO_EFFECT_ON"]
        assert nulls
        for a in nulls:
            e = edges[a.assertion_id]
            assert e["predicate"] == "biolink:studied_to_treat"
            assert e["predicate"] not in effect_terms
            assert not {"negated", "object_direction_qualifier"} & set(e)
            assert e["causal_status"] == "no_effect"


def test_event_risk_and_existing_quantities_read_differently(domains) -> None:
    cardio = domains["cardio"]
    edges = _edges(cardio)
    by = {}
    for a in cardio.assertions:
        by.setdefault((a.subject_id, a.predicate, a.object_id), a)
    # lisinopril lowers blood pressure (an existing quantity, declared event: false) ...
    bp = [a for a in cardio.assertions if a.object_id == "OUT_0001" and a.direction == "decrease"]
    assert bp and all(edges[a.assertion_id]["predicate"] == "biolink:affects" for a in bp)
    assert {edges[a.assertion_id]["object_direction_qualifier"] for a in bp} == {"decreased"}
    # ... and prevents stroke (an event): never `affects` for the risk of a future event
    stroke = [
        a
        for a in cardio.assertions
        if a.object_id == "OUT_0004" and a.predicate == "CAUSES_DECREASE_IN"
    ]
    assert stroke
    for a in stroke:
        assert edges[a.assertion_id]["predicate"] == "biolink:preventative_for_condition"
    # a risk factor raising an event contributes to it; nothing exports event risk as affects
    events = {e.id for e in cardio.entities if e.category in cardio.event_classes} - {
        "OUT_0001",
        "OUT_0010",
    }
    for a in cardio.assertions:
        e = edges[a.assertion_id]
        if a.predicate.startswith("CAUSES_") and a.object_id in events:
            assert e["predicate"] != "biolink:affects", a.assertion_id
    smoking = [
        a
        for a in cardio.assertions
        if a.subject_id == "RSK_0004" and a.predicate == "CAUSES_INCREASE_IN"
    ]
    assert any(edges[a.assertion_id]["predicate"] == "biolink:contributes_to" for a in smoking)


def test_a_signed_association_keeps_its_sign(domains) -> None:
    cardio = domains["cardio"]
    edges = _edges(cardio)
    signed = [a for a in cardio.assertions if a.predicate == "ASSOCIATED_WITH"]
    assert {a.direction for a in signed} == {"increase", "decrease"}
    for a in signed:
        word = "increased" if a.direction == "increase" else "decreased"
        assert edges[a.assertion_id]["predicate"] == f"biolink:associated_with_{word}_likelihood_of"


def test_the_nine_entities_have_the_class_their_data_supports(domains) -> None:
    expected = {
        "cardio": {
            "BPR_0007": "biolink:PhenotypicFeature",
            "RSK_0004": "biolink:Behavior",
            "RSK_0005": "biolink:Behavior",
            "RSK_0007": "biolink:Behavior",
            "RSK_0008": "biolink:Behavior",
            "BPR_0001": "biolink:BiologicalProcess",  # no: an undeclared one keeps its class
        },
        "afib": {
            "BPR_0007": "biolink:ClinicalFinding",
            "BPR_0008": "biolink:PhenotypicFeature",
            "RSK_0001": "biolink:OrganismAttribute",
            "RSK_0007": "biolink:PhenotypicSex",
        },
    }
    for name, categories in expected.items():
        nodes = _nodes(domains[name])
        for eid, category in categories.items():
            assert nodes[eid]["category"] == [category], (name, eid)
        assert not [n for n in nodes.values() if n["category"] == ["biolink:Article"]]


# --- readings, by hand --------------------------------------------------------------------


def test_choose_reads_condition_by_condition() -> None:
    readings = (
        Reading("event", "biolink:preventative_for_condition"),
        Reading("risk_event", "biolink:affects_likelihood_of"),
        Reading("default", "biolink:affects"),
    )
    assert choose(readings, "decrease", True, True).predicate == (
        "biolink:preventative_for_condition"
    )
    assert choose(readings, "decrease", False, True).predicate == "biolink:affects_likelihood_of"
    assert choose(readings, "decrease", True, False).predicate == "biolink:affects"


def test_a_reading_that_states_the_opposite_sign_is_found() -> None:
    positive = parse_reading(
        "decrease",
        "biolink:associated_with_response_to; response_context_qualifier: therapeutic_response",
    )
    assert sign_conflicts(positive, "decrease") == [
        "response_context_qualifier therapeutic_response"
    ]
    assert sign_conflicts(positive, "increase") == []
    assert sign_conflicts(Reading("event", "biolink:preventative_for_condition"), "increase")
    assert not sign_conflicts(Reading("event", "biolink:preventative_for_condition"), "decrease")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_compiler_refuses_a_reading_of_the_opposite_sign(mini_copy: Path) -> None:
    _edit(
        mini_copy / "schema.yaml",
        '          biolink_qualifier: "object_direction_qualifier: decreased"\n',
        '          biolink_qualifier: "object_direction_qualifier: decreased"\n'
        '          biolink_if_event: "biolink:predisposes_to_condition"\n',
    )
    with pytest.raises(UserError) as err:
        check_domain(mini_copy)
    text = str(err.value)
    assert re.search(
        r"schema\.yaml, line \d+, field 'biolink_if_event': predicate CAUSES_DECREASE_IN "
        r"\(biolink_if_event\): the reading for direction decrease says 'predicate "
        r"biolink:predisposes_to_condition'",
        text,
    ), text


def test_the_compiler_refuses_an_entity_category_that_is_a_mixin(mini_copy: Path) -> None:
    text = (mini_copy / "domain.yaml").read_text()
    entity = re.search(r"^(DIS_\d+),", (mini_copy / "data" / "entities.csv").read_text(), re.M)
    assert entity
    (mini_copy / "domain.yaml").write_text(
        text + "biolink:\n  entities:\n"
        f"    - {{id: {entity.group(1)}, category: biolink:ChemicalOrDrugOrTreatment, "
        "note: test}\n"
    )
    with pytest.raises(UserError, match=r"field 'entities'.*ChemicalOrDrugOrTreatment"):
        check_domain(mini_copy)


# --- KGX's in-memory transform ------------------------------------------------------------


@pytest.mark.parametrize("domain", ["cardio", "afib"])
def test_kgx_in_memory_round_trip_loses_only_same_reading_population_claims(
    domain: str, tmp_path: Path
) -> None:
    """Every id KGX's in-memory transform drops is one the subject-predicate-object keying
    predicts from the export (claims of the same reading in different populations), and none
    is swallowed by a claim of another predicate, sign or null result (ecosystem review E9:
    apixaban lowering stroke disappeared behind apixaban raising it with mechanical valves)."""
    from tools.kgx import roundtrip, validate

    if not validate.KGX_PYTHON.exists():
        pytest.skip(".venv-kgx is not installed (make kgx-venv)")
    result = export_domain(domain, "kgx", tmp_path)
    report = roundtrip.roundtrip(result.out_dir, domain)
    edges, _ = roundtrip.edges_of(result.out_dir / f"{domain}_edges.tsv")
    groups: dict[tuple, list[dict]] = {}
    for e in edges.values():
        groups.setdefault(roundtrip.spo_of(e), []).append(e)
    predicted = sum(len(g) - 1 for g in groups.values())
    assert len(report["lost"]) == predicted
    assert report["edges_in"] - report["edges_out"] == predicted
    assert report["changed"] == []
    for eid in report["lost"]:
        group = groups[roundtrip.spo_of(edges[eid])]
        signs = {
            (e["kgbench_predicate"], e["direction"], e.get("object_direction_qualifier", ""))
            for e in group
        }
        assert len(signs) == 1, (eid, signs)  # never an opposite sign or a null result
        assert len({e["population_context_qualifier"] for e in group}) == len(group), eid


@pytest.mark.parametrize("domain", ["cardio", "afib"])
def test_kgx_in_memory_round_trip_keyed_by_edge_id_loses_nothing(
    domain: str, tmp_path: Path
) -> None:
    """The export itself is lossless: with KGX's in-memory graph keyed by edge id (the fix
    biolink/kgx#413 asks for, tools/kgx/kgx_offline.py --key-by-id) every assertion id comes
    back once, with every meaning field as exported, so what stock KGX 2.7.0 loses (the test
    above) is its subject-predicate-object keying alone."""
    from tools.kgx import roundtrip, validate

    if not validate.KGX_PYTHON.exists():
        pytest.skip(".venv-kgx is not installed (make kgx-venv)")
    result = export_domain(domain, "kgx", tmp_path)
    report = roundtrip.roundtrip(result.out_dir, domain, key_by_id=True)
    edges, rows = roundtrip.edges_of(result.out_dir / f"{domain}_edges.tsv")
    assert rows == len(edges) == report["edges_in"] == report["edges_out"]
    assert (report["lost"], report["changed"], report["meaning_fused"]) == ([], [], [])
    # the columns KGX did not write back are ones no edge fills
    dropped = set(report["columns_dropped"])
    assert not [eid for eid, e in edges.items() if any(e.get(c) for c in dropped)]


# --- per-entity declarations against the predicate's domain and range --------------------


def _cardio_with(tmp_path: Path, declaration: str) -> Path:
    """A copy of domains/cardio whose domain.yaml declares one more Biolink entity reading."""
    import os
    import shutil

    root = tmp_path / "c" / "domains" / "cardio"
    shutil.copytree(REPO / "domains" / "cardio", root)
    os.symlink(REPO / "spec", tmp_path / "c" / "spec")
    anchor = "    - {id: OUT_0010, event: false,"
    _edit(root / "domain.yaml", anchor, f"    - {declaration}\n{anchor}")
    return root


def test_an_event_override_is_checked_against_the_reading_it_selects(tmp_path: Path) -> None:
    """Declaring a process an event makes "sacubitril/valsartan lowers RAAS activity"
    (ASR_0129) read `preventative_for_condition`, whose range (disease or phenotypic
    feature) a BiologicalProcess is not: one located error naming the entity and the claim."""
    domain = _cardio_with(tmp_path, '{id: BPR_0001, event: true, note: "test"}')
    with pytest.raises(UserError) as err:
        validate_domain(domain)
    text = str(err.value)
    assert re.search(
        r"domain\.yaml, line \d+, field 'entities': entity 'BPR_0001' is declared "
        r"biolink:BiologicalProcess, outside the Biolink range 'disease or phenotypic feature' "
        r"of biolink:preventative_for_condition, which exports its claim ASR_0129 \(object\)",
        text,
    ), text


def test_an_event_override_the_reading_admits_compiles(tmp_path: Path) -> None:
    """The answer "no": a risk factor (LDL cholesterol, a phenotypic feature) declared an
    event is in the range of preventative_for_condition, so the statin claims on it
    (ASR_0156, ASR_0157) read that way and the domain compiles. (Only a test: LDL is a
    quantity, which is why cardio does not declare it.)"""
    domain = validate_domain(_cardio_with(tmp_path, '{id: RSK_0001, event: true, note: "t"}'))
    edges = {e["id"]: e for e in kgx.edges(domain)}
    lowered = [a for a in domain.assertions if a.assertion_id in ("ASR_0156", "ASR_0157")]
    assert len(lowered) == 2
    for a in lowered:
        assert edges[domain.curie(a.assertion_id)]["predicate"] == (
            "biolink:preventative_for_condition"
        )

"""SSSOM match types on cross-references: the xrefs table may say a term is broader,
narrower or close rather than the entity's own concept, and the exports then never present
it as an equivalent id (Biolink `xref`, LinkML `xrefs`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compiler.api import validate_domain
from compiler.backends import kgx
from compiler.export import linkml_json
from kgbench.errors import UserErrors

ROWS = "entity_id,xref,match,match_source\n"


def write_xrefs(domain: Path, rows: str) -> None:
    """Give the mini domain an xrefs table holding `rows`."""
    (domain / "data" / "xrefs.csv").write_text(ROWS + rows)
    config = domain / "domain.yaml"
    text = config.read_text()
    anchor = "  intervention_classes: data/intervention_classes.csv\n"
    config.write_text(text.replace(anchor, anchor + "  xrefs: data/xrefs.csv\n"))


def node(domain, entity_id: str) -> dict:
    return next(n for n in kgx.nodes(domain) if n["id"] == domain.curie(entity_id))


def test_cardio_broad_xrefs_are_not_equivalent_ids() -> None:
    """The two xrefs the 2026-12 ecosystem review found broader than their entities."""
    cardio = validate_domain("cardio")
    essential = node(cardio, "DIS_0001")
    assert "MESH:D006973" not in essential["xref"] and "MONDO:0001134" in essential["xref"]
    assert essential["kgbench_broad_match"] == ["MESH:D006973"]
    smoking = node(cardio, "RSK_0004")
    assert "xref" not in smoking, "its only xref is broader: it has no equivalent id"
    assert smoking["kgbench_broad_match"] == ["MESH:D012907"]
    tree = {e["id"]: e for e in linkml_json.graph(cardio)["entities"]}
    assert "MESH:D006973" not in tree[cardio.curie("DIS_0001")]["xrefs"]
    assert "xrefs" not in tree[cardio.curie("RSK_0004")]
    # an xref with no declared match stays exact
    with_xref = [n for n in kgx.nodes(cardio) if n.get("xref")]
    assert len(with_xref) > 100 and all(
        "kgbench_close_match" not in n and "kgbench_narrow_match" not in n for n in with_xref
    )


def test_each_match_type_lands_in_its_own_column(mini_copy: Path) -> None:
    write_xrefs(
        mini_copy,
        "DRG_0001,CHEBI:43755,exact,\n"
        + "DRG_0001,MESH:D000806,broad,a class of the drug (the test's own judgement)\n"
        + "DRG_0002,DRUGBANK:DB00381,close,restating a row's xref qualifies it (test)\n"
        + "DRG_0002,MESH:D002121,narrow,test\n",
    )
    mini = validate_domain(mini_copy)
    lisinopril, amlodipine = node(mini, "DRG_0001"), node(mini, "DRG_0002")
    assert lisinopril["xref"] == ["DRUGBANK:DB00722", "CHEBI:43755"]
    assert lisinopril["kgbench_broad_match"] == ["MESH:D000806"]
    assert "xref" not in amlodipine
    assert amlodipine["kgbench_close_match"] == ["DRUGBANK:DB00381"]
    assert amlodipine["kgbench_narrow_match"] == ["MESH:D002121"]
    assert mini.inexact_xrefs[0] == (
        "DRG_0001",
        "MESH:D000806",
        "broad",
        "a class of the drug (the test's own judgement)",
    )
    tsv = kgx.tsv_bytes(kgx.NODE_COLUMNS, kgx.nodes(mini)).decode()
    assert "\tDRUGBANK:DB00722|CHEBI:43755\tMESH:D000806\t\t\t" in tsv


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("DRG_0001,MESH:D000806,broad,\n", r"a broad match needs its match_source"),
        ("DRG_0001,MESH:D000806,exactly,x\n", r"'match'.*exactly"),
        ("DRG_0001,DRUGBANK:DB00722,exact,\n", r"'DRUGBANK:DB00722' is already an xref"),
    ],
)
def test_bad_match_rows_are_located(mini_copy: Path, rows: str, message: str) -> None:
    write_xrefs(mini_copy, rows)
    with pytest.raises(UserErrors) as err:
        validate_domain(mini_copy)
    text = str(err.value)
    assert "xrefs.csv, line 2" in text, text
    assert re.search(message, text), text


def test_coverage_counts_an_entity_with_only_a_broader_term_as_not_exactly_covered() -> None:
    """tools/xref_coverage.py: cigarette smoking (RSK_0004) cites only MeSH "Smoking", a
    broader term, so it counts under "any xref" but not under "an exact match"; essential
    hypertension keeps its exact MONDO id and counts under both."""
    from tools.xref_coverage import coverage

    report = coverage("cardio")
    risk, disease = report["per_class"]["RiskFactor"], report["per_class"]["Disease"]
    assert risk["any"] - risk["exact"] == 1
    assert disease["any"] == disease["exact"]
    assert report["inexact"] == 2
    assert report["raw_any"] - report["raw_exact"] == 1

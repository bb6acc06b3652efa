"""A reload removes a class label that a node's category no longer names (load.prune, one
statement with a dynamic label for every class), on the real cardio graph in Neo4j, and
leaves every label a category names."""

from __future__ import annotations

import neo4j
import pytest

from harness.compiled import CompiledDomain
from harness.graph.load import load

pytestmark = pytest.mark.neo4j


def _labels(driver: neo4j.Driver, label: str, node_id: str) -> set[str]:
    records, _, _ = driver.execute_query(
        f"MATCH (n:{label} {{id: $id}}) RETURN labels(n) AS labels", id=node_id
    )
    return set(records[0]["labels"])


def test_a_stray_class_label_goes_and_the_categorys_own_stays(neo4j_driver):
    cardio = CompiledDomain.open("cardio")
    load(neo4j_driver, cardio)
    drug = next(e["id"] for e in cardio.graph["entities"] if e["category"] == "Drug")
    disease = next(e["id"] for e in cardio.graph["entities"] if e["category"] == "Disease")
    neo4j_driver.execute_query(
        f"MATCH (n:{cardio.label}) WHERE n.id IN [$drug, $disease] SET n:Disease:Drug",
        drug=drug,
        disease=disease,
    )
    assert {"Drug", "Disease"} <= _labels(neo4j_driver, cardio.label, drug)
    load(neo4j_driver, cardio)
    # yes: the label the category does not name is removed
    assert "Disease" not in _labels(neo4j_driver, cardio.label, drug)
    assert "Drug" not in _labels(neo4j_driver, cardio.label, disease)
    # no: the category's own label (and the domain label) stay
    assert {"Drug", cardio.label} <= _labels(neo4j_driver, cardio.label, drug)
    assert {"Disease", cardio.label} <= _labels(neo4j_driver, cardio.label, disease)

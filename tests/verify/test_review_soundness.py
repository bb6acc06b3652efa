"""C5's review is sound against the graph it checks (issue 27, item 4), on the real cardio and
afib graphs in the session's Neo4j: a null result or an opposite claim between the two ends
in the patient's population refutes, paths run over validated assertions only, and no pair
of entities is verified both as a decrease and as an increase."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import neo4j
import pytest

from harness.compiled import CompiledDomain
from harness.graph.load import load
from harness.verify.graph_check import Reviewer, VerifySettings

pytestmark = pytest.mark.neo4j

DECREASE, INCREASE = "CAUSES_DECREASE_IN", "CAUSES_INCREASE_IN"


@pytest.fixture(scope="module", params=["cardio", "afib"])
def loaded(request: pytest.FixtureRequest, neo4j_driver: neo4j.Driver) -> CompiledDomain:
    domain = CompiledDomain.open(request.param)
    neo4j_driver.execute_query(f"MATCH (n:{domain.label}) DETACH DELETE n")
    load(neo4j_driver, domain)
    return domain


@pytest.fixture(scope="module")
def reviewer(neo4j_driver: neo4j.Driver, loaded: CompiledDomain) -> Any:
    r = Reviewer(neo4j_driver, loaded, VerifySettings.open(loaded, "C5"))
    yield r
    r.close()


def _pairs(domain: CompiledDomain, hops: int) -> set[tuple[str, str]]:
    """Every (subject, object) a signed triplet could be verified for: joined by an assertion
    or by a directed path of at most `hops` path-role assertions (validated or not), from the
    subject or from a class it is a member of. Any other pair has nothing to verify it."""
    v = VerifySettings.open(domain, "C5").verify
    path_types = set(v.path_predicates)
    out_edges: dict[str, set[str]] = defaultdict(set)
    pairs: set[tuple[str, str]] = set()
    for a in domain.graph["assertions"]:
        if a["predicate"] in v.predicates:
            pairs.add((a["subject_id"], a["object_id"]))
        if a["predicate"] in path_types:
            out_edges[a["subject_id"]].add(a["object_id"])
    classes: dict[str, set[str]] = defaultdict(set)
    for c in domain.graph.get("intervention_classes", []):
        for m in c["member_ids"]:
            classes[m].add(c["class_id"])
    for start in {s for s, _ in pairs} | set(classes):
        frontier = {start} | classes.get(start, set())
        for _ in range(hops):
            frontier = {o for n in frontier for o in out_edges.get(n, ())}
            pairs |= {(start, o) for o in frontier if o != start}
    for member, ks in classes.items():  # class-level claims apply to the members
        pairs |= {(member, o) for k in ks for (s, o) in list(pairs) if s == k and o != member}
    return pairs


def test_no_pair_is_verified_both_as_a_decrease_and_as_an_increase(
    loaded: CompiledDomain, reviewer: Reviewer
) -> None:
    """Before issue 27, rosuvastatin -> MACE was verified as a decrease (an exact claim from
    another population) and as an increase (a path over a putative edge). Reviewed for any
    population and for the domain's default one, no pair is verified both ways."""
    pairs = sorted(_pairs(loaded, reviewer.settings.verify.max_path_length))
    assert len(pairs) > 100, len(pairs)
    verified: dict[str | None, int] = {}
    for population in (None, loaded.default_population):
        both, count = [], 0
        for s, o in pairs:
            down = reviewer.check(s, DECREASE, o, population)
            up = reviewer.check(s, INCREASE, o, population)
            count += (down.status == "verified") + (up.status == "verified")
            if down.status == up.status == "verified":
                both.append((s, o, down.assertion_ids, up.assertion_ids))
        assert not both, both[:5]
        verified[population] = count
    assert all(verified.values()), verified  # the check is not vacuous


def _nulls(domain: CompiledDomain) -> list[dict[str, Any]]:
    return [a for a in domain.graph["assertions"] if a["predicate"] == "HAS_NO_EFFECT_ON"]


def test_a_null_result_in_the_patients_population_refutes_either_sign(
    loaded: CompiledDomain, reviewer: Reviewer
) -> None:
    """For every null result of the graph (a trial that showed no effect), a patient of the
    population it was shown in: "X lowers Y" and "X raises Y" are refuted as contradicted,
    and "X has no effect on Y" is verified by the null result itself."""
    nulls = _nulls(loaded)
    assert nulls, "the domain has null results"
    for a in nulls:
        s, o = a["subject_id"], a["object_id"]
        population = a["population_id"] or loaded.default_population
        for predicate in (DECREASE, INCREASE):
            v = reviewer.check(s, predicate, o, population)
            assert (v.status, v.reason) == ("refuted", "contradicted"), (a["assertion_id"], v)
        v = reviewer.check(s, "HAS_NO_EFFECT_ON", o, population)
        assert (v.status, v.method) == ("verified", "exact"), (a["assertion_id"], v)
        assert a["assertion_id"] in v.assertion_ids


def test_the_reviews_cases_from_the_fidelity_review(
    loaded: CompiledDomain, reviewer: Reviewer
) -> None:
    """The seed-fidelity review's cases on cardio: niacin -> MACE (HPS2-THRIVE and AIM-HIGH
    found no effect, ASR_0352 in POP_0009) was verified through LDL; rosuvastatin -> MACE as
    both signs. A claim scoped to another population verifies nothing for this patient."""
    if loaded.name != "cardio":
        pytest.skip("the review's cases are cardio's")
    by_name = {e["name"]: e["id"] for e in loaded.graph["entities"]}
    niacin, mace = (
        by_name["Niacin (extended-release)"],
        by_name["Major adverse cardiovascular events"],
    )
    v = reviewer.check(niacin, DECREASE, mace, "POP_0009")
    assert (v.status, v.reason) == ("refuted", "contradicted")
    rosuva = by_name["Rosuvastatin"]
    # ASR_0160 (a decrease) is scoped to POP_0017 and ASR_0294 (no effect) to POP_0007
    here = reviewer.check(rosuva, DECREASE, mace, "POP_0017")
    assert (here.status, here.method, here.assertion_ids) == ("verified", "exact", ["ASR_0160"])
    there = reviewer.check(rosuva, DECREASE, mace, "POP_0007")
    assert (there.status, there.reason) == ("refuted", "contradicted")
    for population in (None, "POP_0017", "POP_0007"):
        assert reviewer.check(rosuva, INCREASE, mace, population).status == "refuted"


def test_paths_follow_validated_assertions_only(loaded: CompiledDomain, reviewer: Reviewer) -> None:
    """A path-verified triplet's chain is all validated assertions, and its composed sign is
    the claim's (every path verdict over the audited pairs)."""
    validated = {a["assertion_id"]: a.get("validated") is True for a in loaded.graph["assertions"]}
    direction = {a["assertion_id"]: a.get("direction") for a in loaded.graph["assertions"]}
    seen = 0
    for s, o in sorted(_pairs(loaded, reviewer.settings.verify.max_path_length))[:400]:
        for predicate, sign in ((DECREASE, -1), (INCREASE, 1)):
            v = reviewer.check(s, predicate, o)
            if v.method != "path":
                continue
            seen += 1
            assert all(validated[i] for i in v.assertion_ids), v
            composed = 1
            for i in v.assertion_ids:
                composed *= -1 if direction[i] == "decrease" else 1
            assert composed == sign, v
    assert seen, "some triplet is verified by a path"

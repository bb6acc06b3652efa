"""Entity linking, exact and path verification, unverifiable and hostile triplets, on the
hand-made mini graph in a real Neo4j (tests/fixtures/domains/mini/data/assertions.csv)."""

from __future__ import annotations

import dataclasses

import neo4j
import pytest

from compiler.backends.cyphergen import Neo4j5, VerifyExact, VerifyPath, VerifyReview
from harness.compiled import CompiledDomain
from harness.graph.load import graph_counts
from harness.verify.graph_check import Reviewer, VerifySettings, correction_text, tally

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def reviewer(neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain) -> Reviewer:
    return Reviewer(neo4j_driver, loaded_mini, VerifySettings.open(loaded_mini, "C5"))


def t(s: object, p: object, o: object) -> dict[str, object]:
    return {"subject": s, "predicate": p, "object": o}


def test_compiled_settings_are_the_declared_ones(loaded_mini: CompiledDomain) -> None:
    v = VerifySettings.open(loaded_mini, "C5").verify
    assert (v.max_triplets, v.max_path_length, v.max_revisions) == (4, 3, 1)
    assert v.fuzzy_threshold == 90
    assert v.signs["CAUSES_DECREASE_IN"] == -1 and v.signs["CAUSES_INCREASE_IN"] == 1
    assert "ASSOCIATED_WITH" not in v.predicates  # associative is not a verify role
    assert set(v.path_predicates) == {
        "TARGETS",
        "PARTICIPATES_IN",
        "CAUSES_DECREASE_IN",
        "CAUSES_INCREASE_IN",
    }


@pytest.mark.parametrize(
    ("name", "entity", "method"),
    [
        ("Lisinopril", "DRG_0001", "exact_name"),
        ("lisinopril ", "DRG_0001", "exact_name"),
        ("Zestril", "DRG_0001", "synonym"),
        ("DRUGBANK:DB00722", "DRG_0001", "xref"),
        ("Lisinoprill", "DRG_0001", "fuzzy"),
        ("Unobtainium", None, "unmapped"),
    ],
)
def test_entity_linking_tiers(reviewer: Reviewer, name: str, entity: str, method: str) -> None:
    decision = reviewer.linker.link(name)
    assert (decision["entity_id"], decision["method"]) == (entity, method)


def test_exact_assertion_in_the_right_direction(reviewer: Reviewer) -> None:
    v = reviewer.review(t("Zestril", "TARGETS", "ACE"))
    assert (v.status, v.method, v.assertion_ids) == ("verified", "exact", ["ASR_0001"])
    assert (v.subject_id, v.object_id) == ("DRG_0001", "PRT_0001")


def test_class_level_claim_verifies_a_member(reviewer: Reviewer) -> None:
    v = reviewer.review(t("Lisinopril", "CAUSES_DECREASE_IN", "MACE"))
    assert (v.status, v.method, v.assertion_ids) == ("verified", "exact", ["ASR_0014"])


def test_wrong_sign_is_refuted_with_the_graphs_correction(
    reviewer: Reviewer, loaded_mini: CompiledDomain
) -> None:
    v = reviewer.review(t("Smoking cessation", "CAUSES_INCREASE_IN", "Tobacco smoking"))
    # the graph states the opposite sign between the two: contradicted (issue 27)
    assert v.status == "refuted" and v.reason == "contradicted"
    assert [c["assertion_id"] for c in v.correction] == ["ASR_0011"]
    assert "CAUSES_DECREASE_IN" in correction_text(v, loaded_mini.entities)


def test_wrong_direction_is_refuted(reviewer: Reviewer) -> None:
    v = reviewer.review(t("Blood pressure", "CAUSES_INCREASE_IN", "RAAS activity"))
    assert (v.status, v.reason) == ("refuted", "wrong_direction")
    assert v.correction[0]["orientation"] == "reverse"


def test_path_with_the_composed_sign(reviewer: Reviewer) -> None:
    # ACE -PARTICIPATES_IN-> RAAS -CAUSES_INCREASE_IN-> BP -CAUSES_INCREASE_IN-> MACE: +1
    v = reviewer.review(t("ACE", "CAUSES_INCREASE_IN", "MACE"))
    assert (v.status, v.method) == ("verified", "path")
    assert v.assertion_ids == ["ASR_0002", "ASR_0003", "ASR_0004"]
    # the same path refutes the opposite sign
    v = reviewer.review(t("ACE", "CAUSES_DECREASE_IN", "MACE"))
    assert (v.status, v.reason) == ("refuted", "no_assertion_or_path")
    # an inhibiting first step flips the sign: Lisinopril -| ACE -> RAAS -> BP
    v = reviewer.review(t("Amlodipine", "CAUSES_DECREASE_IN", "Vasoconstriction"))
    assert (v.status, v.method, v.assertion_ids) == ("verified", "path", ["ASR_0008", "ASR_0009"])


def test_path_longer_than_m_is_not_followed(
    neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain
) -> None:
    settings = VerifySettings.open(loaded_mini, "C5")
    path = VerifyPath(loaded_mini.label, tuple(settings.verify.path_predicates), 2)
    exact = VerifyExact(loaded_mini.label, tuple(settings.verify.predicates))
    short = dataclasses.replace(
        settings,
        path_query=Neo4j5().generate(path),
        review_query=Neo4j5().generate(VerifyReview(exact, path)),
    )
    for one_round_trip in (True, False):
        reviewer = Reviewer(neo4j_driver, loaded_mini, short, one_round_trip=one_round_trip)
        v = reviewer.review(t("ACE", "CAUSES_INCREASE_IN", "MACE"))  # needs 3 assertions
        assert v.status == "refuted"
        v = reviewer.review(t("ACE", "CAUSES_INCREASE_IN", "Blood pressure"))
        assert v.status == "verified"
        reviewer.close()


AGREEMENT = [
    t("Zestril", "TARGETS", "ACE"),
    t("Lisinopril", "CAUSES_DECREASE_IN", "MACE"),
    t("Smoking cessation", "CAUSES_INCREASE_IN", "Tobacco smoking"),
    t("Blood pressure", "CAUSES_INCREASE_IN", "RAAS activity"),
    t("ACE", "CAUSES_INCREASE_IN", "MACE"),
    t("ACE", "CAUSES_DECREASE_IN", "MACE"),
    t("Amlodipine", "CAUSES_DECREASE_IN", "Vasoconstriction"),
    t("Lisinopril", "INDICATED_FOR", "Hypertension"),
    t("Amlodipine", "INDICATED_FOR", "Hypertension"),
    t("Unobtainium", "TARGETS", "ACE"),
]


def test_one_round_trip_gives_the_verdicts_of_the_two_queries(
    reviewer: Reviewer, neo4j_driver: neo4j.Driver, loaded_mini: CompiledDomain
) -> None:
    """The compiled review query (exact rows, then the path search only when no assertion
    states the claim) decides exactly as the exact query followed by the path query."""
    assert reviewer.one_round_trip and reviewer.settings.review_query is not None
    two = Reviewer(neo4j_driver, loaded_mini, reviewer.settings, one_round_trip=False)
    for triplet in AGREEMENT:
        a, b = reviewer.review(triplet), two.review(triplet)
        assert (a.status, a.reason, a.method, a.assertion_ids, a.correction) == (
            b.status,
            b.reason,
            b.method,
            b.assertion_ids,
            b.correction,
        ), triplet
    two.close()
    statuses = {reviewer.review(x).status for x in AGREEMENT}
    assert statuses == {"verified", "refuted", "unverifiable"}


def test_unsigned_predicate_needs_an_exact_assertion(reviewer: Reviewer) -> None:
    assert reviewer.review(t("Lisinopril", "INDICATED_FOR", "Hypertension")).status == "verified"
    v = reviewer.review(t("Amlodipine", "INDICATED_FOR", "Hypertension"))
    assert (v.status, v.reason) == ("refuted", "no_assertion")


def test_unlinkable_end_is_kept_and_marked(reviewer: Reviewer) -> None:
    v = reviewer.review(t("Unobtainium", "TARGETS", "ACE"))
    assert (v.status, v.reason) == ("unverifiable", "unlinked_subject")
    assert v.object_id == "PRT_0001" and v.links["subject"]["method"] == "unmapped"


HOSTILE = "x'}) MATCH (n) DETACH DELETE n //"


@pytest.mark.parametrize(
    ("triplet", "status", "reason"),
    [
        (t("Lisinopril", "DROP_ALL", "ACE"), "rejected", "unknown_predicate"),
        (
            t("Lisinopril", "TARGETS`]->() DETACH DELETE n//", "ACE"),
            "rejected",
            "unknown_predicate",
        ),
        (t("", "TARGETS", "ACE"), "rejected", "empty_name"),
        (t("  --  ", "TARGETS", "ACE"), "rejected", "empty_name"),
        (t("A" * 10_240, "TARGETS", "ACE"), "rejected", "too_long"),
        (t("Lisinopril", "TARGETS", "lisinopril"), "rejected", "self_loop"),
        (t("Lisinopril", "CAUSES_DECREASE_IN", "Zestril"), "rejected", "self_loop"),
        (t(3, "TARGETS", "ACE"), "rejected", "not_text"),
        ("Lisinopril targets ACE", "rejected", "not_an_object"),
        (t(HOSTILE, "TARGETS", "ACE"), "unverifiable", "unlinked_subject"),
        (t("Lisinopril", "TARGETS", HOSTILE), "unverifiable", "unlinked_object"),
    ],
)
def test_hostile_triplets_are_recorded_never_raised(
    reviewer: Reviewer,
    neo4j_driver: neo4j.Driver,
    loaded_mini: CompiledDomain,
    triplet: object,
    status: str,
    reason: str,
) -> None:
    before = graph_counts(neo4j_driver, loaded_mini.label)
    v = reviewer.review(triplet)
    assert (v.status, v.reason) == (status, reason)
    assert graph_counts(neo4j_driver, loaded_mini.label) == before
    assert v.to_json()["status"] == status  # recordable as JSON
    assert len(v.triplet_text()) < 500


def test_queries_take_user_text_only_as_parameters(reviewer: Reviewer) -> None:
    settings = reviewer.settings
    assert settings.review_query is not None
    for query in (settings.exact_query, settings.path_query, settings.review_query):
        assert "$subject_id" in query and "$object_id" in query
        body = "\n".join(line for line in query.splitlines() if not line.startswith("//"))
        for literal in ("'forward'", "'reverse'", "'decrease'"):
            body = body.replace(literal, "")
        assert "'" not in body
    assert "$predicate" in settings.review_query and "$sign" in settings.review_query


def test_tally_counts_by_status_and_reason(reviewer: Reviewer) -> None:
    verdicts = [
        reviewer.review(t("Zestril", "TARGETS", "ACE")),
        reviewer.review(t("Unobtainium", "TARGETS", "ACE")),
        reviewer.review(t("", "TARGETS", "ACE")),
    ]
    assert tally(verdicts) == {
        "by_status": {"rejected": 1, "unverifiable": 1, "verified": 1},
        "by_reason": {"empty_name": 1, "unlinked_subject": 1},
    }


def test_a_runaway_answer_is_cut_and_the_cut_counted(reviewer: Reviewer) -> None:
    from collections import Counter

    from harness.verify.chains import MAX_PROPOSALS, proposals

    extra = 7
    raw = [
        {"candidate": "Lisinopril", **t("Zestril", "TARGETS", "ACE")}
        for _ in range(MAX_PROPOSALS + extra)
    ]
    cut: Counter[str] = Counter()
    triplets = proposals({"triplets": raw}, {}, 4, reviewer, cut)
    assert len(triplets) == MAX_PROPOSALS and cut == {"triplets_beyond_limit": extra}
    statuses = Counter(tr.final.status for tr in triplets)
    assert statuses == {"verified": 4, "rejected": MAX_PROPOSALS - 4}  # beyond n: too_many

"""All validated chains: the gold path of every item of every committed domain (generated and
hand-written) is in its C3 and C4 contexts, C4 never loses a validated chain to an unvalidated
one, and the declared bounds cut chains without an error."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest

from harness.compiled import CompiledDomain
from harness.graph.extract import extract
from harness.graph.load import load
from harness.scenario_files import generated_set, read_scenarios
from harness.scenarios.chain_index import ChainIndex

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]
DOMAINS = sorted(p.name for p in (REPO / "domains").iterdir() if (p / "domain.yaml").exists())


def items(domain: str) -> list[tuple[str, dict]]:
    """The committed generated set and every hand-written fixture file of the domain."""
    out = [("generated", s) for s in read_scenarios(generated_set(CompiledDomain.open(domain)))]
    for path in sorted((REPO / "tests/fixtures/scenarios").glob(f"{domain}_*.jsonl")):
        out += [(path.name, s) for s in read_scenarios(path)]
    return out


def chains_of(ctx: dict, candidate: str) -> list[list[str]]:
    section = next(s for s in ctx["sections"] if s["shape"] == "causal_chain")
    return [p["assertion_ids"] for p in section["paths"] if p["candidate_id"] == candidate]


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_validated_gold_path_is_in_its_c3_and_c4_contexts(
    neo4j_driver: neo4j.Driver, domain: str
) -> None:
    compiled = CompiledDomain.open(domain)
    load(neo4j_driver, compiled)
    validated = {a["assertion_id"]: a["validated"] for a in compiled.graph["assertions"]}
    checked = hand_written = 0
    for source, scenario in items(domain):
        gold = scenario["gold"]
        path, preferred = gold["causal_path_assertion_ids"], gold["preferred_intervention"]
        if not path or preferred is None or not all(validated[i] for i in path):
            continue
        for condition in ("C3", "C4"):
            shown = chains_of(extract(neo4j_driver, compiled, scenario, condition), preferred)
            assert path in shown, (source, scenario["scenario_id"], condition, shown)
        checked += 1
        hand_written += source != "generated"
    assert checked >= 50 if domain == "cardio" else checked > 0
    if domain == "cardio":
        assert hand_written, "the hand-written walk-through is checked too"


def test_c4_adds_unvalidated_chains_beside_the_validated_ones(
    neo4j_driver: neo4j.Driver,
) -> None:
    """Per candidate, C4 shows every chain C3 shows, first and in the same order, then the
    unvalidated ones: an unvalidated mechanism never displaces a validated edge."""
    compiled = CompiledDomain.open("cardio")
    load(neo4j_driver, compiled)
    validated = {a["assertion_id"]: a["validated"] for a in compiled.graph["assertions"]}
    unvalidated_seen = 0
    for _, scenario in items("cardio"):
        c3 = extract(neo4j_driver, compiled, scenario, "C3")
        c4 = extract(neo4j_driver, compiled, scenario, "C4")
        for cand in (c["intervention_id"] for c in scenario["candidates"]):
            strong, shown = chains_of(c3, cand), chains_of(c4, cand)
            assert shown[: len(strong)] == strong, (scenario["scenario_id"], cand)
            rest = shown[len(strong) :]
            assert all(not all(validated[i] for i in c) for c in rest)
            unvalidated_seen += len(rest)
    assert unvalidated_seen > 0


def test_bounds_cut_chains_and_never_fail(neo4j_driver: neo4j.Driver, tmp_path: Path) -> None:
    """A domain compiled with tight bounds (1 chain, 2 steps) extracts without error, shows
    at most the bound, and keeps the strongest shortest chain the mirror ranks first."""
    import shutil

    from compiler.api import compile_domain

    root = tmp_path / "domains" / "cardio"  # beside the spec, as in the repository
    shutil.copytree(REPO / "domains" / "cardio", root)
    (tmp_path / "spec").symlink_to(REPO / "spec")
    text = (REPO / "spec" / "declarations" / "conditions.yaml").read_text()
    text = text.replace("max_length: 6", "max_length: 2").replace("max_chains: 12", "max_chains: 1")
    (root / "conditions.yaml").write_text(text)
    config = (root / "domain.yaml").read_text().replace("scenarios: scenarios.yaml\n", "")
    (root / "domain.yaml").write_text(config + "conditions: conditions.yaml\n")
    compile_domain(root, out_root=tmp_path / "out", force=True)
    tight = CompiledDomain.open("cardio", generated=tmp_path / "out")
    load(neo4j_driver, tight)
    section = tight.condition("C3").section("causal_chain")
    assert (section.max_length, section.max_chains) == (2, 1)
    index = ChainIndex(tight.graph, tight.evidence_rank)
    shown_any = 0
    for _, scenario in items("cardio")[:20]:
        ctx = extract(neo4j_driver, tight, scenario, "C3")
        for cand in (c["intervention_id"] for c in scenario["candidates"]):
            shown = chains_of(ctx, cand)
            assert len(shown) <= 1 and all(len(c) <= 2 for c in shown)
            assert shown == index.section_chains(cand, scenario["target_outcome_id"], section)
            shown_any += len(shown)
    assert shown_any
    load(neo4j_driver, CompiledDomain.open("cardio"))  # the committed graph back for others

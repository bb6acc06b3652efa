"""Why an item's gold is what it is, for a person: `kgbench explain --domain d SCN_0046`.

Everything comes from the item's machine-readable justification (written by the generator)
and the compiled graph: each candidate's verdict and the rule behind it, and every assertion
and source those verdicts rest on, spelled out (subject, predicate, object, population,
evidence level, and the source's citation). The same facts feed the review sheet.

An item that carries no justification (hand-written, or an older release) is judged now by
the one judgement every gate shares (`harness.scenarios.audit.ItemJudge`), and every item's
explanation says what that judgement makes of its gold today, so `explain`, `check-scenarios`,
`audit` and `publish` never disagree about an item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgbench.errors import UserError

from ..scenarios.audit import UNCHANGED, ItemJudge
from ..scenarios.kg import KnowledgeGraph
from ..scenarios.narratives import lower_name


@dataclass(frozen=True)
class AssertionFact:
    assertion_id: str
    text: str  # "Lisinopril -TARGETS-> Angiotensin-converting enzyme (decrease)"
    details: str  # "validated, high certainty, causal, adults with hypertension"
    provenance: str
    sources: tuple[str, ...]  # evidence ids


def assertion_fact(kg: KnowledgeGraph, assertion_id: str) -> AssertionFact:
    a = kg.assertions.get(assertion_id)
    if a is None:
        return AssertionFact(assertion_id, "(not in the graph)", "", "", ())
    direction = f" ({a['direction']})" if a["direction"] != "none" else ""
    text = (
        f"{kg.name_of(a['subject_id'])} -{a['predicate']}-> {kg.name_of(a['object_id'])}{direction}"
    )
    details = [
        "validated" if a["validated"] else "not validated",
        f"{a['evidence_level'].replace('_', ' ')} certainty",
        a["causal_status"].replace("_", " "),
    ]
    if a["population_id"]:
        details.append(f"in {lower_name(kg.name_of(a['population_id']))}")
    if a.get("member_ids"):
        details.append("class-level claim")
    links = kg.links.get(assertion_id, ())
    return AssertionFact(
        assertion_id,
        text,
        ", ".join(details),
        a.get("provenance") or "",
        tuple(link["evidence_id"] for link in links),
    )


def source_text(kg: KnowledgeGraph, evidence_id: str) -> str:
    ev = kg.evidence.get(evidence_id)
    if ev is None:
        return f"{evidence_id}: (not in the graph)"
    return f"{evidence_id} [{ev['source_type'].replace('_', '-')}] {ev['title']}. {ev['citation']}"


@dataclass(frozen=True)
class Explanation:
    """An item, its verdicts and the facts behind them, ready to print or to render."""

    record: dict[str, Any]
    verdicts: list[dict[str, Any]]
    assertions: list[AssertionFact]
    sources: list[str]
    rules: str = "unknown"
    judged_now: str = ""  # what the shared judgement makes of the gold today


def item_judge(kg: KnowledgeGraph) -> ItemJudge:
    """The one item judgement over this graph, made once per graph (the review sheet explains
    every item of a set)."""
    judge = kg.__dict__.get("_item_judge")
    if judge is None:
        judge = kg.__dict__["_item_judge"] = ItemJudge(kg.domain, kg)
    return judge


def _judgement_now(judge: ItemJudge, record: dict[str, Any]) -> str:
    item = judge.item(record)
    if item.outcome == UNCHANGED:
        return "the current rules and graph give this gold (check-scenarios accepts it)"
    problem = judge.problem(item)
    return f"{item.outcome}: {problem or item.detail}"


def explain(
    kg: KnowledgeGraph, record: dict[str, Any], judge: ItemJudge | None = None
) -> Explanation:
    gold = record["gold"]
    judge = judge or item_judge(kg)
    offered = _known_candidates(kg, record)
    justification = gold.get("justification") or {}
    judged = {v.get("intervention_id") for v in justification.get("candidates") or []}
    if not judged or not offered <= judged:  # hand-written, or candidates added after it
        justification = judge.justification(record)
    verdicts = list(justification.get("candidates") or [])
    ids: list[str] = []
    for key in (
        "outcome_assertion_ids",
        "causal_path_assertion_ids",
        "contraindication_assertion_ids",
        "adverse_effect_assertion_ids",
    ):
        ids += gold.get(key) or []
    for v in verdicts:
        ids += v.get("assertion_ids") or []
    facts = [assertion_fact(kg, i) for i in dict.fromkeys(ids)]
    evidence = list(
        dict.fromkeys(
            [
                *(gold.get("evidence_source_ids") or []),
                *(e for v in verdicts for e in v.get("evidence_source_ids") or []),
                *(e for f in facts for e in f.sources),
            ]
        )
    )
    return Explanation(
        record,
        verdicts,
        facts,
        [source_text(kg, e) for e in evidence],
        str(justification.get("rules") or "unknown"),
        _judgement_now(judge, record),
    )


def _known_candidates(kg: KnowledgeGraph, record: dict[str, Any]) -> set[str]:
    """The offered interventions; one the domain does not know is a UserError naming it
    (reliability review 2026-12, ex.unknown-candidate: it was left out of the list silently)."""
    ids = set()
    for index, candidate in enumerate(record.get("candidates") or []):
        cid = candidate.get("intervention_id") if isinstance(candidate, dict) else None
        if not isinstance(cid, str) or cid not in kg.entities:
            raise UserError(
                f"scenario {record.get('scenario_id')}, field 'candidates[{index}]"
                f".intervention_id': unknown intervention {cid!r}; `kgbench check-scenarios` "
                "lists every problem of the file"
            )
        ids.add(cid)
    return ids


def find(records: list[dict[str, Any]], scenario_id: str) -> dict[str, Any]:
    for r in records:
        if r["scenario_id"] == scenario_id:
            return r
    known = ", ".join(r["scenario_id"] for r in records[:3])
    raise UserError(
        f"no scenario '{scenario_id}' in the scenario set ({len(records)} scenarios: {known}, ...)"
    )


def population_name(kg: KnowledgeGraph, record: dict[str, Any]) -> str:
    """The item's population by name, or that it names none: the domain default applies, or
    (a domain without one) the claims without a population speak for the patient."""
    population = record.get("population_id")
    if population:
        return kg.name_of(population)
    default = kg.domain.default_population
    if default:
        return f"none stated (the domain default, {kg.name_of(default)})"
    return "none (the domain declares no default; claims without a population apply)"


def as_text(kg: KnowledgeGraph, ex: Explanation) -> str:
    """The explanation as plain text (no markup: names and notes are data)."""
    r, gold = ex.record, ex.record["gold"]
    target = kg.name_of(r["target_outcome_id"])
    lines = [
        f"{r['scenario_id']} ({r['category'].replace('_', ' ')}): {r['title']}",
        "",
        r["patient"]["narrative"],
        f"Decision: {r['decision_target']}",
        f"Target outcome: {target}; population: {population_name(kg, r)}",
        "",
    ]
    preferred = gold.get("preferred_intervention")
    if preferred is None:
        lines.append("Gold: abstain. No candidate is adequately supported for this patient.")
    else:
        acceptable = ", ".join(kg.name_of(a) for a in gold["acceptable_interventions"])
        lines.append(f"Gold: {kg.name_of(preferred)} (acceptable: {acceptable})")
    lines.append(f"Rules: {ex.rules}")
    if ex.judged_now:
        lines.append(f"Judged now: {ex.judged_now}")
    lines.append("")
    lines.append("Candidates:")
    for v in ex.verdicts:
        reason = v["reason"].replace("_", " ")
        lines.append(f"  - {kg.name_of(v['intervention_id'])}: {v['verdict']} ({reason})")
        lines.append(f"    {v['summary']}")
    if gold.get("causal_path_assertion_ids"):
        lines.append("")
        lines.append("Gold path (the mechanism; it explains, it does not qualify the answer):")
        lines.append("  " + " -> ".join(gold["causal_path_assertion_ids"]))
    lines.append("")
    lines.append("Assertions:")
    for f in ex.assertions:
        prov = f" | {f.provenance}" if f.provenance else ""
        lines.append(f"  [{f.assertion_id}] {f.text} | {f.details}{prov}")
    lines.append("")
    lines.append("Sources:")
    lines += [f"  {s}" for s in ex.sources]
    return "\n".join(lines)

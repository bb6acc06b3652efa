"""A verify-and-revise chain: each proposed triplet and its verdicts, from the generate
answer through every revision, and what a run's chains came to (`summarize`, written to
verify/<log>/summary.json; `explain_chain`, `kgbench explain-run`).

What a model's generate and revise answers are allowed to say is read here, bounded: a
runaway answer is cut at MAX_PROPOSALS triplets, a revision naming an unknown or repeated
index is counted, never applied. The driver (harness.verify.agent) runs the steps.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.runfolder import RunFolder
from harness.runner.log import JsonlLog
from kgbench.errors import UserError

from .graph_check import Reviewer, Verdict

MAX_PROPOSALS = 1000  # triplets reviewed per generate answer; the rest are counted, not reviewed


@dataclass
class Triplet:
    """One proposed triplet and its history (the chain `explain-run` shows)."""

    index: int
    candidate: str
    proposed: Any
    verdicts: list[Verdict]

    @property
    def final(self) -> Verdict:
        return self.verdicts[-1]

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "candidate": self.candidate,
            "proposed": self.proposed,
            "rounds": [v.to_json() for v in self.verdicts],
            "final": self.final.status,
            "revised": len(self.verdicts) > 1,
            "fixed": len(self.verdicts) > 1 and self.final.status == "verified",
        }


def parsed_answer(record: dict[str, Any] | None) -> Any:
    """The parsed answer of one stage record; None when the step failed or did not parse."""
    if not record or record.get("status") != "ok" or not record.get("parse_ok"):
        return None
    return record.get("parsed")


def proposals(
    parsed: Any,
    scenario: dict[str, Any],
    n: int,
    reviewer: Reviewer,
    cut: Counter[str],
    population: str | None = None,
) -> list[Triplet]:
    """Every proposed triplet reviewed; beyond n per candidate: rejected as too_many.

    A runaway answer (more than MAX_PROPOSALS triplets) is cut there so one reply cannot make
    review unbounded; the triplets cut are counted in `cut` (the summary's unusable answers),
    never dropped silently."""
    raw = parsed.get("triplets") if isinstance(parsed, dict) else None
    if not isinstance(raw, list):
        return []
    if len(raw) > MAX_PROPOSALS:
        cut["triplets_beyond_limit"] += len(raw) - MAX_PROPOSALS
    per: Counter[str] = Counter()
    out = []
    for i, item in enumerate(raw[:MAX_PROPOSALS], 1):
        candidate = item.get("candidate") if isinstance(item, dict) else None
        candidate = candidate if isinstance(candidate, str) else ""
        per[candidate] += 1
        if per[candidate] > n:
            verdict = Verdict(
                *(
                    item.get(k) if isinstance(item, dict) else None
                    for k in ("subject", "predicate", "object")
                ),
                status="rejected",
                reason="too_many",
            )
        else:
            verdict = reviewer.review(item, population)
        out.append(Triplet(i, candidate[:200], item, [verdict]))
    return out


def refuted(chains: dict[str, list[Triplet]]) -> dict[str, list[Triplet]]:
    """The triplets still refuted, by scenario (only scenarios with some): the next revise
    step's work."""
    pending = {sid: [t for t in ts if t.final.status == "refuted"] for sid, ts in chains.items()}
    return {sid: ts for sid, ts in pending.items() if ts}


def apply_revisions(
    parsed: Any,
    pending: list[Triplet],
    reviewer: Reviewer,
    cut: Counter[str],
    population: str | None = None,
) -> None:
    """One scenario's revise answer: each revision of a pending triplet is reviewed and
    appended to its verdicts. An answer without a revisions list, or a revision naming an
    index not pending (or one already revised in this answer), is counted in `cut`."""
    revisions = parsed.get("revisions") if isinstance(parsed, dict) else None
    if not isinstance(revisions, list):
        cut["revise_unparsed"] += 1
        return
    by_index = {t.index: t for t in pending}
    seen: set[int] = set()
    for r in revisions:
        i = r.get("index") if isinstance(r, dict) else None
        if not isinstance(i, int) or i not in by_index or i in seen:
            cut["revision_unknown_index"] += 1
            continue
        seen.add(i)
        by_index[i].verdicts.append(reviewer.review(r, population))


def summarize(chains: dict[str, list[Triplet]], rejected_answers: Counter[str]) -> dict[str, Any]:
    """C5-only figures: triplets proposed, verified, refuted, unverifiable, rejected,
    revised, and how often a revision fixed a refuted triplet."""
    ts = [t for tl in chains.values() for t in tl]
    first = Counter(t.verdicts[0].status for t in ts)
    final = Counter(t.final.status for t in ts)
    revised = [t for t in ts if len(t.verdicts) > 1]
    fixed = sum(1 for t in revised if t.final.status == "verified")
    methods = Counter(t.final.method for t in ts if t.final.status == "verified")
    reasons = Counter(v.reason for t in ts for v in t.verdicts if v.reason)
    times = sorted(v.query_ms for t in ts for v in t.verdicts if v.query_ms)
    return {
        "scenarios": len(chains),
        "proposed": len(ts),
        "first_review": {
            k: first.get(k, 0) for k in ("verified", "refuted", "unverifiable", "rejected")
        },
        "final": {k: final.get(k, 0) for k in ("verified", "refuted", "unverifiable", "rejected")},
        "verified_by": dict(sorted(methods.items())),
        "revised": len(revised),
        "fixed_by_revision": fixed,
        "fix_rate": round(fixed / len(revised), 4) if revised else None,
        "reasons": dict(sorted(reasons.items())),
        "unusable_answers": dict(sorted(rejected_answers.items())),
        "review_ms_p95": times[int(0.95 * (len(times) - 1))] if times else None,
    }


def explain_chain(run_dir: Path, scenario_id: str, slug: str | None = None) -> str:
    """`kgbench explain-run`: one item's chain, proposal -> links -> verdict -> revision ->
    final, then the answer the model gave from the verified triplets."""
    folder = RunFolder.open(run_dir)
    slugs = folder.verify_runs()
    if slug is None and len(slugs) == 1:
        slug = slugs[0]
    if slug is None or slug not in slugs:
        what = f"for '{slug}' " if slug else ""
        raise UserError(
            f"no verify-and-revise run {what}under {folder.verify_root} (runs: "
            f"{', '.join(slugs) or 'none'}); name one with --model, or run `kgbench verify`"
        )
    chain = folder.chain(slug, scenario_id)
    out = [f"{scenario_id} ({slug}): {len(chain['triplets'])} triplets proposed"]
    for t in chain["triplets"]:
        out.append(f"{t['index']}. for {t['candidate'] or '(no candidate)'}")
        for k, v in enumerate(t["rounds"]):
            step = "proposed" if k == 0 else f"revision {k}"
            links = ", ".join(
                f"{end} -> {d['entity_id'] or '-'} ({d['method']})" for end, d in v["links"].items()
            )
            what = f"{v['status']}" + (f" [{v['reason']}]" if v["reason"] else "")
            if v["assertion_ids"]:
                what += f" by {v['method']}: {', '.join(v['assertion_ids'])}"
            triplet = f"{v['subject']!s:.80} -{v['predicate']!s:.40}-> {v['object']!s:.80}"
            out.append(f"   {step}: {triplet}")
            if links:
                out.append(f"     linked: {links}")
            out.append(f"     review: {what}")
        out.append(f"   final: {t['final']}")
    log = folder.response_log(slug)
    if log.exists():
        records, _ = JsonlLog(log).load()
        for rec in sorted(records.values(), key=lambda r: str(r.get("prompt_id", ""))):
            cond = rec.get("condition")
            mine = str(rec.get("prompt_id", "")).startswith(f"{scenario_id}/")
            if not (mine and str(rec.get("key", "")).startswith(f"{cond}:")):
                continue
            parsed = rec.get("parsed") if isinstance(rec.get("parsed"), dict) else {}
            where = str(rec.get("prompt_id", "")).partition("/")[2] or cond
            out.append(
                f"answer ({where}): {parsed.get('recommended_intervention')!r}; "
                f"path {parsed.get('causal_path_assertion_ids')}"
            )
    return "\n".join(out) + "\n"

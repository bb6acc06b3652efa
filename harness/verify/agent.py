"""The verify-and-revise driver (`kgbench verify`): every model step through the runner.

Stages (logs under `<run>/verify/<log>/stages/`): `generate` (one request per
scenario), `revise-1` .. `revise-<r>` (one request per scenario with refuted triplets left),
`answer` (one per scenario, the usual frame and JSON contract with the verified triplets as
its grounded block). Review runs between them on Neo4j, through the compiled queries.

Each stage is derived from the logged answers of the previous ones, so the same command after
a crash resends nothing a log holds (the runner's exactly-once resume), and `--batch` and the
cache work per stage. What it writes, each file atomically and through harness.runfolder
(the one owner of the run folder's layout):

    verify/<log>/chains/<scenario>.json    every triplet: proposal, links, verdict, revisions
    verify/<log>/summary.json               counts (proposed, verified, refuted, ...)
    contexts/<scenario>/C5.json             the verified assertions (what the scorer reads)
    prompts/verify.jsonl                    the answer prompts (scored like prompts.jsonl)
    responses/<log>.jsonl                   the answers, appended as `<scenario>/C5` records

`<log>` is the model's slug, as `kgbench run` names its responses log, so C5 pairs with the
same model's C1-C4 answers.

`--order-variants` (order sensitivity, harness.evaluation.order) reruns the whole agent once per declared
presentation of the options: every step's prompt (generate, revise, answer) lists them in that
presentation's order and labels, so the triplets too come from the reordered options, as a
reordered C1-C4 prompt is answered from scratch. Its stages are logged as
`<step>.<presentation>` (the original's names are unchanged), its chains as
`chains/<scenario>@<presentation>.json`, its answer prompts as
`<scenario>/C5@<presentation>` (scored into order.json, kept out of the panel), and the
summary gains its figures under `presentations`. The original order's context, chain and
figures are those of a run without variants. A presentation that lists a scenario's options
as an earlier one does sends nothing for that scenario (order.json reads the earlier answer).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import neo4j
from rich.console import Console

from harness.compiled import CompiledDomain
from harness.evaluation.order import ORIGINAL
from harness.evaluation.prompts import PromptRenderer, prompt_record
from harness.runfolder import Prompt, RunFolder
from harness.runner.log import JsonlLog, RunLock
from harness.runner.stage import Stage, StageConfig, StageRequest, run_stage, stage_spec
from kgbench.contract import Context, VerifySummary
from kgbench.errors import UserError
from kgbench.io import read_json_object

from . import steps
from .graph_check import Reviewer, Verdict, VerifySettings, correction_text

# What the revise step is shown of a refuted triplet (conditions.yaml `reviser`).
REVISERS = ("uninformed", "informed")
MAX_PROPOSALS = 1000  # triplets reviewed per generate answer; the rest are counted, not reviewed


@dataclass(frozen=True)
class VerifyConfig:
    run_dir: Path
    runner: StageConfig  # the model and runner options; out_dir is set here
    condition: str = "C5"
    database: str | None = None
    order_variants: bool = False  # also rerun the agent per declared presentation
    reviser: str | None = None  # None: the condition's declared one (uninformed, KGARevion)
    compiled: CompiledDomain | None = None  # the caller's open handle; None: the run's own


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


def run_verify(
    config: VerifyConfig, driver: neo4j.Driver, console: Console | None = None
) -> dict[str, Any]:
    """Run C5 over every scenario of a run folder; returns the summary (also written)."""
    console = console or Console(stderr=True, highlight=False)
    folder = RunFolder.open(config.run_dir)
    scenarios = folder.scenarios()
    compiled = folder.compiled(config.compiled)
    settings = VerifySettings.open(compiled, config.condition)
    v = settings.verify
    runner = config.runner
    if runner.model.startswith("ref:") and runner.respond is None:
        from harness.evaluation.responders import is_responder, respond

        from .responders import stage_respond

        # ref:<name>: generate and revise are the reference verifier's, the answer step is
        # <name>'s (oracle, context-reader, ...), logged under that name's slug so C5 pairs
        # with the same responder's C1-C4 answers
        name = runner.model.partition(":")[2].strip()
        if not is_responder(name):
            respond(name, "")  # raises the unknown-responder message
        runner = replace(runner, responders=(name,), respond=stage_respond(compiled, scenarios))
    slug = stage_spec(runner).slug
    out = folder.verify_dir(slug)
    runner = replace(runner, out_dir=out / "stages")
    reviewer = Reviewer(driver, compiled, settings, config.database)
    reviser = config.reviser or v.reviser
    if reviser not in REVISERS:
        raise UserError(f"unknown reviser '{reviser}'; expected one of {', '.join(REVISERS)}")
    if reviser == "informed" and "revise_informed" not in v.prompts:
        raise UserError(
            f"condition {config.condition} declares no informed reviser's instruction "
            "(prompts.revise_informed in conditions.yaml)"
        )
    informed = reviser == "informed"
    renderer = PromptRenderer(compiled)
    predicates = {p["name"]: p for p in compiled.graph["predicates"]}
    targets = {s["scenario_id"]: renderer.target_outcome(s) for s in scenarios}
    schema = _response_schema(folder, compiled)
    shown = (
        _presentations(compiled, scenarios) if config.order_variants else [(ORIGINAL, scenarios)]
    )

    with RunLock(out / ".verify.lock"), closing(reviewer):
        answer_prompts: list[Prompt] = []
        summary: dict[str, Any] = {}
        per_presentation: dict[str, Any] = {}
        for presentation, listed in shown:
            chains, rejected_answers, prompts, answers = _run_agent(
                _Agent(
                    runner, v, compiled, reviewer, renderer, predicates, targets, schema, informed
                ),
                listed,
                config.condition,
                presentation,
                console,
            )
            answer_prompts += prompts
            if presentation == ORIGINAL:
                # the scorer's grounding metrics read the original order's verified context
                folder.write_contexts(
                    [
                        _context(compiled, s, chains[s["scenario_id"]], config.condition)
                        for s in listed
                    ]
                )
            _append_answers(folder, slug, answers, config.condition)
            for sid, ts in chains.items():
                name = sid if presentation == ORIGINAL else f"{sid}@{presentation}"
                folder.write_chain(
                    slug, name, {"scenario_id": sid, "triplets": [t.to_json() for t in ts]}
                )
            figures = summarize(chains, rejected_answers)
            if presentation == ORIGINAL:
                summary = figures
            else:
                per_presentation[presentation] = figures
        folder.write_verify_prompts(answer_prompts)
        summary.update(
            format_version=VerifySummary.FORMAT,
            condition=config.condition,
            model=slug,
            reviser=reviser,
        )
        if per_presentation:
            summary["presentations"] = per_presentation
        VerifySummary.model_validate(summary)  # what we write keeps its contract
        folder.write_verify_summary(slug, summary)
    return summary


@dataclass(frozen=True)
class _Agent:
    """What every presentation's run of the agent shares (the model, graph and prompts)."""

    runner: StageConfig
    v: Any
    compiled: Any
    reviewer: Reviewer
    renderer: PromptRenderer
    predicates: dict[str, dict[str, Any]]
    targets: dict[str, str]
    schema: dict[str, Any]
    informed: bool = False  # the informed reviser (a declared variant): shown the correction


def _presentations(
    compiled: Any, scenarios: list[dict[str, Any]]
) -> list[tuple[str, list[dict[str, Any]]]]:
    """The original order and each declared presentation that lists some scenario's options
    differently from every earlier one (harness.evaluation.order), with the scenarios as it shows them.

    A presentation is rerun whole (generate, review, revise, answer) for the scenarios whose
    options it lists anew; a scenario it lists as an earlier presentation does is answered
    by that one's answer (order.json reads it there), so no request is sent twice."""
    from harness.evaluation.order import arrangements, presented

    out: list[tuple[str, list[dict[str, Any]]]] = [(ORIGINAL, scenarios)]
    for p in compiled.presentations:
        listed = [
            presented(s, p)
            for s in scenarios
            if arrangements(s, compiled.presentations)[p.id].answered_by == p.id
        ]
        if listed:
            out.append((p.id, listed))
    return out


def _stage_name(step: str, presentation: str) -> str:
    """The stage log's name: the step's, suffixed with the presentation (not the original)."""
    if presentation == ORIGINAL:
        return step
    safe = re.sub(r"[^a-z0-9_-]+", "-", presentation.lower())[:32]
    if safe != presentation:  # a declared id is free text: keep two ids' logs apart
        safe += "-" + hashlib.sha256(presentation.encode()).hexdigest()[:8]
    return f"{step}.{safe}"


def _run_agent(
    agent: _Agent,
    scenarios: list[dict[str, Any]],
    condition: str,
    presentation: str,
    console: Console,
) -> tuple[dict[str, list[Triplet]], Counter[str], list[Prompt], dict[str, dict[str, Any]]]:
    """Generate, review, revise and answer for the scenarios as one presentation lists their
    options (every step's prompt shows them in that order, with its labels). Returns the
    chains, the unusable answers, the answer prompts and the answers (keyed by prompt id)."""
    from harness.evaluation.order import prompt_id

    runner, v, compiled, reviewer = agent.runner, agent.v, agent.compiled, agent.reviewer
    predicates, targets = agent.predicates, agent.targets
    chains: dict[str, list[Triplet]] = {}
    rejected_answers: Counter[str] = Counter()
    gen = _stage(
        runner,
        _stage_name("generate", presentation),
        [
            StageRequest(
                s["scenario_id"],
                [
                    {
                        "role": "user",
                        "content": steps.generate_prompt(
                            v, s, targets[s["scenario_id"]], predicates
                        ),
                    }
                ],
                steps.generate_schema(v),
                "kgbench_triplets",
            )
            for s in scenarios
        ],
        console,
    )
    for s in scenarios:
        sid = s["scenario_id"]
        parsed = _parsed(gen.get(sid))
        if parsed is None:
            rejected_answers["generate_unparsed"] += 1
        chains[sid] = _proposals(
            parsed, s, v.max_triplets, reviewer, rejected_answers, compiled.population_of(s)
        )
    by_id = {s["scenario_id"]: s for s in scenarios}
    for k in range(1, v.max_revisions + 1):
        pending = {
            sid: [t for t in ts if t.final.status == "refuted"] for sid, ts in chains.items()
        }
        pending = {sid: ts for sid, ts in pending.items() if ts}
        if not pending:
            break
        requests = []
        for sid, ts in pending.items():
            items = [
                (
                    t.index,
                    t.final.triplet_text(),
                    correction_text(t.final, compiled.entities) if agent.informed else None,
                )
                for t in ts
            ]
            text = steps.revise_prompt(v, by_id[sid], targets[sid], items, predicates)
            requests.append(
                StageRequest(
                    sid,
                    [{"role": "user", "content": text}],
                    steps.revise_schema(v),
                    "kgbench_revisions",
                )
            )
        answers = _stage(runner, _stage_name(f"revise-{k}", presentation), requests, console)
        for sid, ts in pending.items():
            parsed = _parsed(answers.get(sid))
            revisions = parsed.get("revisions") if isinstance(parsed, dict) else None
            if not isinstance(revisions, list):
                rejected_answers["revise_unparsed"] += 1
                continue
            by_index = {t.index: t for t in ts}
            seen: set[int] = set()
            for r in revisions:
                i = r.get("index") if isinstance(r, dict) else None
                if not isinstance(i, int) or i not in by_index or i in seen:
                    rejected_answers["revision_unknown_index"] += 1
                    continue
                seen.add(i)
                by_index[i].verdicts.append(reviewer.review(r, compiled.population_of(by_id[sid])))

    answer_prompts: list[Prompt] = []
    requests = []
    for s in scenarios:
        sid = s["scenario_id"]
        context = _context(compiled, s, chains[sid], condition)
        block = _answer_block(v, compiled, s, chains[sid], context)
        content = agent.renderer.env.get_template("frame.j2").render(
            scenario=s, target_outcome=targets[sid], context_block=block
        )
        record = prompt_record(sid, condition, content)
        if presentation != ORIGINAL:
            record = replace(
                record,
                prompt_id=prompt_id(sid, condition, presentation),
                presentation=presentation,
            )
        answer_prompts.append(record)
        requests.append(StageRequest(record.prompt_id, record.messages, agent.schema))
    answers = _stage(runner, _stage_name("answer", presentation), requests, console)
    return chains, rejected_answers, answer_prompts, answers


def _response_schema(folder: RunFolder, compiled: CompiledDomain) -> dict[str, Any]:
    """The response schema the run's prompts ask for (run.json's, after `kgbench prompts`),
    else the compiled domain's: the C5 answer uses the same JSON contract as C1-C4."""
    if folder.run_json.exists():
        return folder.response_schema(compiled)[1]
    path = compiled.schema_path("response")
    return read_json_object(path, "JSON Schema")


def _stage(
    runner: StageConfig, name: str, requests: list[StageRequest], console: Console
) -> dict[str, dict[str, Any]]:
    result = run_stage(runner, Stage(name, requests), console)
    if not result.complete:
        raise UserError(
            f"stage {name} is not finished (batches submitted); run the same command again"
        )
    return result.records


def _parsed(record: dict[str, Any] | None) -> Any:
    if not record or record.get("status") != "ok" or not record.get("parse_ok"):
        return None
    return record.get("parsed")


def _proposals(
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


def _candidate_id(scenario: dict[str, Any], t: Triplet) -> str:
    from harness.probe.names import name_key

    for c in scenario["candidates"]:
        if (
            name_key(c["label"]) == name_key(t.candidate)
            or c["intervention_id"] == t.final.subject_id
        ):
            return c["intervention_id"]
    return ""


def _verified(ts: list[Triplet]) -> list[Triplet]:
    return [t for t in ts if t.final.status == "verified"]


def _context(compiled: Any, scenario: dict[str, Any], ts: list[Triplet], condition: str) -> dict:
    """The verified assertions as an extracted context (contract.Context): what the scorer's
    grounding metrics compare citations and claims with, as for C2-C4."""
    graph = compiled.graph
    by_id = {a["assertion_id"]: a for a in graph["assertions"]}
    evidence = {e["evidence_id"]: e for e in graph["evidence_sources"]}
    supports: dict[str, list[str]] = {}
    for link in graph.get("supports", []):
        supports.setdefault(link["assertion_id"], []).append(link["evidence_id"])
    entities = compiled.entities

    def ent(eid: str) -> dict[str, str]:
        e = entities.get(eid, {})
        return {"id": eid, "name": e.get("name", eid), "category": e.get("category", "")}

    paths, assertions = [], {}
    for t in _verified(ts):
        paths.append(
            {"candidate_id": _candidate_id(scenario, t), "assertion_ids": t.final.assertion_ids}
        )
        for aid in t.final.assertion_ids:
            a = by_id[aid]
            assertions[aid] = {
                **a,
                "subject": ent(a["subject_id"]),
                "object": ent(a["object_id"]),
                "evidence": [evidence[e] for e in sorted(supports.get(aid, [])) if e in evidence],
            }
    ids = [c["intervention_id"] for c in scenario["candidates"]]
    target = scenario["target_outcome_id"]
    return {
        "format_version": Context.FORMAT,
        "domain": compiled.name,
        "scenario_id": scenario["scenario_id"],
        "condition": condition,
        "parameters": {"candidate_ids": ids, "target_id": target},
        "entities": {eid: ent(eid) for eid in [*ids, target]},
        "sections": [
            {
                "name": "verified_triplets",
                "title": "Verified triplets",
                "shape": "candidate_edges",
                "paths": paths,
            }
        ],
        "assertions": dict(sorted(assertions.items())),
    }


def _answer_block(
    v: Any, compiled: Any, scenario: dict[str, Any], ts: list[Triplet], context: dict
) -> str:
    lines = [
        "",
        "# Grounded context: Verify-and-revise",
        v.prompts["answer"],
        "",
        "## Verified triplets",
    ]
    names = {c["intervention_id"]: c["label"] for c in scenario["candidates"]}
    for path in context["sections"][0]["paths"]:
        rows = [
            steps.assertion_line(
                context["assertions"][aid],
                compiled.entities,
                ", ".join(e["evidence_id"] for e in context["assertions"][aid]["evidence"])
                or "none",
            )
            for aid in path["assertion_ids"]
        ]
        if len(rows) > 1 and path["candidate_id"] in names:
            lines.append(f"Pathway from {names[path['candidate_id']]}:")
            lines += [f"  {i}. {row}" for i, row in enumerate(rows, 1)]
        else:
            lines += [f"- {row}" for row in rows]
    if not context["sections"][0]["paths"]:
        lines.append("(no triplet was verified)")
    unverifiable = [t for t in ts if t.final.status == "unverifiable"]
    if unverifiable:
        lines += ["", "## Unverified (names not found in the graph)"]
        lines += [f"- {t.final.triplet_text()}" for t in unverifiable]
    return "\n".join(lines) + "\n"


def _append_answers(
    folder: RunFolder, slug: str, answers: dict[str, dict[str, Any]], condition: str
) -> None:
    """The answer records into the model's responses log (under the runner's lock), as
    `<scenario>/<condition>` prompts: scored and paired with C1-C4 like any other."""
    folder.responses_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(folder.response_lock(slug)):
        log = JsonlLog(folder.response_log(slug))
        existing, _ = log.load()
        rows = []
        for prompt_id, record in answers.items():
            params = {k: v for k, v in (record.get("params") or {}).items() if k != "schema_sha256"}
            row = {**record, "prompt_id": prompt_id, "condition": condition, "replicate": 0}
            row["params"] = params
            row["key"] = f"{condition}:{record['key']}"
            if existing.get(row["key"]) != row:
                rows.append(row)
        if rows:
            log.append(rows)
        log.close()


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

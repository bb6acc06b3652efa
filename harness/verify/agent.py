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
from harness.prompt_file import Prompt
from harness.runfolder import RunFolder
from harness.runner.log import JsonlLog, RunLock
from harness.runner.stage import Stage, StageConfig, StageRequest, run_stage, stage_spec
from kgbench.contract import VerifySummary
from kgbench.errors import UserError
from kgbench.io import read_json_object

from . import steps
from .chains import (
    Triplet,
    apply_revisions,
    explain_chain,
    parsed_answer,
    proposals,
    refuted,
    summarize,
)
from .graph_check import Reviewer, VerifySettings, correction_text
from .verified_context import answer_block, verified_context

__all__ = ["VerifyConfig", "VerifySettings", "explain_chain", "run_verify", "summarize"]

# What the revise step is shown of a refuted triplet (conditions.yaml `reviser`).
REVISERS = ("uninformed", "informed")


@dataclass(frozen=True)
class VerifyConfig:
    run_dir: Path
    runner: StageConfig  # the model and runner options; out_dir is set here
    condition: str = "C5"
    database: str | None = None
    order_variants: bool = False  # also rerun the agent per declared presentation
    reviser: str | None = None  # None: the condition's declared one (uninformed, KGARevion)
    compiled: CompiledDomain | None = None  # the caller's open handle; None: the run's own


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
    runner = _with_reference(config.runner, compiled, scenarios)
    slug = stage_spec(runner).slug
    out = folder.verify_dir(slug)
    runner = replace(runner, out_dir=out / "stages")
    reviewer = Reviewer(driver, compiled, settings, config.database)
    reviser = _reviser(config, v)
    renderer = PromptRenderer(compiled)
    agent = _Agent(
        runner,
        v,
        compiled,
        reviewer,
        renderer,
        {p["name"]: p for p in compiled.graph["predicates"]},
        {s["scenario_id"]: renderer.target_outcome(s) for s in scenarios},
        _response_schema(folder, compiled),
        reviser == "informed",
    )
    shown = (
        _presentations(compiled, scenarios) if config.order_variants else [(ORIGINAL, scenarios)]
    )

    with RunLock(out / ".verify.lock"), closing(reviewer):
        answer_prompts: list[Prompt] = []
        summary: dict[str, Any] = {}
        per_presentation: dict[str, Any] = {}
        for presentation, listed in shown:
            chains, rejected_answers, prompts, answers = _run_agent(
                agent, listed, config.condition, presentation, console
            )
            answer_prompts += prompts
            if presentation == ORIGINAL:
                # the scorer's grounding metrics read the original order's verified context
                folder.write_contexts(
                    [
                        verified_context(compiled, s, chains[s["scenario_id"]], config.condition)
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


def _with_reference(
    runner: StageConfig, compiled: CompiledDomain, scenarios: list[dict[str, Any]]
) -> StageConfig:
    """`ref:<name>`: generate and revise are the reference verifier's, the answer step is
    <name>'s (oracle, context-reader, ...), logged under that name's slug so C5 pairs with
    the same responder's C1-C4 answers. Any other model, or a caller's own respond, as is."""
    if not runner.model.startswith("ref:") or runner.respond is not None:
        return runner
    from harness.evaluation.responders import is_responder, respond

    from .responders import stage_respond

    name = runner.model.partition(":")[2].strip()
    if not is_responder(name):
        respond(name, "")  # raises the unknown-responder message
    return replace(runner, responders=(name,), respond=stage_respond(compiled, scenarios))


def _reviser(config: VerifyConfig, v: Any) -> str:
    """The reviser asked for, else the condition's declared one; the informed one needs its
    declared instruction."""
    reviser = config.reviser or v.reviser
    if reviser not in REVISERS:
        raise UserError(f"unknown reviser '{reviser}'; expected one of {', '.join(REVISERS)}")
    if reviser == "informed" and "revise_informed" not in v.prompts:
        raise UserError(
            f"condition {config.condition} declares no informed reviser's instruction "
            "(prompts.revise_informed in conditions.yaml)"
        )
    return reviser


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
    rejected_answers: Counter[str] = Counter()
    chains = _generate(agent, scenarios, presentation, console, rejected_answers)
    by_id = {s["scenario_id"]: s for s in scenarios}
    for k in range(1, agent.v.max_revisions + 1):
        if not _revise(
            agent, by_id, chains, f"revise-{k}", presentation, console, rejected_answers
        ):
            break
    prompts, answers = _answer(agent, scenarios, chains, condition, presentation, console)
    return chains, rejected_answers, prompts, answers


def _generate(
    agent: _Agent,
    scenarios: list[dict[str, Any]],
    presentation: str,
    console: Console,
    rejected_answers: Counter[str],
) -> dict[str, list[Triplet]]:
    """The generate step: one request per scenario; each answer's triplets reviewed."""
    v, targets = agent.v, agent.targets
    requests = [
        StageRequest(
            s["scenario_id"],
            [
                {
                    "role": "user",
                    "content": steps.generate_prompt(
                        v, s, targets[s["scenario_id"]], agent.predicates
                    ),
                }
            ],
            steps.generate_schema(v),
            "kgbench_triplets",
        )
        for s in scenarios
    ]
    gen = _stage(agent.runner, _stage_name("generate", presentation), requests, console)
    chains: dict[str, list[Triplet]] = {}
    for s in scenarios:
        sid = s["scenario_id"]
        parsed = parsed_answer(gen.get(sid))
        if parsed is None:
            rejected_answers["generate_unparsed"] += 1
        chains[sid] = proposals(
            parsed,
            s,
            v.max_triplets,
            agent.reviewer,
            rejected_answers,
            agent.compiled.population_of(s),
        )
    return chains


def _revise(
    agent: _Agent,
    by_id: dict[str, dict[str, Any]],
    chains: dict[str, list[Triplet]],
    step: str,
    presentation: str,
    console: Console,
    rejected_answers: Counter[str],
) -> bool:
    """One revise step over the triplets still refuted (their correction shown to an
    informed reviser); False when none is left, so no step is sent."""
    pending = refuted(chains)
    if not pending:
        return False
    v, compiled = agent.v, agent.compiled
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
        text = steps.revise_prompt(v, by_id[sid], agent.targets[sid], items, agent.predicates)
        requests.append(
            StageRequest(
                sid,
                [{"role": "user", "content": text}],
                steps.revise_schema(v),
                "kgbench_revisions",
            )
        )
    answers = _stage(agent.runner, _stage_name(step, presentation), requests, console)
    for sid, ts in pending.items():
        apply_revisions(
            parsed_answer(answers.get(sid)),
            ts,
            agent.reviewer,
            rejected_answers,
            compiled.population_of(by_id[sid]),
        )
    return True


def _answer(
    agent: _Agent,
    scenarios: list[dict[str, Any]],
    chains: dict[str, list[Triplet]],
    condition: str,
    presentation: str,
    console: Console,
) -> tuple[list[Prompt], dict[str, dict[str, Any]]]:
    """The answer step: the usual frame with the verified triplets as its grounded block,
    one prompt per scenario (a presentation's under its own prompt id)."""
    from harness.evaluation.order import prompt_id

    answer_prompts: list[Prompt] = []
    requests = []
    for s in scenarios:
        sid = s["scenario_id"]
        context = verified_context(agent.compiled, s, chains[sid], condition)
        block = answer_block(agent.v, agent.compiled, s, chains[sid], context)
        content = agent.renderer.env.get_template("frame.j2").render(
            scenario=s, target_outcome=agent.targets[sid], context_block=block
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
    answers = _stage(agent.runner, _stage_name("answer", presentation), requests, console)
    return answer_prompts, answers


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

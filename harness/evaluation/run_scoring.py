"""`kgbench score`: a run folder's responses logs scored with the compiled panel of the run's
domain (generated/<domain>/metrics.json), written as per-item scores (items.jsonl), the
aggregated panel (panel.json) and, when the run holds reordered presentations, the
order-sensitivity figures (order.json).

Every (prompt, replicate) becomes one item, scored, failed or missing, never silently dropped;
each answer is judged once, by the one judge (a record already judged under the same contract
is taken as judged, see compiled_scorer.CompiledScorer.judgement_of).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from harness.runfolder import RunFolder
from kgbench.contract import OrderFigures, ScoredPanel
from kgbench.errors import UserError
from kgbench.io import jsonl_text

from .compiled_scorer import readings, with_causal_reading
from .responses_log import ResponsesLog
from .run_inputs import RunInputs, context_volume


def parse_pair(text: str) -> tuple[str, str]:
    """ "C4:C2" -> ("C4", "C2"): the delta is the first minus the second."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise UserError(f"--pair expects two conditions as A:B (e.g. C4:C2), got {text!r}")
    a, b = (p.strip() for p in parts)
    if a == b:
        raise UserError(f"--pair {text!r} compares a condition with itself")
    return a, b


def score_items(inputs: RunInputs, log: ResponsesLog, replicates: int) -> list[dict[str, Any]]:
    """One item per (prompt, replicate): scored, failed or missing, never silently dropped."""
    scorer = inputs.scorer
    items = []
    for prompt in inputs.prompts:
        sid, cond = prompt.scenario_id, prompt.condition
        scenario = inputs.scenarios[sid]
        gold = scenario["gold"]
        for rep in range(replicates):
            rec = log.records.get((prompt.prompt_id, rep))
            item: dict[str, Any] = {
                "prompt_id": prompt.prompt_id,
                "scenario_id": sid,
                "condition": cond,
                "category": scenario.get("category", "uncategorised"),
                "replicate": rep,
            }
            if rec is None or rec.get("status") != "ok":
                item["status"] = "missing" if rec is None else "failed"
                item["error"] = None if rec is None else str(rec.get("error"))[:500]
                items.append(item)
                continue
            verdict, whole = scorer.judgement_of(rec)
            result = scorer.score(gold, None, inputs.context(sid, cond), verdict)
            item.update(
                status="scored",
                parse_status=result.parse_status,
                parse_ok=whole and result.parse_ok,
                schema_ok=result.schema_ok,
                problems=list(result.problems) or (["runner could not parse"] if not whole else []),
                unknown_ids=list(result.unknown_ids),
                scores=result.scores,
            )
            items.append(item)
    return items


DEFAULT_PAIRS = (("C4", "C2"),)


def default_pairs(inputs: RunInputs) -> list[tuple[str, str]]:
    """The contrasts a report shows unless told otherwise: C4 vs C2, and, for each
    verify-and-revise condition whose answer prompts this run holds (C5 ran), that condition
    vs C4 (verification vs the richest retrieval) and vs C1 (vs no grounding); and for each
    volume-matched control this run answered (C7: C3's block padded to C4's length), its
    reference vs it (content at equal length) and it vs its base (length at equal content)."""
    known = [c.id for c in inputs.conditions]
    out = [p for p in DEFAULT_PAIRS if all(c in known for c in p)]
    ran = {p.condition for p in inputs.folder.verify_prompts()}
    for cond in (c.id for c in inputs.conditions if c.verify is not None and c.id in ran):
        out += [(cond, other) for other in ("C4", "C1") if other in known]
    answered = {p.condition for p in inputs.prompts}
    for c in inputs.conditions:
        if c.volume_match is not None and c.id in answered:
            out += [(c.volume_match.reference, c.id), (c.id, c.volume_match.base)]
    return out


def score_run(
    run_dir: Path,
    log: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    bootstrap: int = 10000,
    seed: int = 0,
    domain: str | CompiledDomain | None = None,
    causal_reading: str | None = None,
) -> list[Path]:
    """`kgbench score`: items.jsonl and panel.json under scores/<log>/ for each responses
    log (or for responses/<log>.jsonl alone), and order.json when the run holds reordered
    presentations (`kgbench prompts --order-variants`).

    `pairs` None: `default_pairs` (C4 vs C2, plus C5 vs C4 and C5 vs C1 when C5 ran).
    `causal_reading`: score the causal-edge metrics under another declared reading
    (gold_path, the paper's); panel.json's `readings` records the one used."""
    from .stats import build_panel

    if bootstrap < 100:
        raise UserError(f"--bootstrap must be at least 100 resamples, got {bootstrap}")
    folder = RunFolder.open(run_dir)
    inputs = RunInputs(folder, domain)
    # the compiled panel is checked before any log is read
    inputs.scorer = with_causal_reading(inputs.scorer, causal_reading)
    known = [c.id for c in inputs.conditions]
    if pairs is None:
        pairs = default_pairs(inputs)
    for a, b in pairs:
        for c in (a, b):
            if c not in known:
                raise UserError(
                    f"--pair names unknown condition '{c}'; this domain declares {', '.join(known)}"
                )
    # A verify-and-revise condition (C5) is in the panel only when it ran (`kgbench verify`
    # wrote its answer prompts), and an optional one (a volume-matched control) only when its
    # prompts were rendered; otherwise it would show as a condition nobody answered.
    ran = {p.condition for p in inputs.prompts}
    idle = {
        c.id for c in inputs.conditions if (c.verify is not None or c.optional) and c.id not in ran
    }
    for c in (c for pair in pairs for c in pair if c in idle):
        how = (
            f"`kgbench verify --run-dir {folder.path} --model ...`"
            if inputs.compiled.condition(c).verify is not None
            else f"`kgbench extract --condition {c} --run-dir {folder.path}`, then prompts and run"
        )
        raise UserError(f"--pair names {c}, which did not run here: run {how} first")
    known = [c for c in known if c not in idle]
    paths = folder.response_logs(log)
    digest = inputs.scorer.contract.digest  # records judged under it are not judged again
    logs = [ResponsesLog.read(p, inputs.log_replicates(p), digest) for p in paths]
    replicates = inputs.replicates(logs)
    volume = context_volume(inputs)
    written = []
    for path, log in zip(paths, logs, strict=True):
        items = score_items(inputs, log, replicates)
        panel = build_panel(
            items,
            inputs.scorer.metrics,
            known,
            pairs=pairs,
            bootstrap=bootstrap,
            seed=seed,
            policy=inputs.scorer.policy,
        )
        known_prompts = {p.prompt_id for p in inputs.all_prompts}
        panel.update(
            domain=inputs.compiled.name,
            model=log.model,
            slug=path.stem,
            replicates=replicates,
            readings=readings(inputs.scorer.metrics),
            context_volume=volume,
            log={
                "unreadable_records": log.unreadable,
                "superseded_records": log.superseded,
                "out_of_range_records": log.out_of_range,
                "records_for_unknown_prompts": sum(
                    1 for pid, _ in log.records if pid not in known_prompts
                ),
            },
        )
        ScoredPanel.model_validate(panel)  # what we write keeps its contract (else a bug)
        order = order_figures(inputs, log, bootstrap, seed) if inputs.order_prompts else None
        if order is not None:
            OrderFigures.model_validate(order)
        folder.write_order(path.stem, order)
        written.append(folder.write_scores(path.stem, jsonl_text(items), panel))
    return written


def order_figures(
    inputs: RunInputs, log: ResponsesLog, bootstrap: int, seed: int
) -> dict[str, Any]:
    """scores/<slug>/order.json: per condition, accuracy, position bias, flip rate and the
    accuracy delta under each declared presentation, paired with the original order
    (harness.evaluation.order; replicate 0)."""
    from .order import ACCURACY, ORIGINAL, analyse, arrangements, as_named, choice
    from .order import prompt_id as order_prompt_id

    presentations = inputs.compiled.presentations
    names_of = [ORIGINAL, *(p.id for p in presentations)]
    accuracy = ACCURACY if any(m.name == ACCURACY for m in inputs.scorer.metrics) else None
    accuracy = accuracy or inputs.scorer.metrics[0].name
    conditions = [c.id for c in inputs.conditions]
    varied = sorted(
        {(p.scenario_id, p.condition) for p in inputs.order_prompts},
        key=lambda x: (conditions.index(x[1]), x[0]),
    )
    by_condition: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for sid, cond in varied:
        scenario = inputs.scenarios[sid]
        names = {c["intervention_id"]: c["label"] for c in scenario["candidates"]}
        rows = by_condition.setdefault(cond, {}).setdefault(sid, {})
        for name, arr in arrangements(scenario, presentations).items():
            rec = log.records.get((order_prompt_id(sid, cond, arr.answered_by), 0))
            if rec is None or rec.get("status") != "ok":
                continue
            verdict, _ = inputs.scorer.judgement_of(rec)  # the one judge, as the panel reads it
            chosen = choice(verdict, arr, names, inputs.scorer.lexicon)
            named = as_named(verdict, chosen, names)
            result = inputs.scorer.score(scenario["gold"], None, inputs.context(sid, cond), named)
            rows[name] = {
                "choice": chosen,
                "first": arr.ids[0] if arr.ids else "",
                "k": arr.k,
                "accuracy": result.scores.get(accuracy),
            }
    return {
        "format_version": OrderFigures.FORMAT,
        "model": log.model,
        "accuracy_metric": accuracy,
        "presentations": [
            {"id": ORIGINAL, "description": "The options as the scenario lists them."},
            *({"id": p.id, "description": p.description} for p in presentations),
        ],
        "settings": {"bootstrap": bootstrap, "seed": seed, "replicate": 0},
        "conditions": {
            cond: analyse(rows, names_of, bootstrap, f"{seed}:{cond}")
            for cond, rows in by_condition.items()
        },
    }

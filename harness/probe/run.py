"""`kgbench probe`: grow, map and score one model's causal graphs for every root of a domain.

Folder (inside any run folder, beside a QA run's files, so the report can join them):

    <run>/probe/<model-slug>/
      stages/<stage>.jsonl, <stage>.run.json   the runner's logs, one per stage
      graphs/<root_id>.json                    each generated graph with its provenance
      mapping.json                             every node-mapping decision
      scores.json                              per-root and overall scores, the curve
      probe.json                               what ran: domain, model, settings, stages

Stages: `expand-1` .. `expand-<max_depth>` (round d expands the nodes first seen at depth
d - 1), `edge-check`, and with `--verify-mapping` `verify-mapping`. Each is derived from the
answers logged by the previous ones, so running the same command again after a crash (even
kill -9) resends only what no log holds, and a finished probe re-runs without any request
(re-mapping and re-scoring, e.g. with an embedding model). Every file is written atomically.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from kgbench.contract import ProbeMapping, ProbeRun, ProbeScores
from kgbench.errors import UserError
from kgbench.io import atomic_write_json

from ..runfolder import RunFolder
from ..runner.log import RunLock
from ..runner.spec import safe_url
from ..runner.stage import Stage, StageConfig, StageRequest, run_stage, stage_spec
from .compiled import CompiledProbe
from .distances import DistanceIndex
from .expansion import GraphBuilder
from .graph import GeneratedGraph
from .mapping import SOFT_METHODS, Decision, Mapper
from .reference import ReferenceGraph
from .responders import ProbeResponder, check_responder
from .scoring import score_graphs


@dataclass(frozen=True)
class ProbeConfig:
    domain: str
    run_dir: Path
    runner: StageConfig  # model and runner options; out_dir is set per probe
    embedding_model: Path | None = None
    verify_mapping: bool = False
    limit_roots: int | None = None
    bootstrap: int = 2000
    seed: int = 0
    generated: Path | None = None


@dataclass
class ProbeOutcome:
    out_dir: Path
    complete: bool
    lines: list[str]
    scores_path: Path | None = None


def _runner(config: ProbeConfig, probe: CompiledProbe, reference: ReferenceGraph) -> StageConfig:
    """The stage config: the probe's responders for ref: models, logs under stages/."""
    model = config.runner.model
    responders: tuple[str, ...] = ()
    respond = None
    if model.startswith("ref:"):
        name = check_responder(model.partition(":")[2].strip())
        responders = (name,)
        responder = ProbeResponder(probe, reference)

        def respond(name: str, request: StageRequest) -> dict[str, Any]:
            answer = responder.answer_messages(name, request.messages)
            if answer is None:
                raise ValueError("not a probe prompt of this domain")
            return answer

    runner = replace(config.runner, responders=responders, respond=respond)
    slug = stage_spec(runner).slug
    return replace(runner, out_dir=RunFolder(config.run_dir).probe_dir(slug) / "stages")


def run_probe(config: ProbeConfig, console: Console | None = None) -> ProbeOutcome:
    console = console or Console(stderr=True, highlight=False)
    probe = CompiledProbe.open(config.domain, config.generated)
    if config.limit_roots is not None and config.limit_roots < 1:
        raise UserError("--limit-roots must be at least 1")
    if config.bootstrap < 0:
        raise UserError("--bootstrap must be 0 or more")
    reference = probe.reference_graph()
    runner = _runner(config, probe, reference)
    out_dir = Path(runner.out_dir).parent
    out_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(out_dir / ".probe.lock"):
        return _run(config, probe, reference, runner, out_dir, console)


def _stage(
    runner: StageConfig, name: str, requests: list[StageRequest], lines: list[str], console
) -> dict[str, dict[str, Any]] | None:
    """Run one stage; None when it did not finish (batches submitted without waiting)."""
    result = run_stage(runner, Stage(name, requests), console)
    lines.append(
        f"stage {name}: {len(requests)} requests ({result.tally.planned} distinct), "
        f"ok {result.tally.final_ok}, failed {result.tally.final_failed}, "
        f"missing {len(result.missing)}; this run sent {result.tally.sent_ok + result.tally.sent_failed}, "
        f"{result.tally.cached} from cache; cost ${result.tally.cost_usd:.4f}"
    )
    lines.extend(f"  {note}" for note in result.tally.notes)
    return result.records if result.complete else None


def _run(
    config: ProbeConfig,
    probe: CompiledProbe,
    reference: ReferenceGraph,
    runner: StageConfig,
    out_dir: Path,
    console: Console,
) -> ProbeOutcome:
    """Generate the graphs, map their names to the reference, score them, describe the run;
    a stage left unfinished (batches submitted) stops the run, to be resumed by the same
    command."""
    roots = probe.roots[: config.limit_roots] if config.limit_roots else probe.roots
    lines: list[str] = []
    stages: list[str] = []

    def incomplete(name: str) -> ProbeOutcome:
        lines.append(
            f"stage {name} is not finished (batches submitted); run the same command again to "
            "collect them and continue"
        )
        return ProbeOutcome(out_dir, False, lines)

    graphs = _generate(probe, roots, runner, stages, lines, console)
    if isinstance(graphs, str):
        return incomplete(graphs)
    for graph in graphs:
        atomic_write_json(out_dir / "graphs" / f"{graph.root_id}.json", graph.to_json())
    mapping = _map(config, probe, reference, runner, graphs, out_dir, stages, lines, console)
    if mapping is None:
        return incomplete("verify-mapping")
    decisions, summary = mapping
    scores = _score(config, probe, reference, runner.model, graphs, decisions, summary)
    scores_path = out_dir / "scores.json"
    atomic_write_json(scores_path, scores)
    described = {
        "format_version": ProbeRun.FORMAT,
        "domain": probe.name,
        "model": runner.model,
        "base_url": safe_url(runner.base_url),
        "roots": [r["id"] for r in roots],
        "stages": stages,
        "settings": probe.settings,
    }
    ProbeRun.model_validate(described)
    atomic_write_json(out_dir / "probe.json", described)
    lines += summary_lines(scores)
    return ProbeOutcome(out_dir, True, lines, scores_path)


def _generate(
    probe: CompiledProbe,
    roots: list[dict[str, str]],
    runner: StageConfig,
    stages: list[str],
    lines: list[str],
    console: Console,
) -> list[GeneratedGraph] | str:
    """The model's graphs, one per root: expansion to max_depth, then the edge checks. The
    name of the stage left unfinished instead, when one is."""
    settings = probe.settings
    builders = [GraphBuilder(probe, r["id"], r["name"]) for r in roots]
    for depth in range(int(settings["max_depth"])):
        name = f"expand-{depth + 1}"
        requests = [r for b in builders for r in b.expansion_requests(depth)]
        if not requests:
            break
        stages.append(name)
        records = _stage(runner, name, requests, lines, console)
        if records is None:
            return name
        for builder in builders:
            builder.absorb_expansion(depth, name, records)
    if int(settings["edge_checks_per_root"]) > 0:
        requests = [r for b in builders for r in b.edge_check_requests()]
        if requests:
            stages.append("edge-check")
            records = _stage(runner, "edge-check", requests, lines, console)
            if records is None:
                return "edge-check"
            for builder in builders:
                builder.absorb_edge_checks("edge-check", records)
    return [b.graph for b in builders]


def _map(
    config: ProbeConfig,
    probe: CompiledProbe,
    reference: ReferenceGraph,
    runner: StageConfig,
    graphs: list[GeneratedGraph],
    out_dir: Path,
    stages: list[str],
    lines: list[str],
    console: Console,
) -> tuple[dict[str, Decision], dict[str, Any]] | None:
    """Every generated name mapped to the reference graph (fuzzy, then embeddings when
    asked, then the model's check when asked), written to mapping.json; the decisions and
    their summary, or None when the model's check is not finished."""
    settings = probe.settings
    embedding = None
    if config.embedding_model is not None:
        from .embeddings import EmbeddingModel

        embedding = EmbeddingModel(config.embedding_model)
    mapper = Mapper(
        reference,
        float(settings["fuzzy_threshold"]),
        embedding,
        float(settings["embedding_threshold"]),
    )
    names = [n.name for g in graphs for n in sorted(g.nodes.values(), key=lambda n: n.index)]
    decisions = mapper.map_names(names)
    if config.verify_mapping:
        stages.append("verify-mapping")
        if not _verify(probe, reference, runner, decisions, lines, console):
            return None
    mapping = {
        "format_version": ProbeMapping.FORMAT,
        "domain": probe.name,
        "model": runner.model,
        "methods": {
            "fuzzy_threshold": settings["fuzzy_threshold"],
            "embedding_model": embedding.identity if embedding else None,
            "embedding_threshold": settings["embedding_threshold"] if embedding else None,
            "verified_by_model": config.verify_mapping,
        },
        "summary": _mapping_summary(decisions),
        "decisions": [decisions[k].to_json() for k in sorted(decisions)],
    }
    ProbeMapping.model_validate(mapping)  # what we write keeps its contract (else a bug)
    atomic_write_json(out_dir / "mapping.json", mapping)
    return decisions, mapping["summary"]


def _score(
    config: ProbeConfig,
    probe: CompiledProbe,
    reference: ReferenceGraph,
    model: str,
    graphs: list[GeneratedGraph],
    decisions: dict[str, Decision],
    mapping_summary: dict[str, Any],
) -> dict[str, Any]:
    """scores.json's content: the mapped graphs scored against the reference (distances in
    it, the curve, bootstrap intervals), with the settings they were scored under."""
    settings = probe.settings
    index = DistanceIndex(
        reference.node_ids, sorted(reference.edges), settings["path_mode"] == "directed"
    )
    scored = score_graphs(
        graphs,
        decisions,
        reference,
        index,
        int(settings["path_bound"]),
        int(settings["curve_max_k"]),
        config.bootstrap,
        config.seed,
    )
    scores = {
        "format_version": ProbeScores.FORMAT,
        "domain": probe.name,
        "model": model,
        "settings": {
            "path_bound": settings["path_bound"],
            "path_mode": settings["path_mode"],
            "curve_max_k": settings["curve_max_k"],
            "max_depth": settings["max_depth"],
            "concepts_per_answer": settings["concepts_per_answer"],
            "bootstrap": config.bootstrap,
            "seed": config.seed,
            "reference_edges": len(reference.edges),
            "reference_predicates": probe.reference_predicates,
        },
        "mapping": mapping_summary,
        **scored,
    }
    ProbeScores.model_validate(scores)
    return scores


def _verify(
    probe: CompiledProbe,
    reference: ReferenceGraph,
    runner: StageConfig,
    decisions: dict[str, Decision],
    lines: list[str],
    console: Console,
) -> bool:
    """Ask the model whether each fuzzy or embedding match is the same concept."""
    soft = [d for d in decisions.values() if d.method in SOFT_METHODS and d.entity_id]
    requests = []
    for d in soft:
        rid = f"verify/{hashlib.sha256(d.key.encode()).hexdigest()[:16]}"
        candidate = reference.entities[d.entity_id].name
        requests.append(
            StageRequest(
                rid,
                probe.messages("verify_mapping", name=d.name, candidate=candidate),
                probe.schema("verify_mapping"),
                probe.schema_name("verify_mapping"),
            )
        )
    if not requests:
        lines.append("stage verify-mapping: no fuzzy or embedding match to verify")
        return True
    records = _stage(runner, "verify-mapping", requests, lines, console)
    if records is None:
        return False
    for d, request in zip(soft, requests, strict=True):
        record = records.get(request.request_id)
        if record is None or record["status"] != "ok" or not record["schema_ok"]:
            continue  # unverified: the match stands, `verified` stays None
        if record["parsed"]["same_concept"]:
            d.verified = True
        else:
            d.verified = False
            d.rejected_entity_id, d.entity_id = d.entity_id, None
    return True


def _mapping_summary(decisions: dict[str, Decision]) -> dict[str, Any]:
    by_method: dict[str, int] = {}
    for d in decisions.values():
        method = d.method if d.entity_id or d.verified is not False else "rejected_by_verifier"
        by_method[method] = by_method.get(method, 0) + 1
    return {
        "names": len(decisions),
        "mapped": sum(1 for d in decisions.values() if d.entity_id),
        "unmapped": sum(1 for d in decisions.values() if not d.entity_id),
        "by_method": dict(sorted(by_method.items())),
    }


def _fmt_ci(entry: dict[str, Any]) -> str:
    text = f"{entry['mean']:.3f}" if entry.get("mean") is not None else "NA"
    if entry.get("ci_low") is not None:
        text += f" [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}]"
    return text


def summary_lines(scores: dict[str, Any]) -> list[str]:
    o = scores["overall"]
    k = scores["settings"]["path_bound"]
    m = scores["mapping"]
    return [
        f"probe {scores['model']} on {scores['domain']}: {o['roots']} of "
        f"{o.get('roots_run', o['roots'])} roots scored, {o['nodes']} nodes, "
        f"{o['edges']} edges, {o['failures']} failed or unparseable answers",
        f"precision@{k} {_fmt_ci(o['precision'])}, recall@{k} {_fmt_ci(o['recall'])} "
        f"(mean over roots, 95% bootstrap CI; {scores['settings']['path_mode']} paths)",
        f"exact-edge precision {_fmt_ci(o['exact_precision'])}, recall {_fmt_ci(o['exact_recall'])}",
        f"mapping: {m['mapped']} of {m['names']} names mapped ({m['by_method']}); node share "
        f"{_fmt_ci(o['mapped_share'])}",
        "curve (k: precision/recall, mean over roots): "
        + ", ".join(f"{c['k']}: {c['precision']:.2f}/{c['recall']:.2f}" for c in scores["curve"]),
        *(
            [
                "out of scope (no reference edge at the root; not counted): "
                + ", ".join(o["out_of_scope_roots"])
            ]
            if o.get("out_of_scope_roots")
            else []
        ),
    ]

"""Running a study: one run folder, every model through the ordinary runner, then the analysis.

    runs/study-<name>/
      run.json, scenarios.jsonl, contexts/, prompts/prompts.jsonl   a run folder as usual
      responses/<model>.jsonl (+ .run.json)   one log per study model, named after the model
      scores/<model>/items.jsonl, panel.json  `kgbench score` output per model
      study/study.json                        the study as declared and resolved (no secrets)
      study/prepared.json                     what the contexts were extracted from
      study/server.json                       the port of the study's reference server
      study/statistics.json                   every comparison, usage and provenance
      report/study.html                       the self-contained study report

Every step is the one the single commands run (extraction, `build_prompts`, `run_model`,
`score_run`), and each is idempotent, so a study killed at any point (even with SIGKILL)
and started again sends only the requests its logs do not hold yet: the runner skips what a
log holds, and the study's own reference server comes back on the port the killed one used
(the endpoint is part of every request's identity, so a new port would be a new identity).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from kgbench import contract
from kgbench.cliutil import escape
from kgbench.contract import StudyDescription
from kgbench.errors import UserError
from kgbench.io import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    exclusive_lock,
    read_jsonl,
)
from kgbench.locations import RUNS_DIR
from kgbench.untrusted import decode, iter_jsonl_text, load_json_object, load_json_or_none

from ..compiled import CompiledDomain
from ..runfolder import RunFolder
from .config import StudyConfig, StudyModel

LOCAL_KEY = "local-reference-server"  # the loopback server checks no key; never a real one


@dataclass(frozen=True)
class StudyPaths:
    run_dir: Path

    @property
    def folder(self) -> Path:
        return self.run_dir / "study"

    @property
    def study_json(self) -> Path:
        return self.folder / "study.json"

    @property
    def prepared(self) -> Path:
        return self.folder / "prepared.json"

    @property
    def lock(self) -> Path:
        return self.folder / ".study.lock"

    @property
    def server(self) -> Path:
        return self.folder / "server.json"

    @property
    def statistics(self) -> Path:
        return self.folder / "statistics.json"

    @property
    def report(self) -> Path:
        return self.run_dir / "report" / "study.html"


def default_run_dir(config: StudyConfig) -> Path:
    return RUNS_DIR / f"study-{config.name}"


def run_study(config: StudyConfig, run_dir: Path, console: Console) -> tuple[Path, Path]:
    """The whole study; returns (statistics.json, study.html)."""
    paths = StudyPaths(Path(run_dir))
    compiled = CompiledDomain.open(config.domain)
    preflight(config)
    # one study per run folder at a time, refused before anything is claimed or started
    # (reliability review 2026-12, conc.study: the second one failed later, on the first's
    # busy server port, with a remedy that would have deleted the running study's answers)
    busy = (
        f"another `kgbench study` is running on {paths.run_dir} (it holds {paths.lock}); "
        "wait for it to finish (or stop it) and run again; nothing was changed"
    )
    check_claim(config, paths)  # a folder that is not this study's gets no lock file either
    with exclusive_lock(paths.lock, busy):
        claim(config, paths)
        prepare(config, paths, compiled, console)
        run_models(config, paths, console)
        return analyse(config, paths, compiled, console)


# --- the run folder ------------------------------------------------------------------------


def preflight(config: StudyConfig) -> None:
    """What would stop a model half-way through the study, checked before anything runs: a
    model of kind openai without OPENAI_API_KEY would fail after the models before it ran."""
    needs_key = [m.name for m in config.models if m.kind == "openai" and not m.base_url]
    if needs_key and not os.environ.get("OPENAI_API_KEY", "").strip():
        raise UserError(
            f"OPENAI_API_KEY is not set; model(s) {', '.join(needs_key)} of kind openai need it "
            f"({config.path}); export it, or point them at another server with kind compatible"
        )


def identity(config: StudyConfig) -> dict[str, Any]:
    """What makes two invocations the same study: the same items under the same design."""
    from harness.release.index import release_digest

    return {
        "domain": config.domain,
        "release_digest": release_digest(config.release_path),
        "conditions": list(config.conditions),
        "replicates": config.replicates,
    }


def claim(config: StudyConfig, paths: StudyPaths) -> None:
    """Make `run_dir` this study's folder, or refuse one that holds something else.

    A folder that holds another study's design (another release, conditions or replicates),
    or a run folder that is not a study's, is refused: answers to different items must never
    meet in one analysis. Models may be added to a study between invocations (only the new
    ones are sent) and sampling changes are refused per log by the runner."""
    ours = check_claim(config, paths)
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(
        paths.study_json,
        {
            "format_version": StudyDescription.FORMAT,
            "name": config.name,
            "description": config.description,
            "file": str(config.path),
            "file_sha256": config.sha256,
            "identity": ours,
            "release": {
                "path": str(config.release_path),
                "version": config.release_version,
                "pinned_digest": config.release_digest,
            },
            "models": [m.describe() for m in config.models],
            "statistics": statistics_settings(config),
        },
    )


def check_claim(config: StudyConfig, paths: StudyPaths) -> dict[str, Any]:
    """`claim`'s refusals, writing nothing; returns this study's identity. The study's lock
    file alone does not make a folder another's."""
    run_dir = paths.run_dir
    ours = identity(config)
    if paths.study_json.is_file():
        try:
            described = load_json_object(paths.study_json, "study description")
            previous = described["identity"]
        except (UserError, KeyError, TypeError):
            raise UserError(f"{paths.study_json} is not a study description") from None
        contract.check_version(
            StudyDescription,
            described,
            paths.study_json,
            remedy=f"give this study its own --run-dir (or study {run_dir} with that kgbench)",
        )
        if previous != ours:
            what = next(k for k in ours if previous.get(k) != ours[k])
            raise UserError(
                f"{run_dir} holds another study ({what} {previous.get(what)!r}, this study "
                f"{ours[what]!r}); give this study its own --run-dir"
            )
    elif run_dir.exists() and (
        any(p != paths.folder for p in run_dir.iterdir())
        or (paths.folder.is_dir() and any(p != paths.lock for p in paths.folder.iterdir()))
    ):
        raise UserError(
            f"{run_dir} is not empty and holds no study; give the study its own --run-dir"
        )
    return ours


def statistics_settings(config: StudyConfig) -> dict[str, Any]:
    return {
        "bootstrap": config.bootstrap,
        "permutations": config.permutations,
        "seed": config.seed,
        "holm_family": config.holm_family,
        "interaction_baseline": config.interaction_baseline,
    }


def prepare(
    config: StudyConfig, paths: StudyPaths, compiled: CompiledDomain, console: Console
) -> None:
    """scenarios.jsonl from the release, contexts from Neo4j (once), prompts, run.json."""
    from harness.evaluation.prompts import build_prompts

    run_dir = paths.run_dir
    folder = RunFolder(run_dir)
    release_scenarios = (config.release_path / "scenarios.jsonl").read_bytes()
    target = folder.scenarios_file
    if not target.is_file() or target.read_bytes() != release_scenarios:
        atomic_write_bytes(target, release_scenarios)
    scenarios = [
        item
        for _, item in iter_jsonl_text(
            decode(release_scenarios, config.release_path / "scenarios.jsonl"),
            str(config.release_path / "scenarios.jsonl"),
            "scenario",
        )
    ]
    grounded = grounded_conditions(config, compiled)
    fingerprint = contexts_fingerprint(config, compiled)
    done = (
        paths.prepared.is_file()
        and load_json_or_none(paths.prepared, max_depth=None) == fingerprint
        and all(
            folder.context_path(s["scenario_id"], c).is_file() for s in scenarios for c in grounded
        )
    )
    if grounded and not done:
        n = extract_contexts(compiled, scenarios, grounded, run_dir, console)
        console.print(f"extracted {n} contexts ({len(scenarios)} scenarios x {len(grounded)})")
    atomic_write_json(paths.prepared, fingerprint)
    _, count = build_prompts(run_dir, config.domain, list(config.conditions))
    folder.describe(
        compiled,
        conditions=list(config.conditions),
        replicates=config.replicates,
        study=config.name,
    )
    console.print(
        f"study {escape(config.name)}: release {escape(config.release_version)}, "
        f"{len(scenarios)} scenarios x {len(config.conditions)} conditions = {count} prompts, "
        f"{config.replicates} replicate(s), {len(config.models)} models"
    )
    if config.excluded:
        console.print(
            f"not in this study: {', '.join(config.excluded)} (verify-and-revise, a multi-step "
            "agent): run `kgbench verify` on this run folder for it"
        )
    release = config.raw.get("release") or {}
    unpinned = release.get("path") and not config.release_digest
    if unpinned and not (config.release_path.parent / "index.json").is_file():
        console.print(
            f"warning: release {escape(config.release_path)} is given by path, with no digest "
            "and no release index beside it: it was checked against its own manifest only, "
            "which cannot reveal an edit whose hashes were recomputed; pin `release.digest` "
            "(printed by `kgbench publish`)"
        )


def grounded_conditions(config: StudyConfig, compiled: CompiledDomain) -> list[str]:
    """The study's conditions that carry a grounded context (C1 has none)."""
    return [c for c in config.conditions if compiled.condition(c).query]


def contexts_fingerprint(config: StudyConfig, compiled: CompiledDomain) -> dict[str, Any]:
    """What the run folder's contexts were extracted for: a different release, compile or
    set of conditions means extracting again."""
    from harness.graph.stamp import manifest_digest

    return {
        **identity(config),
        "compiled_manifest_sha256": manifest_digest(compiled),
        "grounded": grounded_conditions(config, compiled),
    }


def extract_contexts(
    compiled: CompiledDomain,
    scenarios: list[dict[str, Any]],
    conditions: list[str],
    run_dir: Path,
    console: Console,
) -> int:
    """Every grounded context from Neo4j, as `kgbench extract --run-dir` writes them.

    As `kgbench pilot` does: the embedded Neo4j is started unless NEO4J_URI points elsewhere,
    and the domain is loaded (idempotent, namespaced by its label) when the graph does not
    hold this compile. Nothing is written unless every context checks out."""
    from harness.graph.extract import check_against_compile, extract, warm_up
    from harness.graph.load import load
    from harness.graph.stamp import require_current
    from harness.neo4j import connection_settings, open_driver, start

    if not os.environ.get("NEO4J_URI"):
        start()
    settings = connection_settings()
    contexts = []
    with open_driver(settings) as driver:
        try:
            require_current(driver, compiled, settings.database)
        except UserError:
            console.print(f"loading {escape(compiled.name)} into Neo4j")
            load(driver, compiled, settings.database)
            require_current(driver, compiled, settings.database)
        warm_up(driver, compiled, scenarios, settings.database)
        for scenario in scenarios:
            for cond in conditions:
                ctx = extract(driver, compiled, scenario, cond, settings.database)
                if ctx is None:
                    continue
                check_against_compile(ctx, compiled, scenario)
                contexts.append(ctx)
    return RunFolder(run_dir).write_contexts(contexts)


# --- the models ----------------------------------------------------------------------------


def run_models(config: StudyConfig, paths: StudyPaths, console: Console) -> None:
    """Each model through `run_model`, one after another, into responses/<model>.jsonl."""
    from harness.runner.api import RunConfig, run_model
    from harness.runner.job import BatchOptions

    with _study_server(config, paths) as server_url:
        for m in config.models:
            console.print(f"[bold]-- model {escape(m.name)}[/] ({escape(m.spec)})")
            run = RunConfig(
                run_dir=paths.run_dir,
                model=m.spec,
                base_url=server_url if m.via_study_server else m.base_url,
                settings=m.settings,
                concurrency=m.concurrency,
                batch=m.batch,
                price_in=m.price_in,
                price_out=m.price_out,
                use_cache=not m.via_study_server,
                log_name=m.name,
                batch_options=BatchOptions(poll_interval_s=0.5)
                if m.via_study_server
                else BatchOptions(),
            )
            with _local_key(m):
                result = run_model(run, console)
            for line in result.lines:
                console.print(line, markup=False)


@contextlib.contextmanager
def _local_key(model: StudyModel) -> Iterator[None]:
    """A placeholder key for the study's own server, so a real OPENAI_API_KEY in the
    environment is never sent to it."""
    if not model.via_study_server:
        yield
        return
    previous = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = LOCAL_KEY
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = previous


@contextlib.contextmanager
def _study_server(config: StudyConfig, paths: StudyPaths) -> Iterator[str | None]:
    """The loopback reference server for `reference` models (transport server), on the port
    this study used before, if any: the endpoint is part of each request's identity."""
    if not any(m.via_study_server for m in config.models):
        yield None
        return
    from harness.server.app import start_server_in_thread

    port = 0
    if paths.server.is_file():
        with contextlib.suppress(ValueError, KeyError, TypeError, UserError):
            port = int(load_json_object(paths.server, "server record")["port"])
    try:
        url, stop = start_server_in_thread(
            host="127.0.0.1", port=port, run_dir=paths.run_dir, batch_step_ms=20.0
        )
    except OSError as exc:
        raise UserError(
            f"cannot start the study's reference server on 127.0.0.1:{port} ({exc.strerror}); "
            "this study's answers were requested from that port, so it must be free to resume "
            f"(or delete {paths.server} and the responses of its reference models)"
        ) from None
    try:
        atomic_write_json(paths.server, {"port": int(url.rsplit(":", 1)[1].split("/")[0])})
        yield url
    finally:
        stop()


# --- analysis ----------------------------------------------------------------------------


def analyse(
    config: StudyConfig, paths: StudyPaths, compiled: CompiledDomain, console: Console
) -> tuple[Path, Path]:
    """Score every model, compute the statistics, write statistics.json and the report."""
    from harness.report.export import write_svgs

    from .report import render_study_html, study_figures

    stats = compute_statistics(config, paths, compiled)
    contract.StudyStatistics.model_validate(stats)  # what we write keeps its contract
    atomic_write_json(paths.statistics, stats)
    atomic_write_text(paths.report, render_study_html(stats))
    write_svgs(paths.report.parent / "figures", study_figures(stats))
    console.print(f"[green]statistics[/] {escape(paths.statistics)}")
    return paths.statistics, paths.report


def score_models(config: StudyConfig, paths: StudyPaths) -> None:
    """`kgbench score` over the study's logs (no condition contrasts: the study makes its
    own comparisons)."""
    from harness.evaluation.run_scoring import score_run

    score_run(paths.run_dir, None, pairs=(), bootstrap=config.bootstrap, seed=config.seed)


def compute_statistics(
    config: StudyConfig, paths: StudyPaths, compiled: CompiledDomain, score: bool = True
) -> dict[str, Any]:
    """Scores (unless `score` is False), statistics, usage and provenance as one dict."""
    from harness.evaluation.compiled_scorer import load_compiled_scorer
    from harness.release.index import release_digest
    from harness.report.provenance import provenance_block

    from .stats import Settings, compute, study_data

    if score:
        score_models(config, paths)
    scorer = load_compiled_scorer(compiled)
    folder = RunFolder(paths.run_dir)
    names = [m.name for m in config.models]
    for name in names:
        if not (folder.scores_for(name) / "items.jsonl").is_file():
            raise UserError(f"model {name} has no scores in {paths.run_dir / 'scores'}")
    items = {name: read_jsonl(folder.scores_for(name) / "items.jsonl", "item") for name in names}
    scenarios = sorted({i["scenario_id"] for its in items.values() for i in its})
    answers = recommendation_keys(config, paths, scorer) if config.replicates > 1 else {}
    data = study_data(
        names,
        config.conditions,
        scorer.metrics,
        scenarios,
        items,
        config.replicates,
        scorer.policy,
        answers,
    )
    settings = Settings(
        bootstrap=config.bootstrap,
        permutations=config.permutations,
        seed=config.seed,
        holm_family=config.holm_family,
        interaction_baseline=config.interaction_baseline,
    )
    stats = compute(data, settings)
    stats["counts"] = {name: _counts(items[name], config.conditions) for name in names}
    stats["usage"] = {name: usage(paths.run_dir, name) for name in names}
    stats["study"] = {
        "name": config.name,
        "description": config.description,
        "domain": config.domain,
        "policy": scorer.policy,
    }
    manifest = config.release_manifest
    stats["provenance"] = provenance_block(
        compiled=compiled,
        release={
            "version": config.release_version,
            "digest": release_digest(config.release_path),
            "pinned_digest": config.release_digest,
            "content_sha256": manifest.get("content_sha256"),
            "scenarios": (manifest.get("counts") or {}).get("scenarios"),
        },
        study={"path": str(config.path), "sha256": config.sha256},
        models=[_model_provenance(m, paths) for m in config.models],
        statistics={**statistics_settings(config), "unit": "scenario", "ci_level": 0.95},
    )
    return stats


def _counts(items: list[dict[str, Any]], conditions: tuple[str, ...]) -> dict[str, Any]:
    from harness.evaluation.stats import counts

    return counts(items, list(conditions))


def _model_provenance(m: StudyModel, paths: StudyPaths) -> dict[str, Any]:
    from harness.runner.spec import safe_url

    out = m.describe()
    meta = _json(RunFolder(paths.run_dir).log_settings(m.name))
    out["endpoint"] = (
        "the study's loopback reference server"
        if m.via_study_server
        else safe_url(m.base_url) or ("api.openai.com" if m.kind == "openai" else None)
    )
    out["prices"] = meta.get("prices")
    out["structured_fallback"] = meta.get("structured_fallback")
    return out


def _json(path: Path) -> dict[str, Any]:
    value = load_json_or_none(path, max_depth=None)
    return value if isinstance(value, dict) else {}


def usage(run_dir: Path, name: str) -> dict[str, Any]:
    """Requests, tokens, cost and time of one model, from its log (every answer it holds,
    whichever invocation sent it) and the runner's summary of the latest invocation."""
    from harness.runner.log import JsonlLog

    folder = RunFolder(run_dir)
    records, _ = JsonlLog(folder.response_log(name)).load()
    meta = _json(folder.log_settings(name))
    tokens_in = tokens_out = 0
    cost = latency = 0.0
    ok = failed = cached = 0
    for r in records.values():
        u = r.get("usage") if isinstance(r.get("usage"), dict) else {}
        tokens_in += int(u.get("prompt_tokens") or 0)
        tokens_out += int(u.get("completion_tokens") or 0)
        cost += float(r.get("cost_usd") or 0.0)
        latency += float(r.get("latency_s") or 0.0)
        ok += r.get("status") == "ok"
        failed += r.get("status") != "ok"
        cached += bool(r.get("cached"))
    return {
        "answers": len(records),
        "ok": ok,
        "failed": failed,
        "cached": cached,
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "cost_usd": round(cost, 6),
        "latency_s_total": round(latency, 3),
        "mode": meta.get("mode"),
        "prices": meta.get("prices"),
        "last_invocation_wall_s": meta.get("wall_s"),
    }


def recommendation_keys(
    config: StudyConfig, paths: StudyPaths, scorer: Any
) -> dict[str, dict[tuple[str, str], list[str | None]]]:
    """Per model, per (scenario, condition): the recommendation of each replicate, as a key
    that two answers naming the same intervention share ("lisinopril 10 mg" and
    "Lisinopril"), through the domain's lexicon; None where a replicate has no answer."""
    from harness.evaluation.responses_log import ResponsesLog

    field = next(
        (m.response_field for m in scorer.metrics if m.kind == "intervention_match"),
        "recommended_intervention",
    )
    folder = RunFolder.open(paths.run_dir)
    prompts = {p.prompt_id: (p.scenario_id, p.condition) for p in folder.prompts()}
    out: dict[str, dict[tuple[str, str], list[str | None]]] = {}
    for m in config.models:
        log = ResponsesLog.read(folder.response_log(m.name), config.replicates)
        keys: dict[tuple[str, str], list[str | None]] = {
            item: [None] * config.replicates for item in prompts.values()
        }
        for (prompt_id, rep), record in log.records.items():
            if prompt_id in prompts and record.get("status") == "ok":
                verdict, _ = scorer.judgement_of(record)
                keys[prompts[prompt_id]][rep] = answer_key(verdict, field, scorer.lexicon)
        out[m.name] = keys
    return out


def answer_key(verdict: Any, field: str, lexicon: Any) -> str:
    """One answer's recommendation as a comparable key (from its judge.Judgement)."""
    if verdict.parse_status == "unparseable":
        return "<unparseable>"
    if field not in verdict.response:
        return "<none>"
    text = verdict.response[field]
    if text is None:
        return "<abstain>"
    ids = lexicon.resolve_choice(str(text))
    return "|".join(sorted(ids)) if ids else "text:" + " ".join(str(text).casefold().split())

"""`kgbench pilot` / `make pilot`: the whole pipeline end to end, on one command.

compile -> embedded Neo4j (unless NEO4J_URI points elsewhere) -> load -> generate scenarios
-> extract every (scenario, condition) -> render prompts -> answer with the context-reader
baseline through the local OpenAI-compatible reference server and the real `openai` client
-> (with `--with-c5`) verify-and-revise -> score -> report. `--order-variants` adds the
declared option presentations to the prompts, and with `--with-c5` reruns the C5 agent per
presentation (order sensitivity for every condition). It prints the panel and
where the report is. Each step is the same code the individual commands run; nothing here
is pilot-only logic.

It composes the compiler and the harness, so it lives in the CLI package: the harness never
imports the compiler. An embedded Neo4j the pilot started (about 1 GB of memory) is stopped
when it ends, unless `keep_neo4j`; either way it says what it did.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from kgbench.cliutil import escape
from kgbench.locations import RUNS_DIR

if TYPE_CHECKING:
    from concurrent.futures import Future

    from harness.compiled import CompiledDomain
    from harness.neo4j import ServerInfo
    from harness.scenarios.generator import GenerationReport

LOCAL_KEY = "local-reference-server"  # the loopback server checks no key; never a real one


@dataclass(frozen=True)
class PilotOptions:
    """What the pilot adds to the C1-C4 pipeline: C5 (verify-and-revise), the option
    presentations (order sensitivity) and the optional volume-matched controls; all off by
    default."""

    with_c5: bool = False
    order_variants: bool = False
    volume_control: bool = False
    reload: bool = False  # write the graph even when it holds this compile already


def run_pilot(
    domain: str,
    run_dir: Path,
    responder: str,
    console: Console,
    *,
    keep_neo4j: bool = False,
    with_c5: bool = False,
    order_variants: bool = False,
    volume_control: bool = False,
    reload: bool = False,
    generated: Path | None = None,
) -> tuple[Path, Path]:
    """Run the pipeline into `run_dir` (a pilot's folder is replaced, see `_set_aside`);
    returns the Markdown and HTML reports.

    `with_c5`: also run the verify-and-revise conditions (generate, review on Neo4j, revise,
    answer) through the same server; `order_variants`: also render and answer every declared
    presentation of the options (order sensitivity, scores/<log>/order.json), C5's included
    when `with_c5` (its whole agent rerun per presentation); `volume_control`: also extract,
    answer and score the optional volume-matched controls; `generated`: compile into this root
    instead of the project's generated/ (a test's or a benchmark's own tree)."""
    from compiler.api import compile_domain
    from harness.compiled import CompiledDomain

    timings: list[tuple[str, float]] = []

    def step(name: str, func: Callable[[], Any]) -> Any:
        """One step; the pilot stops at a step whose model requests failed or went missing."""
        from harness.runner.failures import failure_ledger
        from kgbench.errors import RequestsFailed

        console.print(f"[bold]-- {escape(name)}[/]")
        t = time.perf_counter()
        with failure_ledger() as ledger:
            result = func()
        timings.append((name, time.perf_counter() - t))
        if ledger.any:
            raise RequestsFailed(f"the pilot stopped at step '{name}': {ledger.summary()}")
        return result

    from harness.evaluation.responders import is_responder, responder_names
    from kgbench.errors import UserError

    if not is_responder(responder):  # before anything is compiled, loaded or removed
        raise UserError(f"unknown responder {responder!r}; known: {', '.join(responder_names())}")
    previous = _set_aside(run_dir, default_run_dir(domain))
    run_dir.mkdir(parents=True)
    (run_dir / PILOT_MARK).write_text("a `kgbench pilot` folder; the next pilot replaces it\n")
    result = step("compile", lambda: compile_domain(domain, out_root=generated))
    compiled = CompiledDomain.open(result.out_dir)
    options = PilotOptions(
        with_c5=with_c5,
        order_variants=order_variants,
        volume_control=volume_control,
        reload=reload,
    )
    from concurrent.futures import ThreadPoolExecutor

    from harness.scenarios.generator import generate_file

    # Scenario generation reads the compiled domain only, never Neo4j: it runs in a thread
    # while the server starts and loads (mostly waiting on the JVM), and the "generate
    # scenarios" step waits for what is left of it (the example domain: 1.1-1.5 s taken off the total).
    with ThreadPoolExecutor(1, thread_name_prefix="generate") as ahead:
        scenarios = ahead.submit(generate_file, compiled, out=run_dir / "scenarios.jsonl")
        if os.environ.get("NEO4J_URI"):
            md, html = _pipeline(compiled, run_dir, responder, console, step, options, scenarios)
        else:
            release: list[Callable[[], None]] = []
            with embedded_neo4j(console, keep=keep_neo4j, step=step, release=release):
                md, html = _pipeline(
                    compiled, run_dir, responder, console, step, options, scenarios, release
                )
    if previous is not None:  # the new pilot is complete: only now is the old one removed
        shutil.rmtree(previous, ignore_errors=True)
    total = sum(t for _, t in timings)
    console.print(
        "timings: "
        + ", ".join(f"{name} {t:.1f} s" for name, t in timings)
        + f"; total {total:.1f} s"
    )
    return md, html


@contextmanager
def embedded_neo4j(
    console: Console,
    *,
    keep: bool = False,
    state_dir: Path | None = None,
    step: Callable[[str, Callable[[], Any]], Any] | None = None,
    release: list[Callable[[], None]] | None = None,
) -> Iterator[ServerInfo]:
    """The embedded Neo4j for the length of a block, and a sentence about what became of it.

    One already running is used and left running. One started here (about 1 GB of memory)
    is stopped when the block ends, however it ends, unless `keep`. `release`: gets a
    function the block may call once it needs the server no more, which starts that stop
    in a thread, so it overlaps the rest of the block (the pilot's render, answer and score
    steps read files only); the block's end waits for it either way.
    """
    import threading

    from harness.neo4j import start, stop

    # a server stopped at the end of the block starts with the short-lived JIT settings
    info = (step or (lambda _name, func: func()))(
        "start the embedded Neo4j", lambda: start(state_dir, short_lived=not keep)
    )
    if info.already_running:
        console.print(f"Neo4j was already running at {escape(info.uri)}; it stays running.")
    stopping: list[threading.Thread] = []
    failed: list[BaseException] = []

    def stop_in_thread() -> None:
        def run() -> None:
            try:
                stop(state_dir)
            except BaseException as exc:  # re-raised where the block ends
                failed.append(exc)

        if not stopping:
            stopping.append(threading.Thread(target=run, name="kgbench-neo4j-stop"))
            stopping[0].start()

    if release is not None and not (info.already_running or keep):
        release.append(stop_in_thread)
    try:
        yield info
    finally:
        if info.already_running:
            pass
        elif keep:
            console.print(
                f"The embedded Neo4j the pilot started stays running at {escape(info.uri)} "
                f"(pid {info.pid}); stop it with `kgbench neo4j stop`."
            )
        else:
            if stopping:
                stopping[0].join()
            if failed or not stopping:  # not released, or its stop failed: stop it here
                stop(state_dir)
            console.print(
                "Stopped the embedded Neo4j the pilot started (pass --keep-neo4j to keep it)."
            )


def _pipeline(
    compiled: CompiledDomain,
    run_dir: Path,
    responder: str,
    console: Console,
    step: Callable[[str, Callable[[], Any]], Any],
    options: PilotOptions,
    generating: Future[tuple[Path, list[dict[str, Any]], GenerationReport]],
    release: list[Callable[[], None]] | None = None,
) -> tuple[Path, Path]:
    """Everything after the compile, against the Neo4j the settings name; `generating` is
    the scenario generation already under way; `release`: what to call once the graph is
    read for the last time (`embedded_neo4j`)."""
    from concurrent.futures import ThreadPoolExecutor

    from harness.evaluation.prompts import build_prompts
    from harness.evaluation.run_scoring import score_run
    from harness.graph.extract import check_against_compile
    from harness.graph.load import load
    from harness.graph.pipelined import extract_many, plan_ahead
    from harness.graph.stamp import require_current
    from harness.neo4j import connection_settings, open_driver
    from harness.report import write_report
    from harness.runfolder import RunFolder
    from harness.runner.api import RunConfig, run_model
    from harness.server.app import start_server_in_thread

    settings = connection_settings()
    chosen = compiled.conditions if options.volume_control else compiled.default_conditions
    grounded = [c.id for c in chosen if c.query]
    with open_driver(settings) as driver, ThreadPoolExecutor(1, thread_name_prefix="plan") as side:
        # The extraction's queries are planned (EXPLAIN, `pipelined.plan_ahead`) while the
        # load runs, on the other core: first planning was most of the extract step.
        planning = side.submit(
            lambda: plan_ahead(
                driver, compiled, generating.result()[1], grounded, settings.database
            )
        )
        # A graph stamped as loaded from this compile that passes every check is not
        # written again (`load(skip_current=True)`); `reload` writes it all regardless.
        report = step(
            "load",
            lambda: load(driver, compiled, settings.database, skip_current=not options.reload),
        )
        if report.current:
            console.print(
                f"the graph already holds this compile (stamped, {len(report.checks)} checks "
                "pass): nothing written; --reload writes it all"
            )
        _, scenarios, _ = step("generate scenarios (alongside start and load)", generating.result)

        def extract_all() -> int:
            # No warm-up (`extract.warm_up`): it moves latency out of the first pass, and the
            # pilot measures no latency, so it would only add its own queries to the total.
            # Two sessions, one read transaction each (harness.graph.pipelined): same contexts.
            planning.result()  # its plans are what the first calls use
            require_current(driver, compiled, settings.database)
            work = [(s, c) for s in scenarios for c in grounded]
            contexts = extract_many(driver, compiled, work, settings.database)
            for (scenario, _), ctx in zip(work, contexts, strict=True):
                check_against_compile(ctx, compiled, scenario)
            return RunFolder(run_dir).write_contexts(contexts)

        step("extract", extract_all)
    if not options.with_c5:  # C5 reviews on Neo4j; nothing else reads the graph from here
        for done_with_graph in release or ():
            done_with_graph()  # the embedded server stops while prompts render and answer
    step(
        "render prompts",
        lambda: build_prompts(run_dir, compiled, order_variants=options.order_variants),
    )
    base_url, stop_server = start_server_in_thread(
        responder=responder,
        run_dir=run_dir,
        verify_domain=compiled if options.with_c5 else None,
    )
    previous_key = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = LOCAL_KEY
    try:
        config = RunConfig(
            run_dir=run_dir,
            model=f"openai:{responder}",
            base_url=base_url,
            concurrency=16,
            use_cache=False,
            compiled=compiled,
        )
        step(f"answer with {responder} via {base_url}", lambda: run_model(config, console))
        if options.with_c5:
            from harness.runner.stage import StageConfig
            from harness.verify.agent import VerifyConfig, run_verify

            stage = StageConfig(
                out_dir=run_dir, model=config.model, base_url=base_url, use_cache=False
            )
            with open_driver(settings) as driver:
                step(
                    f"verify-and-revise with {responder} via {base_url}",
                    lambda: run_verify(
                        VerifyConfig(
                            run_dir,
                            stage,
                            database=settings.database,
                            order_variants=options.order_variants,
                            compiled=compiled,
                        ),
                        driver,
                        console,
                    ),
                )
    finally:
        stop_server()
        if previous_key is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = previous_key
    step("score", lambda: score_run(run_dir, domain=compiled))
    return step("report", lambda: write_report(run_dir, compiled=compiled))


def panel_table(md_path: Path) -> str:
    """The response counts and the overall panel, as the Markdown report has them."""
    lines = md_path.read_text(encoding="utf-8").splitlines()
    out: list[str] = []
    for marker in ("**Responses per condition**", "**Overall panel"):
        start = next((i for i, line in enumerate(lines) if line.startswith(marker)), None)
        if start is None:
            continue
        end = start + 1
        while end < len(lines) and (lines[end].startswith("|") or not lines[end].strip()):
            end += 1
        out += [*lines[start:end], ""]
    return "\n".join(out).rstrip() + "\n"


PILOT_MARK = ".kgbench-pilot"  # in every folder a pilot made: the next pilot may replace it


def _set_aside(run_dir: Path, default: Path) -> Path | None:
    """Make room for the pilot's folder without deleting anything first.

    The pilot replaces its own folder (one holding PILOT_MARK, or the default
    runs/pilot-<domain>, which older pilots made without a mark); any other folder that
    holds something, a run folder with paid answers say, is refused with one message
    (issue 28 item 3: `pilot --run-dir` used to delete whatever it named). The old pilot
    folder is moved to a hidden sibling and removed only once the new pilot succeeded.
    """
    from kgbench.errors import UserError

    if not run_dir.exists():
        return None
    if not run_dir.is_dir():
        raise UserError(f"--run-dir {run_dir} is a file, not a folder; name a folder")
    ours = (run_dir / PILOT_MARK).is_file() or run_dir.resolve() == default.resolve()
    if not ours and any(run_dir.iterdir()):
        raise UserError(
            f"--run-dir {run_dir} holds files no pilot made (no {PILOT_MARK}); the pilot "
            "replaces its run folder, so it will not touch this one: name another --run-dir, "
            "or remove it yourself"
        )
    aside = run_dir.with_name(f".{run_dir.name}.replaced")
    if aside.exists():  # left by a pilot that failed: the older pilot folder, rebuilt anyway
        shutil.rmtree(aside)
    run_dir.rename(aside)
    return aside


def default_run_dir(domain: str) -> Path:
    return RUNS_DIR / f"pilot-{Path(domain).name}"

"""C5 end to end on cardio: extract C2-C4, answer C1-C4 with the context reader, run
verify-and-revise through the runner's stages (in process and through the loopback server
with the real openai client), score the panel with C5 paired against C4 and C1."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import neo4j
import pytest
from rich.console import Console

from harness.compiled import CompiledDomain
from harness.evaluation.prompts import build_prompts
from harness.evaluation.run_scoring import score_run
from harness.graph.extract import extract
from harness.graph.load import load
from harness.report import write_report
from harness.runfolder import RunFolder
from harness.runner.api import RunConfig, run_model
from harness.runner.stage import StageConfig
from harness.scenario_files import generated_set
from harness.server.app import start_server_in_thread
from harness.verify.agent import VerifyConfig, explain_chain, run_verify

pytestmark = pytest.mark.neo4j

N_SCENARIOS = 6


def quiet() -> Console:
    return Console(file=io.StringIO())


@pytest.fixture(scope="module")
def cardio(neo4j_driver: neo4j.Driver) -> CompiledDomain:
    compiled = CompiledDomain.open("cardio")
    load(neo4j_driver, compiled)
    return compiled


def prepare(run_dir: Path, driver: neo4j.Driver, compiled: CompiledDomain) -> None:
    # the conditions `kgbench extract` writes by default: the volume-matched controls (C6, C7)
    # are opt-in, so the default pairs below hold no control contrast
    lines = generated_set(compiled).read_text("utf-8").splitlines()[:N_SCENARIOS]
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "scenarios.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    for line in lines:
        scenario = json.loads(line)
        for cond in (c.id for c in compiled.default_conditions if c.query):
            RunFolder(run_dir).write_contexts([extract(driver, compiled, scenario, cond)])
    build_prompts(run_dir, "cardio")


def check_run(run_dir: Path, slug: str, summary: dict) -> None:
    assert summary["scenarios"] == N_SCENARIOS
    assert summary["first_review"]["verified"] > 0
    assert summary["first_review"]["refuted"] > 0
    assert summary["first_review"]["unverifiable"] > 0
    assert summary["revised"] == summary["first_review"]["refuted"]  # r = 1: each once
    assert 0 < summary["fixed_by_revision"] < summary["revised"]  # a declared share fixed
    chains = sorted((RunFolder(run_dir).verify_dir(slug) / "chains").glob("*.json"))
    assert len(chains) == N_SCENARIOS
    chain = json.loads(chains[0].read_text())
    assert all(len(t["rounds"]) <= 2 for t in chain["triplets"])  # the revision bound
    [panel_path] = score_run(run_dir, bootstrap=200)  # default pairs: C5 ran, so C5 vs C4, C1
    panel = json.loads(panel_path.read_text())
    assert [(p["a"], p["b"]) for p in panel["paired"]] == [("C4", "C2"), ("C5", "C4"), ("C5", "C1")]
    items = [json.loads(x) for x in (panel_path.parent / "items.jsonl").read_text().splitlines()]
    c5 = [i for i in items if i["condition"] == "C5"]
    assert len(c5) == N_SCENARIOS and all(i["status"] == "scored" for i in c5)
    md, html = write_report(run_dir)
    report = md.read_text()
    assert "Paired within-scenario deltas, C5 vs C4" in report
    assert "Paired within-scenario deltas, C5 vs C1" in report
    assert "### Verify-and-revise (C5)" in report and "Verify-and-revise (C5)" in html.read_text()
    row = next(ln for ln in report.splitlines() if ln.startswith("| refuted |"))
    assert row.split("|")[2].strip() == str(summary["first_review"]["refuted"])
    assert f"fixed by revision (verified afterwards): {summary['fixed_by_revision']}" in report


def test_c5_offline_with_reference_responders(
    tmp_path: Path, neo4j_driver: neo4j.Driver, cardio: CompiledDomain
) -> None:
    run_dir = tmp_path / "run"
    prepare(run_dir, neo4j_driver, cardio)
    run_model(RunConfig(run_dir=run_dir, model="ref:context-reader", use_cache=False), quiet())
    config = VerifyConfig(run_dir, StageConfig(out_dir=run_dir, model="ref:context-reader"))
    summary = run_verify(config, neo4j_driver, quiet())
    slug = next(p.stem for p in (run_dir / "responses").glob("*.jsonl"))
    check_run(run_dir, slug, summary)
    text = explain_chain(
        run_dir,
        json.loads((run_dir / "scenarios.jsonl").read_text().splitlines()[0])["scenario_id"],
    )
    assert "review: verified by" in text and "revision 1" in text and "answer (C5)" in text
    # exactly-once resume: the same command again sends nothing and changes nothing
    before = (run_dir / "responses" / f"{slug}.jsonl").read_bytes()
    again = run_verify(config, neo4j_driver, quiet())
    assert {**again, "review_ms_p95": None} == {**summary, "review_ms_p95": None}
    assert (run_dir / "responses" / f"{slug}.jsonl").read_bytes() == before


def test_c5_through_the_loopback_server_with_the_openai_client(
    tmp_path: Path,
    neo4j_driver: neo4j.Driver,
    cardio: CompiledDomain,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_dir = tmp_path / "run"
    prepare(run_dir, neo4j_driver, cardio)
    monkeypatch.setenv("OPENAI_API_KEY", "local-reference-server")
    url, stop = start_server_in_thread(
        responder="context-reader", run_dir=run_dir, verify_domain="cardio"
    )
    try:
        model = "openai:context-reader"
        run_model(RunConfig(run_dir=run_dir, model=model, base_url=url, use_cache=False), quiet())
        stage = StageConfig(out_dir=run_dir, model=model, base_url=url, use_cache=False)
        summary = run_verify(VerifyConfig(run_dir, stage), neo4j_driver, quiet())
    finally:
        stop()
    slug = next(p.stem for p in (run_dir / "responses").glob("*.jsonl"))
    check_run(run_dir, slug, summary)


def test_c5_answer_step_is_the_named_responders(
    tmp_path: Path, neo4j_driver: neo4j.Driver, cardio: CompiledDomain
) -> None:
    """ref:oracle: the reference verifier proposes and revises, the oracle answers (from the
    gold), so C5 scores the oracle's 1.0 on intervention accuracy; an unknown name is one
    message."""
    from kgbench.errors import UserError

    run_dir = tmp_path / "run"
    prepare(run_dir, neo4j_driver, cardio)
    config = VerifyConfig(run_dir, StageConfig(out_dir=run_dir, model="ref:oracle"))
    run_verify(config, neo4j_driver, quiet())
    [panel_path] = score_run(run_dir, bootstrap=200)
    panel = json.loads(panel_path.read_text())
    assert panel["overall"]["C5"]["intervention_accuracy"]["mean"] == 1.0
    bad = VerifyConfig(run_dir, StageConfig(out_dir=run_dir, model="ref:no-such-responder"))
    with pytest.raises(UserError, match="unknown reference responder 'no-such-responder'"):
        run_verify(bad, neo4j_driver, quiet())


def c5_order(run_dir: Path, slug: str) -> dict:
    order = json.loads((run_dir / "scores" / slug / "order.json").read_text())
    return order["conditions"]["C5"]


def check_first_option_order(run_dir: Path, slug: str) -> None:
    """The position-biased responder answers C5 in every presentation: it always picks the
    first listed option, so reversal and shift flip every answer and relabelling none."""
    biased = c5_order(run_dir, slug)
    assert biased["scenarios"] == N_SCENARIOS
    assert set(biased["presentations"]) == {"original", "shift1", "reversed", "relabelled"}
    for pid, f in biased["presentations"].items():
        assert f["first_option_share"]["mean"] == 1.0, pid
        assert f["position_bias"]["mean"] == pytest.approx(1 - f["first_option_chance"])
        assert f["position_bias"]["ci_low"] is not None
    assert biased["presentations"]["reversed"]["flip_rate"]["mean"] == 1.0
    assert biased["presentations"]["shift1"]["flip_rate"]["mean"] == 1.0
    assert biased["presentations"]["relabelled"]["flip_rate"]["mean"] == 0.0


def test_c5_order_variants_rerun_the_whole_agent(
    tmp_path: Path, neo4j_driver: neo4j.Driver, cardio: CompiledDomain
) -> None:
    """`--order-variants`: generate, revise and answer rerun per presentation, each step's
    prompt listing the options in that presentation's order and labels; the answers land
    under their own prompt ids and keys, order.json and the report gain C5 rows, the panel
    and the original chain stay as without variants, and a rerun sends nothing."""
    from harness.evaluation.order import arrangements

    run_dir = tmp_path / "run"
    prepare(run_dir, neo4j_driver, cardio)
    plain_dir = tmp_path / "plain"
    prepare(plain_dir, neo4j_driver, cardio)
    plain = run_verify(
        VerifyConfig(plain_dir, StageConfig(out_dir=plain_dir, model="ref:first-option")),
        neo4j_driver,
        quiet(),
    )
    for name in ("first-option", "oracle"):
        stage = StageConfig(out_dir=run_dir, model=f"ref:{name}")
        summary = run_verify(
            VerifyConfig(run_dir, stage, order_variants=True), neo4j_driver, quiet()
        )
    stages = run_dir / "verify" / "ref-first-option" / "stages"
    for step in ("generate", "revise-1", "answer"):
        for p in ("", ".shift1", ".reversed", ".relabelled"):
            assert (stages / f"{step}{p}.jsonl").exists(), step + p
    first = json.loads((stages / "generate.reversed.jsonl").read_text().splitlines()[0])
    assert first["status"] == "ok"
    # the original order's figures, chain and context are those of a run without variants
    assert {**summary, "presentations": None, "review_ms_p95": None, "model": None} == {
        **plain,
        "presentations": None,
        "review_ms_p95": None,
        "model": None,
    }
    assert set(summary["presentations"]) == {"shift1", "reversed", "relabelled"}
    assert all(f["first_review"]["verified"] > 0 for f in summary["presentations"].values())
    sid = json.loads((run_dir / "scenarios.jsonl").read_text().splitlines()[0])["scenario_id"]
    chains = run_dir / "verify" / "ref-oracle" / "chains"
    assert (chains / f"{sid}@reversed.json").exists()
    # the generate step saw the relabelled options: it names each candidate with its letter
    relabelled = json.loads((chains / f"{sid}@relabelled.json").read_text())["triplets"]
    assert relabelled and all(re.match(r"^[A-Z]\. ", t["candidate"]) for t in relabelled)
    original = json.loads((chains / f"{sid}.json").read_text())["triplets"]
    assert not any(re.match(r"^[A-Z]\. ", t["candidate"]) for t in original)
    prompts = RunFolder(run_dir).verify_prompts()
    shown = {p.presentation: p.messages[0]["content"] for p in prompts if p.scenario_id == sid}
    assert set(shown) == {None, "shift1", "reversed", "relabelled"}
    assert len(set(shown.values())) == 4  # the answer step lists the options per presentation
    records = [
        json.loads(x)
        for x in (run_dir / "responses" / "ref-first-option.jsonl").read_text().splitlines()
    ]
    c5 = [r for r in records if r["condition"] == "C5"]
    scenarios = [json.loads(x) for x in (run_dir / "scenarios.jsonl").read_text().splitlines()]
    distinct = sum(
        len({a.answered_by for a in arrangements(s, cardio.presentations).values()})
        for s in scenarios
    )
    assert len(c5) == distinct == len({r["key"] for r in c5}) == len({r["prompt_id"] for r in c5})
    before = (run_dir / "responses" / "ref-first-option.jsonl").read_bytes()
    stage = StageConfig(out_dir=run_dir, model="ref:first-option")
    run_verify(VerifyConfig(run_dir, stage, order_variants=True), neo4j_driver, quiet())
    assert (run_dir / "responses" / "ref-first-option.jsonl").read_bytes() == before

    score_run(run_dir, bootstrap=200)
    check_first_option_order(run_dir, "ref-first-option")
    oracle = c5_order(run_dir, "ref-oracle")
    for pid, f in oracle["presentations"].items():
        assert f["accuracy"]["mean"] == 1.0, pid
        assert f.get("flip_rate", {"mean": 0.0})["mean"] == 0.0
    panel = json.loads((run_dir / "scores" / "ref-oracle" / "panel.json").read_text())
    assert panel["counts"]["C5"]["expected"] == N_SCENARIOS  # variants stay out of the panel
    md, _ = write_report(run_dir)
    text = md.read_text()
    assert "Order sensitivity: accuracy, flip rate and position bias" in text
    assert "| C5 " in text[text.index("Order sensitivity: accuracy") :]


def test_c5_order_variants_through_the_loopback_server(
    tmp_path: Path,
    neo4j_driver: neo4j.Driver,
    cardio: CompiledDomain,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same protocol through the real openai client: every step of every presentation
    answered by the loopback server's position-biased responder."""
    run_dir = tmp_path / "run"
    prepare(run_dir, neo4j_driver, cardio)
    monkeypatch.setenv("OPENAI_API_KEY", "local-reference-server")
    url, stop = start_server_in_thread(
        responder="first-option", run_dir=run_dir, verify_domain="cardio"
    )
    try:
        stage = StageConfig(
            out_dir=run_dir, model="openai:first-option", base_url=url, use_cache=False
        )
        summary = run_verify(
            VerifyConfig(run_dir, stage, order_variants=True), neo4j_driver, quiet()
        )
    finally:
        stop()
    assert set(summary["presentations"]) == {"shift1", "reversed", "relabelled"}
    score_run(run_dir, bootstrap=200)
    [slug] = [p.parent.name for p in (run_dir / "scores").glob("*/order.json")]
    check_first_option_order(run_dir, slug)

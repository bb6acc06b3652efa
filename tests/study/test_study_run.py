"""Studies end to end: the known order of the reference responders, intervals that exclude zero
for large gaps and include it for identical responders, reliability, the report in headless
Chromium; and (with Neo4j) one `kgbench study` through the local OpenAI-compatible server and
the real `openai` client, killed with SIGKILL and resumed without re-sending anything."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.study_bench import stage, study_yaml
from harness.runner.log import JsonlLog
from harness.server.app import start_server_in_thread, wait_until
from harness.study.report import render_study_html
from harness.study.run import StudyPaths, claim, compute_statistics
from kgbench.errors import UserError

KGBENCH = str(Path(sys.executable).parent / "kgbench")
STAND_INS = [
    ("oracle", "oracle", None, None),
    ("oracle-2", "oracle", None, None),
    ("noisy-a", "noisy-oracle", 0.25, 1),
    ("noisy-b", "noisy-oracle", 0.25, 2),
    ("guess", "ungrounded", None, None),
]


def pair(stats: dict, cond: str, metric: str, a: str, b: str) -> dict:
    return next(
        r
        for r in stats["pairwise"]
        if (r["condition"], r["metric"], r["a"], r["b"]) == (cond, metric, a, b)
    )


@pytest.fixture(scope="module")
def stand_in_study(tmp_path_factory: pytest.TempPathFactory, release: Path):
    """Five stand-in models answering in-process, two replicates, contexts built from the
    compiled graph (no Neo4j): statistics and report."""
    root = tmp_path_factory.mktemp("stand-ins")
    config, paths, compiled = stage(
        root,
        replicates=2,
        bootstrap=2000,
        models=STAND_INS,
        conditions=("C1", "C4"),
        release=release,
    )
    stats = compute_statistics(config, paths, compiled)
    return config, paths, stats


def test_the_stand_ins_rank_in_their_known_order(stand_in_study) -> None:
    _, _, stats = stand_in_study
    for cond in ("C1", "C4"):
        ranking = stats["ranking"][cond]["intervention_accuracy"]
        order = [r["model"] for r in ranking]
        assert set(order[:2]) == {"oracle", "oracle-2"}
        assert set(order[2:4]) == {"noisy-a", "noisy-b"} and order[4] == "guess"
        top = {r["model"]: r for r in ranking}
        assert top["oracle"]["mean"] == 1.0 and top["oracle"]["rank_high"] <= 2
        assert top["guess"]["rank_low"] == 5
        # large gaps: intervals exclude zero and survive Holm across the whole study
        for a, b in (("oracle", "guess"), ("oracle", "noisy-a"), ("noisy-b", "guess")):
            r = pair(stats, cond, "intervention_accuracy", a, b)
            assert r["ci_low"] > 0 and r["p_holm"] < 0.05, r
            # replicates averaged first: a noisy model's values are no longer 0/1
            noisy = "noisy" in a + b
            assert r["test"] == ("sign_flip_permutation" if noisy else "mcnemar_exact")


def test_identical_responders_include_zero(stand_in_study) -> None:
    _, _, stats = stand_in_study
    for cond in ("C1", "C4"):
        for metric in ("intervention_accuracy", "adverse_effect_f1", "uncertainty_correctness"):
            same = pair(stats, cond, metric, "oracle", "oracle-2")  # the same answers
            assert same["delta"] == 0 and same["ci_low"] == 0 == same["ci_high"]
            assert same["p"] == 1.0
            # Same error rate, other draws: no difference survives the study's multiplicity
            # correction. Their unadjusted 95% intervals are not asserted: across these six
            # comparisons one excludes zero by chance in about one study in four.
            twins = pair(stats, cond, metric, "noisy-a", "noisy-b")
            assert twins["p_holm"] >= 0.05, twins
    ranking = {r["model"]: r for r in stats["ranking"]["C4"]["intervention_accuracy"]}
    assert "noisy-b" in ranking["noisy-a"]["indistinguishable_from"]


def test_reliability_of_the_stand_ins(stand_in_study) -> None:
    _, _, stats = stand_in_study
    stability = stats["reliability"]["stability"]
    assert stability["oracle"]["all"]["share"] == 1.0  # deterministic
    assert stability["guess"]["all"]["share"] == 1.0
    noisy = stability["noisy-a"]["all"]
    # two replicates at error rate 0.25: both right (0.5625) or both the same wrong pick
    assert 0.45 < noisy["share"] < 0.8 and noisy["n"] == 160
    assert stats["reliability"]["icc"]["oracle"]["adverse_effect_f1"]["C4"]["icc"] in (None, 1.0)


def test_usage_counts_and_provenance(stand_in_study) -> None:
    config, _, stats = stand_in_study
    for model in stats["models"]:
        u = stats["usage"][model]
        assert u["answers"] == 80 * 2 * 2 and u["failed"] == 0 and u["tokens_in"] > 0
        assert stats["counts"][model]["C1"]["scored"] == 160
    prov = stats["provenance"]
    assert prov["release"]["digest"].startswith("sha256:")
    assert prov["release"]["version"] == "2.0.0"
    assert prov["study"]["sha256"] == config.sha256
    assert [m["name"] for m in prov["models"]] == [m[0] for m in STAND_INS]
    assert prov["statistics"]["bootstrap"] == 2000 and prov["code"]["python"]


def test_a_run_folder_belongs_to_one_study(stand_in_study, tmp_path, write_study) -> None:
    from kgbench.cli.study import load_study

    _, paths, _ = stand_in_study
    other = load_study(write_study(replicates=3), "cardio")  # another design
    with pytest.raises(UserError, match="holds another study"):
        claim(other, paths)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x.txt").write_text("x")
    with pytest.raises(UserError, match="holds no study"):
        claim(other, StudyPaths(tmp_path / "busy"))


def test_reference_models_through_the_study_server_and_the_batch_api(
    tmp_path, release, monkeypatch
) -> None:
    """One command, no Neo4j (C1 has no context): the study starts its loopback server, one
    model goes through the Batch API, and a second invocation sends nothing."""
    from typer.testing import CliRunner

    from kgbench.cli import app

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-CANARY-123456")
    text = study_yaml(
        release,
        [("oracle", "oracle", None, None), ("guess", "ungrounded", None, None)],
        1,
        ("C1",),
        transport="server",
        bootstrap=500,
    ).replace("    responder: oracle\n", "    responder: oracle\n    batch: true\n")
    config = tmp_path / "study.yaml"
    config.write_text(text)
    run_dir = tmp_path / "run"
    args = ["study", "--domain", "cardio", "--config", str(config), "--run-dir", str(run_dir)]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    stats = json.loads((run_dir / "study" / "statistics.json").read_text())
    assert stats["usage"]["oracle"]["mode"] == "batch" and stats["usage"]["oracle"]["ok"] == 80
    assert stats["usage"]["guess"]["mode"] == "online" and stats["interaction"] is None
    assert stats["ranking"]["C1"]["intervention_accuracy"][0]["model"] == "oracle"
    meta = json.loads((run_dir / "responses" / "guess.run.json").read_text())
    assert meta["base_url"].startswith("http://127.0.0.1:")
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    meta2 = json.loads((run_dir / "responses" / "guess.run.json").read_text())
    assert meta2["base_url"] == meta["base_url"]  # the same port: the same request identity
    assert meta2["counts"]["previous_ok"] == 80 and meta2["counts"]["requests"] == 0
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert "CANARY" not in path.read_text(errors="ignore")


def test_an_openai_model_without_a_key_stops_the_study_before_it_starts(
    tmp_path, release, monkeypatch
) -> None:
    from typer.testing import CliRunner

    from kgbench.cli import app

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    text = study_yaml(release, [("guess", "ungrounded", None, None)], 1, ("C1",))
    text += "  - name: gpt\n    kind: openai\n    model: gpt-4o-mini\n"
    config = tmp_path / "study.yaml"
    config.write_text(text)
    result = CliRunner().invoke(
        app, ["study", "-d", "cardio", "--config", str(config), "--run-dir", str(tmp_path / "r")]
    )
    assert result.exit_code == 2 and "OPENAI_API_KEY is not set" in result.output
    assert not (tmp_path / "r").exists()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_the_report_renders_in_headless_chromium(stand_in_study, tmp_path) -> None:
    _, _, stats = stand_in_study
    page = tmp_path / "study.html"
    page.write_text(render_study_html(stats))
    html = page.read_text()
    assert "<script" not in html and "<link" not in html and " src=" not in html
    assert "https://" not in html  # nothing fetched (the SVG namespace is the one http:// URI)
    assert html.count("http://") == html.count("xmlns='http://www.w3.org/2000/svg'")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={tmp_path / 'chromium'}",
        "--window-size=1300,3000",
    ]
    dom = subprocess.run(
        ["chromium", *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    for section in ("Condition C1", "Ranking", "Model deltas", "interaction", "Reliability",
                    "Cost and tokens", "Provenance"):  # fmt: skip
        assert section in dom, section
    assert dom.count("<svg") >= 2 * 10 + 10  # forest plots per pair and condition, interaction
    shot = tmp_path / "shot.png"
    subprocess.run(
        ["chromium", *flags, f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 50_000


@pytest.mark.neo4j
@pytest.mark.slow
def test_three_models_through_the_local_server_resume_after_sigkill(
    neo4j_embedded, tmp_path: Path, release: Path
) -> None:
    from harness.neo4j import connection_settings

    settings = connection_settings(neo4j_embedded.state_dir)
    url, stop = start_server_in_thread(run_dir=release, latency_ms=4)
    srv = stop.server
    env = {
        **os.environ,
        "NEO4J_URI": settings.uri,
        "NEO4J_USER": settings.user or "neo4j",
        "NEO4J_PASSWORD": settings.password or "",
        "OPENAI_API_KEY": "sk-test-CANARY-123456",
        "KGBENCH_HOME": str(tmp_path / "home"),  # the response cache stays out of the repo
    }
    env.pop("OPENAI_BASE_URL", None)
    models = "\n".join(
        f"  - name: {name}\n    kind: compatible\n    model: {responder}\n    base_url: {url}"
        "\n    concurrency: 8"
        for name, responder in (
            ("oracle", "oracle"),
            ("noisy", "noisy-oracle-0.3"),
            ("guess", "ungrounded"),
        )
    )
    text = study_yaml(release, [], 2, ("C1", "C3", "C4"), bootstrap=2000) + models + "\n"
    config = tmp_path / "study.yaml"
    config.write_text(text)
    run_dir = tmp_path / "run"
    cmd = [
        KGBENCH,
        "study",
        "--domain",
        "cardio",
        "--config",
        str(config),
        "--run-dir",
        str(run_dir),
    ]
    planned = 3 * 80 * 3 * 2
    logs = [run_dir / "responses" / f"{m}.jsonl" for m in ("oracle", "noisy", "guess")]

    def logged() -> int:
        return sum(p.read_bytes().count(b"\n") for p in logs if p.exists())

    try:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cut = random.Random().randint(50, planned - 200)
        assert wait_until(lambda: logged() >= cut or proc.poll() is not None, timeout=600)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        settled = srv.stats.snapshot()["chat_requests"]
        for _ in range(50):  # requests already on the wire reach the server before counting
            time.sleep(0.05)
            now = srv.stats.snapshot()["chat_requests"]
            if now == settled and srv.stats.in_flight == 0:
                break
            settled = now
        done_before = sum(len(JsonlLog(p).load()[0]) for p in logs if p.exists())
        assert 0 < done_before < planned

        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        assert again.returncode == 0, again.stderr[-3000:]
        sent_after = srv.stats.snapshot()["chat_requests"] - settled
        assert sent_after == planned - done_before  # nothing logged was sent again
        assert srv.stats.snapshot().get("chat_with_bearer", 0) > 0
    finally:
        stop()
    for p in logs:
        records = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
        assert len(records) == 3 * 80 * 2 == len({r["key"] for r in records})
        assert all(r["status"] == "ok" for r in records)
    report = Path(again.stdout.strip())
    assert report == run_dir / "report" / "study.html" and report.is_file()
    stats = json.loads((run_dir / "study" / "statistics.json").read_text())
    for cond in ("C1", "C3", "C4"):
        order = [r["model"] for r in stats["ranking"][cond]["intervention_accuracy"]]
        assert order == ["oracle", "noisy", "guess"]
        big = pair(stats, cond, "intervention_accuracy", "oracle", "guess")
        assert big["ci_low"] > 0 and big["p_holm"] < 0.05
    assert stats["reliability"]["stability"]["oracle"]["all"]["share"] == 1.0
    for path in run_dir.rglob("*"):  # neither the API key nor the Neo4j password is written
        if path.is_file():
            text = path.read_text(errors="ignore")
            assert "CANARY" not in text
            assert (settings.password or "x" * 40) not in text


def test_every_study_plot_is_also_a_standalone_svg(stand_in_study, tmp_path) -> None:
    """study.html's forest and interaction plots as files; colour only where Holm says so."""
    import xml.etree.ElementTree as ET

    from harness.report.export import write_svgs
    from harness.report.svg import BAD, GOOD
    from harness.study.report import study_figures

    _, _, stats = stand_in_study
    figures = study_figures(stats)
    pairs = {(r["a"], r["b"]) for r in stats["pairwise"] if r["condition"] == "C1"}
    assert len([n for n in figures if n.startswith("forest-C1-")]) == len(pairs) == 10
    assert len([n for n in figures if n.startswith("interaction-")]) == len(stats["metrics"])
    for path in write_svgs(tmp_path / "figures", figures):
        assert ET.fromstring(path.read_bytes()).tag == "{http://www.w3.org/2000/svg}svg"
    same = figures["forest-C1-oracle-oracle-2.svg"]  # identical answers: nothing to colour
    assert GOOD not in same and BAD not in same
    assert GOOD in figures["forest-C1-oracle-guess.svg"]

"""The report: a provenance block, baselines called baselines, category bars with their
standard error and n, and tables that fit an 800 px window in a real browser."""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from harness.compiled import CompiledDomain
from harness.evaluation.prompts import build_prompts
from harness.evaluation.run_scoring import score_run
from harness.report import write_report
from harness.report.provenance import baseline_of, release_of
from harness.report.svg import category_bars
from harness.runner.api import RunConfig, answer_with_reference, run_model
from harness.server.app import start_server_in_thread
from kgbench import __version__


@pytest.fixture
def reported(run_dir: Path, mini_domain: CompiledDomain) -> Path:
    """The mini run answered by the oracle in process and by the context-reader through the
    local reference server and the real openai client (as the pilot does), scored."""
    build_prompts(run_dir, str(mini_domain.root))
    answer_with_reference(run_dir, "oracle")
    url, stop = start_server_in_thread(responder="context-reader", run_dir=run_dir)
    try:
        config = RunConfig(
            run_dir=run_dir, model="openai:context-reader", base_url=url, use_cache=False
        )
        run_model(config, Console(quiet=True))
    finally:
        stop()
    score_run(run_dir, bootstrap=200)
    write_report(run_dir)
    return run_dir


def test_the_report_opens_with_its_provenance(reported: Path, mini_domain) -> None:
    md = (reported / "report" / "report.md").read_text()
    block = md[md.index("## Provenance") : md.index("## Baseline")]
    meta = json.loads((reported / "responses" / "ref-oracle.run.json").read_text())
    for expected in (
        f"| kgbench | {__version__}",
        f"| Run | {reported.name} |",
        "| Domain | mini 0.1.0 |",
        "| Compiled | by kgbench 0.1.0, spec 2.0.0; manifest sha256:",
        "| Scenarios | 8 (sha256:",
        "| Gold release | none: the scenario set is not a published release |",
        f"| Answered | {min(meta['started_at'], _started(reported, 'openai-context-reader'))}",
    ):
        assert expected in block, expected
    # each model: its spec, kind, endpoint, parameters, mode and date
    assert "| Model | openai:context-reader |" in md
    assert "| Parameters | temperature not sent, seed not sent, max\\_tokens not sent" in md
    assert f"| Answers collected | {meta['started_at']} |" in md
    assert "| Endpoint | http://127.0.0.1:" in md and "| Mode | online |" in md


def _started(run: Path, log: str) -> str:
    return json.loads((run / "responses" / f"{log}.run.json").read_text())["started_at"]


def test_baselines_are_labelled_as_baselines(reported: Path) -> None:
    md = (reported / "report" / "report.md").read_text()
    page = (reported / "report" / "report.html").read_text()
    headings = re.findall(r"^## (.+?) \(domain", md, re.M)
    assert headings == ["Baseline openai:context-reader", "Baseline ref:oracle"]
    assert "Model openai:context-reader" not in md + page
    assert "<h2 id='openai-context-reader'>Baseline openai:context-reader</h2>" in page
    assert "baseline: reference responder context-reader through the local reference server" in md
    # a model is a model; a ref: spec or reference-signed answers are a baseline
    assert baseline_of("openai:gpt-4o", ["fp_abc123"]) is None
    assert baseline_of("openai:gpt-4o", []) is None
    assert baseline_of("ref:ungrounded", []) == "ungrounded"
    assert baseline_of("openai:oracle", ["kgbench-ref-oracle"]) == "oracle"


def test_the_release_a_scenario_set_is_part_of(tmp_path: Path) -> None:
    cardio = CompiledDomain.open("cardio")
    released = cardio.root / "gold" / "1.0.1" / "scenarios.jsonl"
    copy = tmp_path / "scenarios.jsonl"
    shutil.copyfile(released, copy)
    assert release_of(cardio, copy) == "1.0.1 (its scenarios.jsonl, byte for byte)"
    copy.write_bytes(released.read_bytes() + b"\n")
    assert release_of(cardio, copy).startswith("none")


def test_category_bars_carry_standard_error_whiskers_and_n() -> None:
    metric = {"name": "acc", "title": "Accuracy", "higher_is_better": True}
    panel = {
        "conditions": ["C1", "C2"],
        "by_category": {
            "direct_effect": {
                "C1": {"acc": {"mean": 0.5, "se": 0.1, "n": 10}},
                "C2": {"acc": {"mean": 0.9, "se": 0.2, "n": 9}},  # whisker clipped at 1.0
            },
            "mediated_effect": {"C1": {"acc": {"mean": None, "n": 0}}, "C2": {}},
        },
    }
    svg = category_bars(panel, metric)
    whiskers = re.findall(r"<path d='M([\d.]+) ([\d.]+)V([\d.]+)", svg)
    assert len(whiskers) == 2
    top, plot_h = 40, 120  # the plot's frame, as category_bars draws it
    (_, lo1, hi1), (_, lo2, hi2) = ((x, float(a), float(b)) for x, a, b in whiskers)
    assert (lo1, hi1) == (top + plot_h * 0.6, top + plot_h * 0.4)  # 0.5 - 0.1 .. 0.5 + 0.1
    assert (round(lo2, 1), hi2) == (round(top + plot_h * 0.3, 1), top)  # 0.7 .. 1.0
    labels = re.findall(r"font-size='8'[^>]*>(\d+)</text>", svg)
    assert labels == ["10", "9"]
    assert "0.500 \u00b1 0.100 (n=10)" in svg and svg.count("\u00d7") == 2


def test_the_report_fits_an_800px_window_in_headless_chromium(
    reported: Path, tmp_path: Path, chromium
) -> None:
    """Every table, plot and paragraph ends inside the window: measured by the browser on a
    copy of the page with a measuring script (the report itself has none)."""
    page = reported / "report" / "report.html"
    assert "<script" not in page.read_text()
    probe = (
        "<script>window.addEventListener('load',()=>{const over=[...document.querySelectorAll("
        "'table,svg,figure,p,h1,h2,h3')].filter(e=>e.getBoundingClientRect().right>"
        "window.innerWidth).map(e=>e.tagName+' '+(e.querySelector('caption')?.textContent"
        "||'').slice(0,50));document.body.setAttribute('data-measure',JSON.stringify({over,"
        "width:document.documentElement.scrollWidth,inner:window.innerWidth}))})</script>"
    )
    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text().replace("</body>", probe + "</body>"))
    dom = chromium(measured, "--virtual-time-budget=5000", "--dump-dom").stdout
    found = re.search(r'data-measure="([^"]*)"', dom)
    assert found, dom[:300]
    measure = json.loads(html_lib.unescape(found.group(1)))
    assert measure["inner"] == 800
    assert measure["over"] == [] and measure["width"] <= 800, measure
    assert dom.count("<table") >= 10 and "Provenance" in dom
    shot = tmp_path / "report.png"
    chromium(page, f"--screenshot={shot}")
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one

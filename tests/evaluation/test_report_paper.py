"""Tables and figures a paper can use (issue 31, item 6): Wilson intervals for binary metrics,
"favourable" and colour after the Holm-adjusted test, CSV/LaTeX tables and standalone SVGs."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from harness.evaluation.prompts import build_prompts
from harness.evaluation.run_scoring import score_run
from harness.evaluation.stats import build_panel, summary
from harness.report.export import latex_escape
from harness.report.svg import BAD, GOOD, NEUTRAL, forest
from harness.report.tables import cell, paired_tables
from harness.runner.api import answer_with_reference
from kgbench.cli import app
from kgbench.contract import Metric

ACC = Metric(
    name="acc",
    title="Accuracy",
    kind="boolean_match",
    response_field="x",
    gold_field="y",
    defined_when="always",
    higher_is_better=True,
    binary=True,
)
RATE = Metric(
    name="rate",
    title="Unsupported claim rate",
    kind="unsupported_claims",
    response_field="x",
    gold_field="y",
    defined_when="always",
    higher_is_better=False,
    binary=False,
)


def test_ten_out_of_ten_is_not_one_plus_minus_zero():
    stat = summary([1.0] * 10, binary=True)
    assert stat["se"] == 0.0  # what the report used to print as "1.000 ± 0.000"
    assert stat["interval"] == "wilson"
    assert stat["ci_low"] == pytest.approx(0.7225, abs=1e-4) and stat["ci_high"] == 1.0
    assert cell(stat) == "1.000 [0.722, 1.000] (n=10)"
    assert cell(summary([0.0] * 10, binary=True)) == "0.000 [0.000, 0.278] (n=10)"


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (7, 40), (1, 1)])
def test_the_wilson_interval_is_statsmodels_wilson(k, n):
    stat = summary([1.0] * k + [0.0] * (n - k), binary=True)
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert stat["ci_low"] == pytest.approx(low, abs=1e-9)
    assert stat["ci_high"] == pytest.approx(high, abs=1e-9)


def test_continuous_metrics_and_replicate_means_keep_the_standard_error():
    assert "interval" not in summary([0.2, 0.4, 0.9], binary=False)
    averaged = summary([1.0, 0.5, 0.0], binary=True)  # a binary metric over replicates
    assert "interval" not in averaged and averaged["se"] is not None
    assert cell(averaged).startswith("0.500 \u00b1 ")


def _items(n, acc_b, acc_a, rate_b, rate_a):
    items = []
    for i in range(n):
        for cond, acc, rate in (("C2", acc_b(i), rate_b(i)), ("C4", acc_a(i), rate_a(i))):
            items.append(
                {
                    "scenario_id": f"S{i:02d}",
                    "condition": cond,
                    "replicate": 0,
                    "status": "scored",
                    "category": "direct_effect",
                    "parse_ok": True,
                    "schema_ok": True,
                    "unknown_ids": [],
                    "scores": {"acc": acc, "rate": rate},
                }
            )
    return items


def _panel(items):
    return build_panel(items, [ACC, RATE], ["C2", "C4"], bootstrap=1000, seed=0)


def _colour_of(svg_text: str, row: int) -> str:
    """The fill of the row-th point of a forest plot."""
    circles = ET.fromstring(svg_text).findall("{http://www.w3.org/2000/svg}circle")
    return circles[row].get("fill")


def test_a_non_significant_worse_delta_is_neither_unfavourable_nor_red():
    # C4 worse than C2 on a few scenarios only: the sign is negative, the test finds nothing
    items = _items(
        10,
        acc_b=lambda i: 1.0,
        acc_a=lambda i: float(i >= 1),  # one scenario lost
        rate_b=lambda i: 0.10,
        rate_a=lambda i: 0.10 + (0.05 if i < 3 else 0.0),  # a little worse on three
    )
    panel = _panel(items)
    rows = panel["paired"][0]["metrics"]
    for name in ("acc", "rate"):
        assert rows[name]["direction"] == "worse"
        assert rows[name]["p_holm"] >= 0.05
        assert rows[name]["favorable"] == "not significant"
    svg_text = forest(panel, panel["paired"][0])
    assert _colour_of(svg_text, 0) == NEUTRAL and _colour_of(svg_text, 1) == NEUTRAL
    assert BAD not in svg_text
    table = paired_tables(panel)[0]
    assert [row[-1] for row in table.rows] == ["not significant", "not significant"]


def test_a_significant_difference_is_marked_and_coloured_by_its_direction():
    items = _items(
        30,
        acc_b=lambda i: 0.0,
        acc_a=lambda i: 1.0,  # 30 discordant pairs, all for C4
        rate_b=lambda i: 0.1,
        rate_a=lambda i: 0.3 + 0.001 * i,  # C4 clearly worse (lower is better)
    )
    panel = _panel(items)
    rows = panel["paired"][0]["metrics"]
    assert rows["acc"]["p_holm"] < 0.001 and rows["acc"]["favorable"] == "yes"
    assert rows["rate"]["p_holm"] < 0.05 and rows["rate"]["favorable"] == "no"
    svg_text = forest(panel, panel["paired"][0])
    assert _colour_of(svg_text, 0) == GOOD and _colour_of(svg_text, 1) == BAD


def test_latex_escaping_of_names_from_input_files():
    assert latex_escape("a_b & 50% #1 {x} ± −") == r"a\_b \& 50\% \#1 \{x\} $\pm$ $-$"


@pytest.fixture
def scored(run_dir: Path, mini_domain) -> Path:
    build_prompts(run_dir, str(mini_domain.root))
    answer_with_reference(run_dir, "oracle")
    answer_with_reference(run_dir, "ungrounded")
    score_run(run_dir, bootstrap=200)
    return run_dir


def test_report_writes_csv_latex_tables_and_standalone_svgs(scored: Path):
    result = CliRunner().invoke(
        app, ["report", "--run-dir", str(scored), "--format", "csv", "--format", "latex"]
    )
    assert result.exit_code == 0, result.output
    report = scored / "report"
    panel = json.loads((scored / "scores" / "ref-oracle" / "panel.json").read_text())
    tables = report / "tables" / "ref-oracle"
    assert sorted(p.name for p in tables.iterdir()) == [
        "categories.csv",
        "categories.tex",
        "paired.csv",
        "paired.tex",
        "panel.csv",
        "panel.tex",
    ]
    rows = list(csv.DictReader(io.StringIO((tables / "panel.csv").read_text())))
    assert len(rows) == len(panel["metrics"]) * len(panel["conditions"])
    for row in rows:
        stat = panel["overall"][row["condition"]][row["metric"]]
        assert int(row["n"]) == stat["n"]
        if stat["mean"] is None:
            assert row["mean"] == ""
        else:
            assert float(row["mean"]) == stat["mean"]  # full precision, not the rounded cell
        assert row["interval"] == (stat.get("interval") or "")
    paired = list(csv.DictReader(io.StringIO((tables / "paired.csv").read_text())))
    assert len(paired) == len(panel["paired"]) * len(panel["metrics"])
    assert {r["favorable"] for r in paired} <= {"yes", "no", "not significant", "no change", ""}
    categories = list(csv.DictReader(io.StringIO((tables / "categories.csv").read_text())))
    assert {r["category"] for r in categories} == set(panel["by_category"])
    tex = (tables / "panel.tex").read_text()
    assert tex.startswith("\\begin{table}") and "\\toprule" in tex and "\\bottomrule" in tex
    assert tex.count("\\\\\n") == len(panel["metrics"]) + 1  # header and one row per metric
    assert "±" not in tex and "−" not in tex  # only LaTeX source, no raw Unicode math
    figures = report / "figures" / "ref-oracle"
    names = sorted(p.name for p in figures.iterdir())
    assert len(names) == 1 + len(panel["paired"]) + len(panel["metrics"])
    assert "heatmap.svg" in names and any(n.startswith("forest-C4-C2") for n in names)
    for path in figures.iterdir():
        root = ET.fromstring(path.read_bytes())
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
    # the same plot is inline in report.html
    heat = (figures / "heatmap.svg").read_text().split("\n", 1)[1].strip()
    assert heat in (report / "report.html").read_text()


def test_an_unknown_report_format_is_one_message_and_exit_2(scored: Path):
    result = CliRunner().invoke(app, ["report", "--run-dir", str(scored), "--format", "xlsx"])
    assert result.exit_code == 2
    assert "unknown report format 'xlsx'; expected csv or latex" in result.stderr
    assert not (scored / "report").exists()

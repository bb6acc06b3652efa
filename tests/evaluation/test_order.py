"""Order sensitivity: the presentation arithmetic on hand-made data, then the protocol end to
end on cardio (C1, which needs no graph) with the reference responders in process and with
the position-biased one through the loopback server and the real openai client."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from harness.compiled import CompiledDomain
from harness.evaluation.judge import Contract, judge
from harness.evaluation.order import (
    ORIGINAL,
    Arrangement,
    analyse,
    arrange,
    arrangements,
    choice,
    first_position,
    flip_rate,
)
from harness.evaluation.prompts import build_prompts
from harness.evaluation.run_scoring import score_run
from harness.report import write_report
from harness.runfolder import RunFolder
from harness.runner.api import RunConfig, run_model
from harness.scenario_files import generated_set
from harness.server.app import start_server_in_thread
from kgbench.contract import Presentation

N = 8
SHIFT = Presentation(id="s", description="", order="cyclic_shift", shift=1, labels="none")
REVERSE = Presentation(id="r", description="", order="reverse", shift=0, labels="none")
RELABEL = Presentation(id="l", description="", order="original", shift=0, labels="letters_reversed")
CANDIDATES = [
    {"intervention_id": i, "label": n} for i, n in (("X", "Ex"), ("Y", "Why"), ("Z", "Zed"))
]


def test_presentations_permute_and_label() -> None:
    assert [c["intervention_id"] for c in arrange(CANDIDATES, SHIFT)] == ["Z", "X", "Y"]
    assert [c["intervention_id"] for c in arrange(CANDIDATES, REVERSE)] == ["Z", "Y", "X"]
    relabelled = arrange(CANDIDATES, RELABEL)
    assert [c["label"] for c in relabelled] == ["C. Ex", "B. Why", "A. Zed"]
    two = {"candidates": CANDIDATES[:2]}
    shown = arrangements(two, [SHIFT, REVERSE])
    assert shown["s"].answered_by == "s" and shown["r"].answered_by == "s"  # same listing


def _contract() -> Contract:  # the example domain's contract, which the scorer judges against
    from harness.evaluation.compiled_scorer import scorer_of

    return scorer_of("cardio").contract


def read_choice(answer: object, arr: Arrangement, names: dict, lexicon: object = None) -> str:
    """The choice of an answer as `kgbench score` reads it: judged by the one judge first."""
    return choice(judge(answer, _contract()), arr, names, lexicon)


def test_reading_a_choice_by_name_or_letter() -> None:
    names = {"X": "Ex", "Y": "Why", "Z": "Zed"}
    arr = Arrangement("l", ("X", "Y", "Z"), ("C", "B", "A"), "l")
    read = {
        text: read_choice({"recommended_intervention": text}, arr, names)
        for text in ("why", "B", "(A) Zed", "C. Ex", "B. Zed", "Nothing", "A")
    }
    assert read == {
        "why": "Y",
        "B": "Y",
        "(A) Zed": "Z",
        "C. Ex": "X",
        "B. Zed": "Z",  # the name wins over a mismatched letter
        "Nothing": "other",
        "A": "Z",
    }
    assert read_choice({"recommended_intervention": None}, arr, names) == "abstain"
    assert read_choice("not json", arr, names) == "other"
    unlabelled = Arrangement(ORIGINAL, ("X", "Y", "Z"), ("", "", ""), ORIGINAL)
    assert read_choice({"recommended_intervention": "B"}, unlabelled, names) == "other"


def test_a_choice_is_read_as_the_scorer_reads_it() -> None:
    """Issue 27: "Lisinopril" under one order and "Lisinopril 10 mg" under another are one
    choice (the scorer credits both), not a flip; a hedge between two options is none."""
    from harness.evaluation.compiled_scorer import load_compiled_scorer

    lexicon = load_compiled_scorer(CompiledDomain.open("cardio")).lexicon
    names = {"DRG_0001": "Lisinopril", "DRG_0006": "Metoprolol succinate"}
    arr = Arrangement(ORIGINAL, ("DRG_0001", "DRG_0006"), ("", ""), ORIGINAL)

    def read(text: str, lex: object = lexicon) -> str:
        return read_choice({"recommended_intervention": text}, arr, names, lex)

    assert read("Lisinopril") == read("Lisinopril 10 mg once daily") == "DRG_0001"
    assert read("Zestril") == read("ACE inhibitor (lisinopril)") == "DRG_0001"
    assert read("Lisinopril 10 mg once daily", None) == "other"  # exact names only, before
    assert read("Lisinopril or metoprolol succinate") == "other"
    assert read("Amlodipine") == "other"  # an intervention, not a listed option


ARR = Arrangement("l", ("X", "Y", "Z"), ("C", "B", "A"), "l")
NAMES = {"X": "Ex", "Y": "Why", "Z": "Zed"}


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # yes: what the judge reads as a recommendation is a choice (or an abstention)
        ('{"recommended_intervention": "Why"}', "Y"),
        ({"recommended_intervention": "Why"}, "Y"),
        ('Here it is:\n```json\n{"recommended_intervention": "B"}\n```', "Y"),  # extracted
        ('I pick {"recommended_intervention": "Zed"} overall.', "Z"),  # outermost braces
        ('{"recommended_intervention": null}', "abstain"),
        ({"recommended_intervention": None, "rationale": 3}, "abstain"),  # schema_error, null
        # no: nothing the judge reads as a recommendation is an abstention
        ("{}", "other"),  # a whole JSON answer without the field says nothing
        ('{"rationale": "no recommendation field"}', "other"),
        ({"recommended": "Why"}, "other"),
        ('{"recommended_intervention": 7}', "other"),  # mistyped: the judge drops it
        ('{"recommended_intervention": ["Why"]}', "other"),
        ('["Why"]', "other"),  # JSON, not an object: unparseable
        ("Why", "other"),  # prose: no JSON at all
        ('{"recommended_intervention": "Why"', "other"),  # cut off
        (None, "other"),
    ],
)
def test_a_choice_is_read_from_the_one_judges_verdict(answer: object, expected: str) -> None:
    """Issue 32 item 3: order.choice reads the judge's well-typed fields, so it and the panel
    read an answer alike; only an explicit null recommendation is an abstention."""
    verdict = judge(answer, _contract())
    assert choice(verdict, ARR, NAMES) == expected, verdict


def test_flip_rate_and_position_bias_arithmetic() -> None:
    assert flip_rate(["X", "Y", "abstain", "Z"], ["X", "Z", "abstain", "other"]) == [0, 1, 0, 1]
    hits, chance = first_position(
        ["X", "Y", "abstain", "other", "Q"], ["X", "X", "X", "X", "Q"], [3, 3, 3, 3, 2]
    )
    assert hits == [1.0, 0.0, 1.0] and chance == [1 / 3, 1 / 3, 1 / 2]
    # four scenarios, k = 2; the original always picks its first option, the reversal picks
    # the same intervention (now listed second) twice and flips twice
    rows = {
        f"S{i}": {
            ORIGINAL: {"choice": "A", "first": "A", "k": 2, "accuracy": acc},
            "r": {"choice": c, "first": "B", "k": 2, "accuracy": racc},
        }
        for i, (acc, c, racc) in enumerate(
            [(1.0, "A", 1.0), (1.0, "A", 1.0), (1.0, "B", 0.0), (0.0, "B", 1.0)]
        )
    }
    rows["S9"] = {ORIGINAL: {"choice": "A", "first": "A", "k": 2, "accuracy": 1.0}}  # unpaired
    out = analyse(rows, [ORIGINAL, "r"], 500, "t")
    assert out["scenarios"] == 4
    orig, rev = out["presentations"][ORIGINAL], out["presentations"]["r"]
    assert orig["accuracy"]["mean"] == 0.75 and rev["accuracy"]["mean"] == 0.75
    assert orig["first_option_share"]["mean"] == 1.0 and orig["first_option_chance"] == 0.5
    assert orig["position_bias"]["mean"] == 0.5
    assert rev["first_option_share"]["mean"] == 0.5 and rev["flip_rate"]["mean"] == 0.5
    assert rev["accuracy_delta"]["mean"] == 0.0
    lo, hi = rev["flip_rate"]["ci_low"], rev["flip_rate"]["ci_high"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0 and rev["flip_rate"]["n"] == 4
    assert analyse(rows, [ORIGINAL, "r"], 500, "t") == out  # seeded: the same every time


def quiet() -> Console:
    return Console(file=io.StringIO())


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    lines = generated_set(CompiledDomain.open("cardio")).read_text("utf-8").splitlines()[:N]
    run = tmp_path / "run"
    run.mkdir()
    (run / "scenarios.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    build_prompts(run, "cardio", ["C1"], order_variants=True)
    return run


def order_of(run: Path, slug: str) -> dict:
    return json.loads((run / "scores" / slug / "order.json").read_text())["conditions"]["C1"]


def test_order_protocol_end_to_end_with_reference_responders(run_dir: Path) -> None:
    compiled = CompiledDomain.open("cardio")
    prompts = RunFolder(run_dir).prompts()
    scenarios = [json.loads(x) for x in (run_dir / "scenarios.jsonl").read_text().splitlines()]
    distinct = sum(
        len({a.answered_by for a in arrangements(s, compiled.presentations).values()})
        for s in scenarios
    )
    assert len(prompts) == distinct and any("@" in p.prompt_id for p in prompts)
    for name in ("first-option", "oracle", "ungrounded"):
        run_model(RunConfig(run_dir=run_dir, model=f"ref:{name}", use_cache=False), quiet())
    [*_] = score_run(run_dir, pairs=(), bootstrap=200)
    biased = order_of(run_dir, "ref-first-option")
    assert biased["scenarios"] == N
    for pid, f in biased["presentations"].items():
        assert f["first_option_share"]["mean"] == 1.0, pid  # always the first listed
        assert f["position_bias"]["mean"] == pytest.approx(1 - f["first_option_chance"])
    assert biased["presentations"]["reversed"]["flip_rate"]["mean"] == 1.0
    assert biased["presentations"]["shift1"]["flip_rate"]["mean"] == 1.0
    assert biased["presentations"]["relabelled"]["flip_rate"]["mean"] == 0.0
    oracle = order_of(run_dir, "ref-oracle")
    for pid, f in oracle["presentations"].items():
        assert f["accuracy"]["mean"] == 1.0, pid
        assert f.get("flip_rate", {"mean": 0.0})["mean"] == 0.0
    # ungrounded names the first option as listed, letter and all ("C. Lisinopril"): read
    # back by its letter, so relabelling alone changes nothing
    guess = order_of(run_dir, "ref-ungrounded")["presentations"]
    assert guess["relabelled"]["flip_rate"]["mean"] == 0.0
    assert guess["relabelled"]["accuracy"]["mean"] == guess[ORIGINAL]["accuracy"]["mean"]
    panel = json.loads((run_dir / "scores" / "ref-oracle" / "panel.json").read_text())
    assert panel["counts"]["C1"]["expected"] == N  # variants stay out of the panel
    md, _ = write_report(run_dir)
    assert "Order sensitivity: accuracy, flip rate and position bias" in md.read_text()


def test_order_protocol_through_the_loopback_server(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "local-reference-server")
    url, stop = start_server_in_thread(responder="first-option", run_dir=run_dir)
    try:
        config = RunConfig(
            run_dir=run_dir, model="openai:first-option", base_url=url, use_cache=False
        )
        run_model(config, quiet())
    finally:
        stop()
    score_run(run_dir, pairs=(), bootstrap=200)
    [slug] = [p.parent.name for p in (run_dir / "scores").glob("*/order.json")]
    served = order_of(run_dir, slug)
    assert served["scenarios"] == N
    assert served["presentations"]["reversed"]["flip_rate"]["mean"] == 1.0
    assert all(f["first_option_share"]["mean"] == 1.0 for f in served["presentations"].values())


def test_ord_bogus_presentation_is_refused_when_scoring(run_dir: Path) -> None:
    """Reliability review 2026-12, ord.bogus-presentation: prompts.jsonl edited after the run
    so one variant names a presentation the domain does not declare; `score` used to exit 0
    and leave it out. Now: exit 2, one message naming the prompt and the presentation, and
    nothing scored."""
    from typer.testing import CliRunner

    from kgbench.cli import app

    run_model(RunConfig(run_dir=run_dir, model="ref:first-option", use_cache=False), quiet())
    path = run_dir / "prompts" / "prompts.jsonl"
    lines = path.read_text("utf-8").splitlines()
    index = next(i for i, ln in enumerate(lines) if '"presentation": "reversed"' in ln)
    record = json.loads(lines[index])
    record["presentation"] = "bogus"
    record["prompt_id"] = record["prompt_id"].replace("@reversed", "@bogus")
    lines[index] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", "utf-8")
    result = CliRunner().invoke(app, ["score", "--run-dir", str(run_dir)])
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output
    assert f"prompt {record['prompt_id']} names the presentation 'bogus'" in errors[0]
    assert "reversed" in errors[0]  # the declared ones are listed
    assert not (run_dir / "scores").exists()

"""Study benchmark (issue 18): scoring and statistics of a 5-model, 4-condition, 3-replicate
study on cardio, beside today's per-model `kgbench score` on the same logs, in the same run.

Workload: a gold release published (into a temporary folder) from cardio's committed
scenarios, 80 scenarios x C1-C4 x 3 replicates x 5 models = 4,800 answers, from reference
responders answering in-process through the ordinary runner (oracle, context-reader,
ungrounded and two noisy oracles at error rates 0.1 and 0.3). Contexts are built from the
compiled graph (each scenario's gold assertions plus others, as `kgbench extract` writes
them), so no Neo4j is needed.

* ours: the study's analysis, `compute_statistics` = `kgbench score` of every log (panels
  without condition contrasts) + every study statistic (5 panels with intervals, 10 model
  pairs x 4 conditions x 10 metrics with bootstrap, McNemar or sign-flip and Holm, the
  interaction over 3 grounding effects, ranks with intervals, stability and ICC(2,1)) at
  10,000 resamples + the HTML report.
* baseline: `kgbench score` of the same five logs with its defaults (per-model panels and the
  one C4:C2 contrast per model, 10,000 resamples): what a user runs today, one model at a
  time, and which answers none of the questions between models.
* also: the study statistics alone beside `harness.evaluation.stats.paired_contrast` (the single-model
  contrast, pure Python) computing the model-versus-model deltas of one condition only.

Warm: each figure is the median of interleaved runs after one warm-up in this process
(imports, compiled scorer and caches loaded). Cold: one `kgbench study` in a fresh process on
the folder whose answers are all logged (it sends nothing: the whole command, start to end).
Target: ours (warm) within 30 s and at most 2x the baseline.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from harness.compiled import CompiledDomain
from kgbench.locations import GENERATED_DIR

from .timing import figure

TARGET_S = 30.0
TARGET_RATIO = 2.0
MODELS = [
    ("oracle", "oracle", None, None),
    ("noisy-10", "noisy-oracle", 0.1, 11),
    ("noisy-30", "noisy-oracle", 0.3, 12),
    ("reader", "context-reader", None, None),
    ("ungrounded", "ungrounded", None, None),
]


def publish_release(root: Path) -> Path:
    """A release of cardio's committed scenarios, published into a copy of the compile."""
    from harness.release.publish import publish_release as publish

    copy = root / "generated"
    shutil.copytree(
        GENERATED_DIR / "cardio",
        copy / "cardio",
        ignore=shutil.ignore_patterns("gold", "scenarios"),
    )
    compiled = CompiledDomain.open("cardio", generated=copy)
    scenarios = CompiledDomain.open("cardio").generated_scenarios
    return publish(compiled, "2.0.0", scenarios).path


def study_yaml(
    release: Path,
    models: list[tuple[str, str, float | None, int | None]],
    replicates: int,
    conditions: tuple[str, ...] = ("C1", "C2", "C3", "C4"),
    transport: str = "in_process",
    bootstrap: int = 10_000,
) -> str:
    lines = [
        "name: bench",
        "domain: cardio",
        f"release:\n  path: {release}",
        f"conditions: [{', '.join(conditions)}]",
        f"replicates: {replicates}",
        "sampling:\n  seed: 100",
        f"statistics:\n  bootstrap: {bootstrap}\n  permutations: {bootstrap}\n  seed: 7",
        "models:",
    ]
    for name, responder, rate, seed in models:
        lines.append(f"  - name: {name}\n    kind: reference\n    responder: {responder}")
        lines.append(f"    transport: {transport}")
        if rate is not None:
            lines.append(f"    error_rate: {rate}")
        if seed is not None:
            lines.append(f"    seed: {seed}")
    return "\n".join(lines) + "\n"


def synthetic_contexts(config, compiled: CompiledDomain, run_dir: Path) -> None:
    """Contexts shaped as `kgbench extract` writes them, from the compiled graph (no Neo4j),
    and the fingerprint that tells the study they are the ones for this release."""
    from bench.hostile_bench import _context
    from harness.study.run import StudyPaths, contexts_fingerprint, grounded_conditions
    from kgbench.io import atomic_write_json

    rng = random.Random(5)
    scenarios = [
        json.loads(line)
        for line in (config.release_path / "scenarios.jsonl").read_text().splitlines()
        if line
    ]
    for scenario in scenarios:
        for cond in grounded_conditions(config, compiled):
            ctx = _context(compiled.graph, scenario, cond, rng)
            path = run_dir / "contexts" / scenario["scenario_id"] / f"{cond}.json"
            atomic_write_json(path, ctx)
    atomic_write_json(StudyPaths(run_dir).prepared, contexts_fingerprint(config, compiled))


def stage(
    root: Path,
    replicates: int = 3,
    bootstrap: int = 10_000,
    models: list[tuple[str, str, float | None, int | None]] | None = None,
    conditions: tuple[str, ...] = ("C1", "C2", "C3", "C4"),
    release: Path | None = None,
):
    """A study folder with every answer logged: (config, paths, compiled)."""
    from harness.study.run import StudyPaths, claim, prepare, run_models
    from kgbench.cli.study import load_study

    release = release or publish_release(root)
    path = root / "study.yaml"
    text = study_yaml(release, models or MODELS, replicates, conditions, bootstrap=bootstrap)
    path.write_text(text)
    config = load_study(path, "cardio")
    compiled = CompiledDomain.open("cardio")
    paths = StudyPaths(root / "run")
    quiet = Console(file=open("/dev/null", "w"), quiet=True)  # noqa: SIM115
    claim(config, paths)
    synthetic_contexts(config, compiled, paths.run_dir)
    prepare(config, paths, compiled, quiet)
    run_models(config, paths, quiet)
    return config, paths, compiled


def main(quick: bool = False) -> list[str]:
    from harness.evaluation.run_scoring import score_run
    from harness.evaluation.stats import paired_contrast, scenario_values
    from harness.study.report import render_study_html
    from harness.study.run import compute_statistics
    from harness.study.stats import Settings, compute, study_data

    if not (GENERATED_DIR / "cardio" / "kg.json").exists():
        return ["## Study: skipped (cardio is not compiled)"]
    runs = 2 if quick else 3
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        config, paths, compiled = stage(Path(tmp))
        answers = sum(1 for p in (paths.run_dir / "responses").glob("*.jsonl") for _ in p.open())

        def ours() -> None:
            render_study_html(compute_statistics(config, paths, compiled))

        def baseline() -> None:
            score_run(paths.run_dir)  # defaults: C4:C2, 10,000 resamples

        ours(), baseline()  # warm-up
        t_ours, t_base = [], []
        for _ in range(runs):
            start = time.perf_counter()
            ours()
            t_ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            baseline()
            t_base.append(time.perf_counter() - start)
        warm = "warm: in this process after a warm-up, baseline interleaved"
        lines += [
            f"## Study ({len(config.models)} models x {len(config.conditions)} conditions x "
            f"{config.replicates} replicates on cardio: {answers:,} answers; 10,000 resamples)",
            figure("  ours: score + study statistics + report", t_ours, unit="s",
                   target=TARGET_S, higher_is_better=False, state=warm, digits=2),
            figure("  baseline: kgbench score (per model, C4:C2)", t_base, unit="s",
                   target=None, higher_is_better=False, state=warm, digits=2),
            figure("  ratio ours / baseline", [x / y for x, y in zip(t_ours, t_base, strict=True)],
                   unit="x", target=TARGET_RATIO, higher_is_better=False, state="paired runs",
                   digits=2),
        ]  # fmt: skip

        # the statistics alone, beside the single-model contrast code on one condition
        from harness.evaluation.compiled_scorer import load_compiled_scorer
        from kgbench.io import read_jsonl

        scorer = load_compiled_scorer(compiled)
        names = [m.name for m in config.models]
        items = {n: read_jsonl(paths.run_dir / "scores" / n / "items.jsonl") for n in names}
        sids = sorted({i["scenario_id"] for i in items[names[0]]})
        data = study_data(names, config.conditions, scorer.metrics, sids, items, 3, scorer.policy)
        values = {n: scenario_values(items[n], scorer.metrics, scorer.policy) for n in names}

        def pure_c4() -> None:
            for i, a in enumerate(names):
                for b_name in names[i + 1 :]:
                    per = {a: values[a]["C4"], b_name: values[b_name]["C4"]}
                    paired_contrast(per, a, b_name, scorer.metrics, 10_000, 7)

        s_ours, s_pure = [], []
        for _ in range(runs):  # interleaved, so a drift in machine speed hits both alike
            start = time.perf_counter()
            compute(data, Settings(seed=7))
            s_ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            pure_c4()
            s_pure.append(time.perf_counter() - start)
        t_stats, t_pure = statistics.median(s_ours), statistics.median(s_pure)
        lines += [
            figure("  statistics alone: every comparison", s_ours, unit="s", target=None,
                   higher_is_better=False, state=warm, digits=2,
                   no_target="no target (issue 18 sets none)"),
            figure("  baseline: paired_contrast, 10 pairs, C4", s_pure, unit="s", target=None,
                   higher_is_better=False, state=warm, digits=2),
            f"  the baseline extrapolated to 4 conditions is {t_pure * len(config.conditions) / t_stats:.0f}x"
            " ours, without interaction, ranks or reliability",
        ]  # fmt: skip

        # cold: the whole command in a fresh process, nothing left to send
        cmd = [
            str(Path(sys.executable).parent / "kgbench"),
            "study",
            "--domain",
            "cardio",
            "--config",
            str(config.path),
            "--run-dir",
            str(paths.run_dir),
        ]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        cold = time.perf_counter() - start
        if proc.returncode != 0:
            raise RuntimeError(f"kgbench study failed: {proc.stderr[-2000:]}")
        lines.append(
            figure("  cold: kgbench study, all answers logged", [cold], unit="s", target=None,
                   higher_is_better=False, state="fresh process, sends nothing", digits=2,
                   no_target="no target (issue 18 sets none)")
        )  # fmt: skip
    return lines


if __name__ == "__main__":
    print("\n".join(main(quick=True)))

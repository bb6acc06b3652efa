"""Model-runner benchmark (issue 6): scheduling overhead against a physical limit.

The reference server runs in its own process with a fixed 200 ms latency per answer, so 640
requests at concurrency 64 (the load issue 17, item 6 sets its target at) cannot finish
faster than 640 / 64 * 0.2 s = 2.0 s. The runner's wall time (the whole `run_model` call:
reading the folder, planning, requests, durable writes, compaction) is reported as a ratio
to that limit (target <= 1.25, PASS/FAIL) and against a sequential baseline (concurrency 1)
measured in the same invocation, on the same warm server, on a subset of the prompts and
extrapolated linearly to 640 (a full sequential run would take over two minutes and is pure
latency: 640 x 0.2 s).
"""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from harness.compiled import CompiledDomain
from harness.runfolder import RunFolder
from harness.runner.api import RunConfig, run_model
from harness.runner.plan import Settings

from .timing import load_average

REQUESTS = 640  # issue 17, item 6: the target is set at 640 requests, concurrency 64
CONCURRENCY = 64
TARGET_RATIO = 1.25  # wall time over the physical limit (requests / concurrency x latency)
LATENCY_S = 0.2


def _run_folder(root: Path, n: int) -> Path:
    (root / "prompts").mkdir(parents=True)
    RunFolder(root).describe(CompiledDomain.open("cardio"))
    rows = []
    for i in range(n):
        text = (
            f"# Scenario SCN_{i:04d}\nA patient, case {i}.\nTarget outcome: Stroke\n\n"
            "# Candidate options\n- Apixaban\n- Warfarin\n- Aspirin\n\n# Answer format\nJSON.\n"
        )
        rows.append(
            {
                "prompt_id": f"SCN_{i:04d}/C1",
                "scenario_id": f"SCN_{i:04d}",
                "condition": "C1",
                "messages": [{"role": "user", "content": text}],
            }
        )
    (root / "prompts" / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _timed(folder: Path, url: str, concurrency: int, seed: int, limit: int | None) -> float:
    """One run with fresh keys (a new seed), no cache: every request goes to the server.
    Each seed is its own request identity, so each run writes its own log."""
    config = RunConfig(
        run_dir=folder,
        model="openai:context-reader",
        base_url=url,
        concurrency=concurrency,
        use_cache=False,
        limit=limit,
        settings=Settings(seed=seed),
        timeout_s=30,
        log_name=f"seed-{seed}",
    )
    result = run_model(config, Console(file=io.StringIO()))
    expected = limit if limit is not None else REQUESTS
    if result.tally.final_ok != expected:
        raise RuntimeError(f"bench run incomplete: {result.lines}")
    return result.wall_s


def main(quick: bool = False) -> list[str]:
    runs = 3 if quick else 7
    subset = 16 if quick else 40
    lines = ["## Model runner"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench-not-a-key"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kgbench",
            "serve-reference",
            "--port",
            "0",
            "--latency-ms",
            str(int(LATENCY_S * 1000)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    old_key = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = env["OPENAI_API_KEY"]
    try:
        url = server.stdout.readline().strip() if server.stdout else ""
        if not url:
            raise RuntimeError("reference server did not start")
        with tempfile.TemporaryDirectory() as tmp:
            folder = _run_folder(Path(tmp) / "run", REQUESTS)
            _timed(folder, url, CONCURRENCY, seed=10_000, limit=CONCURRENCY)  # warm-up
            walls = [_timed(folder, url, CONCURRENCY, seed=s, limit=None) for s in range(runs)]
            sequential = _timed(folder, url, 1, seed=20_000, limit=subset)
    finally:
        server.terminate()
        server.wait(timeout=10)
        if old_key is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old_key
    limit_s = REQUESTS / CONCURRENCY * LATENCY_S
    median = statistics.median(walls)
    seq_all = sequential / subset * REQUESTS
    ratios = [w / limit_s for w in walls]
    ratio = statistics.median(ratios)
    lines.append(
        f"runner, {REQUESTS} requests, concurrency {CONCURRENCY}, server latency "
        f"{LATENCY_S * 1000:.0f} ms: median {median:.3f} s (min {min(walls):.3f}, "
        f"max {max(walls):.3f}, n={runs}; warm: one warm-up run on the same server; "
        f"{load_average()})"
    )
    lines.append(
        f"  vs physical limit {limit_s:.2f} s: ratio median {ratio:.2f} (min {min(ratios):.2f}, "
        f"max {max(ratios):.2f}, n={runs}); target <= {TARGET_RATIO:.2f}: "
        f"{'PASS' if ratio <= TARGET_RATIO else 'FAIL'}"
    )
    lines.append(
        f"  baseline: sequential (concurrency 1, {subset} requests measured = {sequential:.2f} s, "
        f"n=1, warm: after the runs above on the same server, extrapolated to {REQUESTS}): "
        f"{seq_all:.1f} s, speed-up x{seq_all / median:.1f}; no target (baseline)"
    )
    return lines


if __name__ == "__main__":
    for line in main(quick="--quick" in sys.argv):
        print(line)

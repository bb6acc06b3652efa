"""Model-runner benchmark (issue 33, items 1 and 6): the runner against its floors.

The reference server runs in its own process with a fixed 100 ms latency per answer, so 640
requests at concurrency 64 cannot finish faster than 640 / 64 x 0.1 s = 1.0 s: the physical
limit, the floor the runner's wall time (the whole `run_model` call: reading the folder,
planning, requests, durable writes, compaction) is held to (target <= 1.2x). Beside it, in
the same run and on the same warm server, interleaved with the runner's runs: a minimal
client (`floor_client`: the same `openai.AsyncOpenAI`, the same request bodies built
beforehand, a semaphore of 64, each answer's JSON parsed, nothing written), which shows what
the client library and the event loop alone cost on this machine. The runner's CPU time per
request (this process's, the server being another) is held to 1 ms, the minimal client's
printed beside it. A sequential run (concurrency 1) on a subset, extrapolated, is printed
for information.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from harness.compiled import CompiledDomain
from harness.runfolder import RunFolder
from harness.runner.api import RunConfig, run_model
from harness.runner.plan import Settings

from .timing import figure, versus_floor

REQUESTS = 640  # issue 17, item 6: the target is set at 640 requests, concurrency 64
CONCURRENCY = 64
TARGET_RATIO = 1.2  # wall time over the physical limit (issue 33, item 6)
TARGET_CPU_MS = 1.0  # the runner's CPU time per request (issue 33, item 6)
LATENCY_S = 0.1


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


def _timed(
    folder: Path, url: str, concurrency: int, seed: int, limit: int | None
) -> tuple[float, float]:
    """One run with fresh keys (a new seed), no cache: every request goes to the server.
    Each seed is its own request identity, so each run writes its own log. Returns (wall
    seconds of the run, CPU seconds of this process during it)."""
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
    cpu = time.process_time()
    result = run_model(config, Console(file=io.StringIO()))
    cpu = time.process_time() - cpu
    expected = limit if limit is not None else REQUESTS
    if result.tally.final_ok != expected:
        raise RuntimeError(f"bench run incomplete: {result.lines}")
    return result.wall_s, cpu


def floor_bodies(folder: Path, url: str, seed: int) -> list[dict]:
    """The request bodies the runner sends for this folder and seed (built here, before the
    floor's timing starts)."""
    from harness.runner.client import build_body
    from harness.runner.plan import plan_requests
    from harness.runner.spec import parse_model_spec

    spec = parse_model_spec("openai:context-reader", url)
    run = RunFolder.open(folder)
    _, schema = run.response_schema()
    settings = Settings(seed=seed)
    return [
        build_body(spec, item.messages, item.params, schema if settings.structured else None)
        for item in plan_requests(run.prompts(), spec, settings)
    ]


def floor_client(url: str, bodies: list[dict], concurrency: int) -> tuple[float, float]:
    """The minimal client: the bodies POSTed with the runner's client library at the same
    concurrency, each answer's JSON parsed, nothing else. Returns (wall, CPU) seconds."""
    import asyncio

    import httpx2
    from openai import AsyncOpenAI

    async def go() -> None:
        client = AsyncOpenAI(
            api_key=os.environ["OPENAI_API_KEY"], base_url=url, max_retries=0, timeout=30
        )
        gate = asyncio.Semaphore(concurrency)

        async def one(body: dict) -> None:
            async with gate:
                response = await client.post(
                    "/chat/completions", cast_to=httpx2.Response, body=body
                )
                json.loads(response.content)["choices"][0]["message"]["content"]

        try:
            await asyncio.gather(*(one(b) for b in bodies))
        finally:
            await client.close()

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(go())
    return time.perf_counter() - wall, time.process_time() - cpu


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
            floor_client(url, floor_bodies(folder, url, 10_001), CONCURRENCY)  # warm-up
            ours, floor = [], []
            for s in range(runs):  # interleaved: runner, minimal client, runner, ...
                ours.append(_timed(folder, url, CONCURRENCY, seed=s, limit=None))
                floor.append(floor_client(url, floor_bodies(folder, url, 30_000 + s), CONCURRENCY))
            sequential, _ = _timed(folder, url, 1, seed=20_000, limit=subset)
    finally:
        server.terminate()
        server.wait(timeout=10)
        if old_key is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old_key
    limit_s = REQUESTS / CONCURRENCY * LATENCY_S
    walls = [w for w, _ in ours]
    seq_all = sequential / subset * REQUESTS
    state = "warm: a warm-up of each on the same server, interleaved"
    physical = f"physical limit ({REQUESTS}/{CONCURRENCY} x {LATENCY_S * 1000:.0f} ms)"
    lines += [
        f"runner, {REQUESTS} requests, concurrency {CONCURRENCY}, server latency "
        f"{LATENCY_S * 1000:.0f} ms (fixed-latency loopback server, its own process):",
        *versus_floor(
            "runner wall time", walls, physical, [limit_s] * runs, target=TARGET_RATIO,
            state=state,
        ),
        *versus_floor(
            "  minimal client wall time (information)", [w for w, _ in floor], physical,
            [limit_s] * runs, target=TARGET_RATIO, state=state,
        )[:1],
        *versus_floor(
            "runner wall time", walls, "minimal client, same bodies", [w for w, _ in floor],
            target=TARGET_RATIO, state=state,
        )[:1],
        figure(
            "runner CPU per request", [c / REQUESTS * 1000 for _, c in ours], unit="ms",
            target=TARGET_CPU_MS, higher_is_better=False, state=f"{state}; this process only",
            digits=2,
        ),
        figure(
            "  floor: minimal client CPU per request", [c / REQUESTS * 1000 for _, c in floor],
            unit="ms", target=None, higher_is_better=False, state=state, digits=2,
            no_target="(information)",
        ),
        f"  sequential (concurrency 1, {subset} requests = {sequential:.2f} s, n=1, "
        f"extrapolated to {REQUESTS}): {seq_all:.1f} s, speed-up x"
        f"{seq_all / statistics.median(walls):.1f} (information)",
    ]  # fmt: skip
    return lines

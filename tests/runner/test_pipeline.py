"""The one send pipeline (harness.runner.pipeline): online and batch are driven the same way,
`kgbench run` and stages give the same records for the same requests, there is one backoff,
and no module reaches into another's private helpers to send."""

from __future__ import annotations

import ast
import json
import random
import re
from pathlib import Path

from harness.runfolder import RunFolder
from harness.runner.controller import backoff_delay
from harness.runner.engine import RetryPolicy
from harness.runner.job import BatchOptions, SendOptions
from harness.runner.stage import Stage, StageConfig, StageRequest, run_stage

from .conftest import make_run_folder, read_log
from .helpers import FAST, quiet, run

RUNNER = Path(__file__).resolve().parents[2] / "harness" / "runner"
POLL = BatchOptions(poll_interval_s=0.02, poll_cap_s=0.1)

# what a record says about the answer (not when, how fast, or by which path it came)
ANSWER = (
    "status", "raw", "parsed", "parse_ok", "schema_ok", "schema_errors", "finish_reason",
    "truncated", "refusal", "usage", "error", "structured", "response_model",
    "system_fingerprint", "model",
)  # fmt: skip


def _answer(record: dict) -> dict:
    return {k: record.get(k) for k in ANSWER}


def _meta(path: Path) -> dict:
    return json.loads(path.read_text())


def test_online_and_batch_write_the_same_records_and_counts(tmp_path, server):
    """The same run folder sent online and through the Batch API (two logs of the same
    request identity): the same keys, the same answers, the same counts; only the path
    differs (mode, batch id, latency)."""
    folder = make_run_folder(tmp_path / "run", 30)
    url, srv = server(batch_step_ms=5)
    online = run(folder, "openai:m", tmp_path / "c1", base_url=url, log_name="online")
    batch = run(
        folder, "openai:m", tmp_path / "c2", base_url=url, log_name="batch", batch=True,
        batch_options=POLL,
    )  # fmt: skip
    a = {r["key"]: r for r in read_log(online.log_path)}
    b = {r["key"]: r for r in read_log(batch.log_path)}
    assert len(a) == 30 and a.keys() == b.keys()
    assert all(_answer(a[k]) == _answer(b[k]) for k in a)
    assert {r["mode"] for r in a.values()} == {"online"}
    assert {r["mode"] for r in b.values()} == {"batch"} and all(r["batch_id"] for r in b.values())
    assert srv.stats.snapshot()["batches_created"] == 1

    run_dir = RunFolder(folder)
    meta_a, meta_b = _meta(run_dir.log_settings("online")), _meta(run_dir.log_settings("batch"))
    assert meta_a["counts"] == meta_b["counts"] and meta_a["counts"]["final_ok"] == 30
    assert (meta_a["mode"], meta_b["mode"]) == ("online", "batch")
    assert meta_a.keys() == meta_b.keys()

    # both paths fill the shared cache the same way: a third folder is served from either
    for cache in ("c1", "c2"):
        other = make_run_folder(tmp_path / f"other-{cache}", 30)
        again = run(other, "openai:m", tmp_path / cache, base_url=url)
        assert again.tally.cached == 30 and again.tally.requests == 0


def test_stage_and_run_give_the_same_records_for_the_same_requests(tmp_path, server):
    """A stage holding a run folder's prompts, with the run's response schema, gets the same
    answers, judged the same way and counted the same way, as `kgbench run` over that folder.
    (The keys differ by design: a stage request's params carry its schema's digest.)"""
    folder = make_run_folder(tmp_path / "run", 12)
    url, _ = server()
    result = run(folder, "openai:context-reader", tmp_path / "cache", base_url=url)
    by_prompt = {r["prompt_id"]: r for r in read_log(result.log_path)}

    run_dir = RunFolder.open(folder)
    _, schema = run_dir.response_schema()
    stage = Stage(
        "qa",
        [
            StageRequest(p.prompt_id.replace("/", "-"), p.messages, schema)
            for p in run_dir.prompts()
        ],
    )
    config = StageConfig(
        out_dir=tmp_path / "stages", model="openai:context-reader", base_url=url,
        cache_dir=tmp_path / "stage-cache", policy=FAST, timeout_s=5.0,
    )  # fmt: skip
    staged = run_stage(config, stage, quiet())
    assert staged.complete and len(staged.records) == 12
    for prompt_id, record in by_prompt.items():
        twin = staged.records[prompt_id.replace("/", "-")]
        assert _answer(twin) == _answer(record)
        assert (twin["mode"], twin["attempts"], twin["cached"]) == ("online", 1, False)
        assert twin["params"] == {
            **record["params"],
            "schema_sha256": twin["params"]["schema_sha256"],
        }

    counts = {k: v for k, v in vars(staged.tally).items() if k != "notes"}
    assert counts == {k: v for k, v in vars(result.tally).items() if k != "notes"}
    run_meta = _meta(RunFolder(folder).log_settings("openai-context-reader"))
    stage_meta = _meta(tmp_path / "stages" / "qa.run.json")
    shared = run_meta.keys() & stage_meta.keys()
    assert shared >= {"model", "base_url", "settings", "mode", "prices", "counts", "notes"}
    assert all(run_meta[k] == stage_meta[k] for k in shared - {"started_at", "wall_s"})


def test_run_and_stage_configs_share_every_send_option():
    """RunConfig and StageConfig add only what they send (a run folder with the compiled
    domain its caller holds open, a stage folder and responders) to the one set of runner
    options the pipeline reads."""
    from harness.runner.api import RunConfig

    shared = set(SendOptions.__dataclass_fields__)
    assert set(RunConfig.__dataclass_fields__) - shared == {
        "run_dir",
        "limit",
        "log_name",
        "compiled",
    }
    assert set(StageConfig.__dataclass_fields__) - shared == {"out_dir", "responders", "respond"}
    assert issubclass(RunConfig, SendOptions) and issubclass(StageConfig, SendOptions)


def test_one_backoff():
    """Retries of requests (engine) and of batch calls (batch) wait `RetryPolicy.delay`,
    which is `controller.backoff_delay`: no other module writes exponential backoff out."""
    policy = RetryPolicy(base_s=0.5, cap_s=4.0)
    a, b = random.Random(7), random.Random(7)
    assert [policy.delay(n, a) for n in range(8)] == [
        backoff_delay(n, 0.5, 4.0, b) for n in range(8)
    ]
    assert all(policy.delay(n, a) <= min(4.0, 0.5 * 2**n) for n in range(8))
    exponent = re.compile(r"\b2\s*\*\*")
    writers = sorted(p.name for p in RUNNER.glob("*.py") if exponent.search(p.read_text()))
    assert writers == ["controller.py"]
    for name in ("engine.py", "batch.py"):
        assert ".delay(" in (RUNNER / name).read_text(), name


def test_no_private_runner_helper_is_imported_across_modules():
    """Every sender goes through the pipeline's public names (the review's condition: stage.py
    imports no `_`-prefixed name); checked for every module of the harness and kgbench."""
    root = RUNNER.parents[1]
    offenders = []
    for path in [*root.glob("harness/**/*.py"), *root.glob("kgbench/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue
            sibling = path.parent == RUNNER and node.level == 1
            into_runner = "runner" in node.module.split(".")
            private = [a.name for a in node.names if a.name.startswith("_")]
            if (sibling or into_runner) and private:
                offenders.append(f"{path.relative_to(root)}: {node.module} {private}")
    assert offenders == []

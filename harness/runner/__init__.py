"""The model runner: send a run folder's prompts to a model, exactly once, resumably.

Entry points: `run_model(RunConfig(...))` (harness.runner.api), `run_stage` for multi-step
procedures (harness.runner.stage) and the CLI commands in harness.runner.cli; both entry
points plan a `Job` and send it through the one send pipeline (harness.runner.pipeline).
Module map: job (SendOptions, Job, Books), spec (model specs, endpoints), plan and keys
(request identity), client (transports), controller (AIMD, the one backoff), engine (online
execution), batch (Batch API), log (durable JSONL), records, parse, pricing, progress.
"""

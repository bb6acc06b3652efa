"""The model runner: send a run folder's prompts to a model, exactly once, resumably.

Entry points: `run_model(RunConfig(...))` (harness.runner.api) and the CLI commands in
harness.runner.cli. Module map: spec (model specs), plan and keys
(request identity), client (transports), controller (AIMD, backoff), engine (online
execution), batch (Batch API), log (durable JSONL), records, parse, pricing, progress.
"""

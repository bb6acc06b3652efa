"""Evaluation: what turns a compiled domain's scenarios into prompts and a model's answers into
numbers. Prompts (`prompts`), the reference responders (`responders`), the one judge of an
answer (`judge`: parse status, well-typed fields, problems; the runner records its verdict),
the one scorer (`scoring`; a domain's compiled scorer in `compiled_scorer`, a run folder's
inputs in `run_inputs` and `kgbench score` in `run_scoring`) with its metric panel
(`metrics`, `claims`, `lexicon`, `id_sets`, `metric_inputs`) and its log reader
(`responses_log`), the option-order analysis (`order`) and the one statistics core (`stats`).

It sits above the harness's core modules (compiled, runfolder, gold_layout, scenario_files) and
below the commands that call it (evaluation_cli, report, runner stages, probe, verify, study).
"""

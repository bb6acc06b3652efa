"""Evaluation: what turns a compiled domain's scenarios into prompts and a model's answers into
numbers. Prompts (`prompts`), the reference responders (`responders`), the one scorer
(`scoring`) with its metric panel (`metrics`, `claims`, `lexicon`, `id_sets`,
`metric_inputs`), the option-order analysis (`order`) and the one statistics core (`stats`).

It sits above the harness's core modules (compiled, runfolder, gold_layout, scenario_files) and
below the commands that call it (evaluation_cli, report, runner stages, probe, verify, study).
"""

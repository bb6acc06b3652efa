"""kgbench inside the evaluation harnesses labs already run: an inspect-ai task
(`kgbench.integrations.inspect`) and an lm-evaluation-harness task
(`kgbench/integrations/lm_eval_tasks/kgbench/`), both over `kgbench.integrations.core`: the
items of a verified gold release under one condition, the prompts kgbench renders, and the
scorer `kgbench score` uses (kgbench.scoring), so an item scores the same in every harness.

inspect-ai and lm-eval are not kgbench dependencies (they conflict with its pins); they live
in their own environment, `.venv-evals` (make evals-venv).
"""

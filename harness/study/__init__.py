"""`kgbench study`: several models, the same items, paired comparisons (paper section 5.2).

A study file (spec/study/study.yaml, `StudyConfig`) names a gold release, the models, the
conditions, the replicates and the sampling policy. The study runs every model through the
ordinary runner into one run folder, scores them with the ordinary scorer, and compares them
on the scenario as the unit: each model's panel with intervals, paired model-versus-model
deltas, the model x condition interaction, a ranking with its uncertainty, and reliability
across replicates; then one self-contained HTML report.

Modules: `config` (the study file), `run` (orchestration), `stats` (the statistics),
`report` (the HTML), `cli` (the command). The provenance block is harness.report.provenance's, the
one the QA report uses.
"""

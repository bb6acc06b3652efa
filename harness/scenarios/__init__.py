"""Scenario generation from a compiled graph, and validation of scenario files.

The generator (`generator.Generator`) turns a domain's declared category rules
(generated/<domain>/scenario_rules.json) into category-balanced scenarios whose gold is
computed from the graph (generated/<domain>/kg.json); `validation` checks any scenario file,
generated or hand-written, against the same schema and graph.
"""

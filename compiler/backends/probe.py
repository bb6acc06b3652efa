"""`probe/`: the graph-generation probe (MedG-KRP) as the harness runs it.

* `probe/probe.json`: settings after domain overrides, the roots with their names, the
  predicates that form the reference graph (the graph itself is kg.json), the noisy
  responder's rate and seed, and per step its template and answer schema.
* `probe/prompts/<step>.j2`: the declared Jinja2 templates, verbatim (rendered at run time).
* `probe/schemas/<answer>.schema.json`: one strict JSON Schema per answer kind, generated from
  spec/probe_response.yaml and checked against OpenAI's strict-mode rules; the expansion
  schema gets `maxItems` = concepts_per_answer. Properties are written in declared order
  (strict decoding writes keys in schema order, so the reasoning comes before the answer).

A domain without a probe declaration gets no `probe/` folder.
"""

from __future__ import annotations

from typing import Any

from kgbench.contract import Probe
from kgbench.io import ordered_json_bytes

from ..ir import Domain, ProbeSpec
from ..jsonschemas import class_schema, strict_openai_schema, strict_violations
from ..paths import SPEC_DIR
from .base import Artifact, Backend, EmitContext, declared_order

# step -> (answer class in spec/probe_response.yaml, schema file stem)
STEP_ANSWERS = {
    "expand_effects": ("ExpansionAnswer", "expansion"),
    "expand_causes": ("ExpansionAnswer", "expansion"),
    "edge_check": ("EdgeCheckAnswer", "edge_check"),
    "verify_mapping": ("MappingVerdict", "mapping_verdict"),
}


def answer_schema(class_name: str, probe: ProbeSpec) -> dict[str, Any]:
    """The strict schema of one answer kind (a broken invariant if it is not strict)."""
    schema = strict_openai_schema(class_schema(SPEC_DIR / "probe_response.yaml", class_name))
    if class_name == "ExpansionAnswer":
        schema["properties"]["concepts"]["maxItems"] = probe.settings.concepts_per_answer
    problems = strict_violations(schema)
    if problems:
        raise AssertionError(f"{class_name} schema is not OpenAI-strict: " + "; ".join(problems))
    return declared_order(schema)


class ProbeBackend(Backend):
    name = "probe"
    format_version = Probe.FORMAT
    outputs = ("probe/*",)

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        return _emit(domain, ctx)


BACKEND = ProbeBackend()


def _emit(domain: Domain, ctx: EmitContext) -> list[Artifact]:
    probe = domain.probe
    if probe is None:
        return []
    entities = {e.id: e for e in domain.entities}
    out: list[Artifact] = []
    steps: dict[str, dict[str, str]] = {}
    schemas_done: set[str] = set()
    for step, text in probe.prompts:
        entry = {"template": f"prompts/{step}.j2"}
        out.append(Artifact(f"probe/{entry['template']}", (text.rstrip("\n") + "\n").encode()))
        if step in STEP_ANSWERS:
            cls, stem = STEP_ANSWERS[step]
            entry["schema"] = f"schemas/{stem}.schema.json"
            entry["schema_name"] = f"kgbench_probe_{stem}"
            if stem not in schemas_done:
                schemas_done.add(stem)
                schema = answer_schema(cls, probe)
                out.append(Artifact(f"probe/{entry['schema']}", ordered_json_bytes(schema)))
        steps[step] = entry
    s = probe.settings
    data = {
        "domain": domain.name,
        "domain_phrase": domain.domain_phrase,
        "source": probe.source,
        "settings": {
            "max_depth": s.max_depth,
            "concepts_per_answer": s.concepts_per_answer,
            "path_bound": s.path_bound,
            "curve_max_k": s.curve_max_k,
            "path_mode": s.path_mode,
            "edge_checks_per_root": s.edge_checks_per_root,
            "fuzzy_threshold": s.fuzzy_threshold,
            "embedding_threshold": s.embedding_threshold,
            "max_name_length": s.max_name_length,
        },
        "roots": [
            {"id": r, "name": entities[r].name, "category": entities[r].category}
            for r in probe.roots
        ],
        "reference": {
            "graph": "kg.json",
            "predicates": list(probe.reference_predicates),
            "excluded_directions": list(probe.reference_excluded_directions),
        },
        "noise": {"rate": probe.noise_rate, "seed": probe.noise_seed},
        "steps": steps,
    }
    out.append(Backend.document(Probe, data, ctx))
    return out

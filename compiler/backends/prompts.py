"""Prompt templates: one shared frame and one grounded-context block per condition.

The frame (scenario header, candidate options, answer contract, response JSON Schema) is the
same template for all conditions, which is what makes the four prompts of a scenario
byte-identical outside the context block. Context blocks are compiled from the condition
declarations: their sections come from the extracted subgraph, their annotations from the
condition's `annotations` list.
"""

from __future__ import annotations

import json

from ..idschemes import citation_hint, in_own_ids
from ..ir import Domain
from .base import Artifact, Backend, EmitContext, render
from .schemas import response_schema

# Runtime Jinja for each annotation a condition may show beside an assertion (one line each).
ANNOTATION_SNIPPETS = {
    "evidence_ids": " | evidence: {{ (a.evidence | map(attribute='evidence_id') | join(', ')) or 'none' }}",
    "provenance_label": "{% if a.provenance %} | provenance: {{ a.provenance }}{% endif %}",
    "recommendation": (
        "{% for e in a.evidence if e.recommendation_class %}"
        " | {{ e.evidence_id }}: {{ e.recommendation_class | replace('_', ' ') }}"
        "{% if e.level_of_evidence %}, level of evidence {{ e.level_of_evidence | replace('_', '-') }}"
        "{% endif %}{% endfor %}"
    ),
    "evidence_tier": (
        " | evidence tier: {{ (a.evidence | map(attribute='evidence_tier') | sort | first)"
        " if a.evidence else 'none' }}"
    ),
    "source_databases": (
        "{% if a.source_databases is defined and a.source_databases %}"
        " | sources: {{ a.source_databases | join(', ') }}{% endif %}"
    ),
    "evidence_level": " | evidence level: {{ a.evidence_level }}",
    "validated": " | {{ 'validated' if a.validated else 'not validated' }}",
    "causal_status": " | causal status: {{ a.causal_status }}",
    "confidence": " | confidence: {{ a.confidence }}",
    "population": (
        "{% if a.population_id is defined and a.population_id %}"
        " | population: {{ context.entities[a.population_id].name }}{% endif %}"
    ),
}


class PromptsBackend(Backend):
    """The shared frame and one grounded-context block per condition (runtime Jinja2)."""

    name = "prompts"
    format_version = "1.0.0"
    outputs = ("prompts/*.j2",)

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        return _emit(domain, ctx)


BACKEND = PromptsBackend()


def _emit(domain: Domain, ctx: EmitContext) -> list[Artifact]:
    schema = response_schema()
    fields = [
        {"name": name, "description": in_own_ids(prop.get("description", ""), domain.id_schemes)}
        for name, prop in ((n, schema["properties"][n]) for n in schema["required"])
    ]
    frame = render(
        "prompts/frame.j2",
        ctx,
        domain=domain.name,
        role=domain.role_sentence,
        fields=fields,
        schema_json=in_own_ids(  # declared order
            json.dumps(schema, indent=2, ensure_ascii=False), domain.id_schemes
        ),
        citation_hint=citation_hint(domain.id_schemes),
    )
    out = [Artifact("prompts/frame.j2", frame)]
    for cond in domain.conditions:
        snippets = "".join(ANNOTATION_SNIPPETS[a] for a in cond.annotations)
        block = render(
            "prompts/context.j2",
            ctx,
            domain=domain.name,
            condition=cond,
            # a volume-matched control's block is its base's, padded: the same heading
            heading=next(
                (c.title for c in domain.conditions if c.id == cond.volume_match.base), cond.title
            )
            if cond.volume_match
            else cond.title,
            annotation_snippets=snippets,
            # the class of a class-level claim is its subject, or (an effect modifier of a
            # class) its object: the line names whichever is an intervention class
            group_classes=sorted(c.name for c in domain.entity_classes if c.is_group),
        )
        out.append(Artifact(f"prompts/context_{cond.id}.j2", block))
    return out

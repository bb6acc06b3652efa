"""LinkML JSON export: the domain graph as one instance of the domain's LinkML tree root.

The CSV tables are kgbench's authoring dialect (`|` lists, local ids, `true`/`false` text);
this is the same graph in LinkML's own form, so LinkML's validators can check it without any
kgbench code: identifiers are CURIEs under the domain's prefix, lists are lists, booleans and
numbers are typed, and every reference names its target's identifier.

Besides `<domain>.json`, the export writes what `linkml-validate` needs to enforce more than
types and enums:

- `<domain>.schema.yaml`: the domain schema with its imports merged in (LinkML's own
  `gen-linkml --mergeimports`), so the validator needs no relative import paths;

- `<domain>.shacl.ttl`: SHACL shapes LinkML generates from the domain schema with shape
  references by node (`--use-native-names`): a reference (subject_id, evidence_id, ...) must
  point at a node that conforms to its range class's shape, so a dangling reference, whose
  node has no properties, is rejected;
- `linkml-validate.yaml`: a validator configuration running LinkML's JSON Schema plugin
  (predicates outside the domain's enum, bad patterns, unknown fields) and its SHACL plugin
  (references), e.g. `linkml-validate --config <out>/linkml-validate.yaml <out>/<domain>.json`
  (the data file is named on the command line: a `data_sources` entry in the configuration
  would take precedence over it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgbench.io import json_bytes

from ..backends.base import Artifact
from ..ir import Domain

SHACL_PLUGIN = "linkml.validator.plugins.shacl_validation_plugin.ShaclValidationPlugin"


def _clean(record: dict[str, Any]) -> dict[str, Any]:
    """LinkML JSON omits absent values and empty lists."""
    return {k: v for k, v in record.items() if v is not None and v != [] and v != ()}


def graph(domain: Domain) -> dict[str, Any]:
    """The graph as a dict shaped like the domain's graph container (KnowledgeGraph)."""
    c = domain.curie
    entities = [
        _clean(
            {
                "id": c(e.id),
                "category": e.category,
                "name": e.name,
                "synonyms": list(e.synonyms),
                "description": e.description,
                # the xrefs slot says "the same concept": exact matches only (kgx.py writes
                # the broader, narrower and close terms in their own columns)
                "xrefs": [x for x in e.xrefs if (e.id, x) not in domain.xref_matches],
            }
        )
        for e in domain.entities
    ]
    assertions = [
        _clean(
            {
                "assertion_id": c(a.assertion_id),
                "subject_id": c(a.subject_id),
                "predicate": a.predicate,
                "object_id": c(a.object_id),
                "relation_class": a.relation_class,
                "direction": a.direction,
                "causal_status": a.causal_status,
                "evidence_level": a.evidence_level,
                "confidence": a.confidence,
                "validated": a.validated,
                "context": a.context,
                "population_id": c(a.population_id) if a.population_id else None,
                "temporality": a.temporality,
                "source_databases": list(a.source_databases),
                "no_evidence_reason": a.no_evidence_reason,
                "knowledge_level": a.knowledge_level,
                "agent_type": a.agent_type,
            }
        )
        for a in domain.assertions
    ]
    evidence = [
        _clean(
            {
                "evidence_id": c(e.evidence_id),
                "source_type": e.source_type,
                "title": e.title,
                "citation": e.citation,
                "year": e.year,
                "evidence_tier": e.evidence_tier,
                "study_level": e.study_level,
                "studied_interventions": [c(x) for x in e.studied_interventions],
                "studied_populations": [c(x) for x in e.studied_populations],
            }
        )
        for e in domain.evidence_sources
    ]
    supports = [
        _clean(
            {
                "assertion_id": c(s.assertion_id),
                "evidence_id": c(s.evidence_id),
                "recommendation_class": s.recommendation_class,
                "level_of_evidence": s.level_of_evidence,
            }
        )
        for s in domain.supports
    ]
    members = [
        {"class_id": c(cls.class_id), "member_id": c(m)}
        for cls in domain.intervention_classes
        for m in cls.member_ids
    ]
    return {
        "entities": entities,
        "assertions": assertions,
        "evidence_sources": evidence,
        "assertion_evidence": supports,
        "intervention_class_members": members,
    }


# The CURIE id patterns of spec/kg.yaml: the domain prefix, then the paper's local part.
_CURIE_HEAD = "^[A-Za-z_][A-Za-z0-9_.-]*:"
_DEFAULT_LOCAL = {"entities": "[A-Z]{2,5}_", "assertions": "ASR_", "evidence": "EV_"}


def merged_schema(domain: Domain) -> str:
    """The domain schema with every import merged in (no metadata, so it is deterministic),
    its CURIE id patterns following the domain's declared `id_schemes` (issue 29: an export of
    a domain with its own ids failed linkml-validate on every id)."""
    from linkml.generators.linkmlgen import LinkmlGenerator

    gen = LinkmlGenerator(
        domain.schema_file,
        format="yaml",
        mergeimports=True,
        materialize_attributes=False,
        metadata=False,
    )
    text = gen.serialize()
    schemes = domain.id_schemes
    declared = {
        kind: getattr(schemes, kind).pattern
        for kind in _DEFAULT_LOCAL
        if schemes is not None and getattr(schemes, kind).declared
    }
    return _with_schemes(text, declared) if declared else text


def _with_schemes(text: str, declared: dict[str, str]) -> str:
    import yaml

    def local(pattern: str) -> str:
        return f"(?:{pattern.removeprefix('^').removesuffix('$')})"

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str) and value.startswith(_CURIE_HEAD):
                    tail = value[len(_CURIE_HEAD) :]
                    kind = next((k for k, v in _DEFAULT_LOCAL.items() if tail.startswith(v)), None)
                    if kind in declared:
                        node[key] = f"{_CURIE_HEAD}{local(declared[kind])}$"
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    doc = yaml.safe_load(text)
    walk(doc)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def shapes(schema_text: str) -> bytes:
    """SHACL shapes of the domain schema, references checked by node shape (see above)."""
    from linkml.generators.shaclgen import ShaclGenerator

    text = ShaclGenerator(schema_text, use_class_uri_names=False).serialize()
    return text.encode("utf-8")


def validator_config(domain: Domain, out_dir: Path) -> bytes:
    import yaml

    config = {
        "schema": str(out_dir / f"{domain.name}.schema.yaml"),
        "target_class": domain.graph_class,
        "plugins": {
            "JsonschemaValidationPlugin": {"closed": True},
            SHACL_PLUGIN: {"shacl_path": str(out_dir / f"{domain.name}.shacl.ttl")},
        },
    }
    return yaml.safe_dump(config, sort_keys=False).encode("utf-8")


def emit(domain: Domain, out_dir: Path | None = None) -> list[Artifact]:
    schema_text = merged_schema(domain)
    out = [
        Artifact(f"{domain.name}.json", json_bytes(graph(domain))),
        Artifact(f"{domain.name}.schema.yaml", schema_text.encode("utf-8")),
        Artifact(f"{domain.name}.shacl.ttl", shapes(schema_text)),
    ]
    if out_dir is not None:
        out.append(Artifact("linkml-validate.yaml", validator_config(domain, out_dir.resolve())))
    return out

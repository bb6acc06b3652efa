"""The spec and domain schemas as LinkML itself sees them (its generators, its tree roots).

`make lint` runs linkml-lint over every schema file with .linkmllint.yaml; this file runs
LinkML's generators on every schema (Python dataclasses, pydantic, JSON Schema, docs) and
checks what the linter cannot: one tree root per schema (imports included, as the
generators count them), and prefix expansions that agree with the Biolink Model's map.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SPEC_SCHEMAS = sorted(
    p
    for p in (REPO / "spec").rglob("*.yaml")
    if "declarations" not in p.relative_to(REPO / "spec").parts
)
DOMAIN_SCHEMAS = sorted((REPO / "domains").glob("*/schema/*.yaml"))
SCHEMAS = SPEC_SCHEMAS + DOMAIN_SCHEMAS
IDS = [p.relative_to(REPO).as_posix() for p in SCHEMAS]


def test_schema_folders_hold_only_schemas() -> None:
    """Every file make lint hands to linkml-lint is a schema (declarations live in spec/declarations/)."""
    for path in [*SPEC_SCHEMAS, *DOMAIN_SCHEMAS]:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert {"id", "name"} <= set(data), f"{path} is not a LinkML schema"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, dict[str, object]]:
    """Every generator over every schema, once (about a second per schema)."""
    from linkml.generators.docgen import DocGenerator
    from linkml.generators.jsonschemagen import JsonSchemaGenerator
    from linkml.generators.pydanticgen import PydanticGenerator
    from linkml.generators.pythongen import PythonGenerator

    out: dict[str, dict[str, object]] = {}
    for path, name in zip(SCHEMAS, IDS, strict=True):
        docs = tmp_path_factory.mktemp("docs")
        out[name] = {
            "python": PythonGenerator(str(path)).compile_module(),
            "pydantic": PydanticGenerator(str(path)).compile_module(),
            "jsonschema": json.loads(JsonSchemaGenerator(str(path)).serialize()),
            "docs": (DocGenerator(str(path), directory=str(docs)).serialize(), docs),
        }
    return out


@pytest.mark.parametrize("name", IDS)
def test_every_generator_succeeds(generated, name: str) -> None:
    result = generated[name]
    assert result["python"] is not None and result["pydantic"] is not None
    assert "$defs" in result["jsonschema"]
    _, docs = result["docs"]
    assert any(docs.rglob("*.md"))


def test_generators_warn_about_nothing(caplog) -> None:
    """gen-python used to fail on kg.yaml (two identifiers switched off by slot_usage) and to
    warn about duplicate tree roots in the declarations; both must stay fixed."""
    from linkml.generators.pythongen import PythonGenerator

    with caplog.at_level(logging.WARNING):
        for path in SCHEMAS:
            PythonGenerator(str(path)).serialize()
    problems = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not problems


@pytest.mark.parametrize("path", SCHEMAS, ids=IDS)
def test_one_tree_root_per_schema(path: Path) -> None:
    """A schema and its imports declare at most one tree root; a domain schema exactly one
    (its graph container, which linkml-validate picks by default)."""
    from linkml_runtime.utils.schemaview import SchemaView

    view = SchemaView(str(path))
    roots = [name for name, cls in view.all_classes().items() if cls.tree_root]
    assert len(roots) <= 1, roots
    if path in DOMAIN_SCHEMAS:
        assert len(roots) == 1 and roots[0].endswith("Graph"), roots


def test_schema_prefixes_agree_with_biolink() -> None:
    """Every prefix a schema declares expands as the Biolink Model's prefix map says (what
    KGX resolves CURIEs with), and the xref prefix map repeats the clinical module's."""
    from compiler.biolink import load_model

    biolink = load_model().prefixes
    for path in SCHEMAS:
        declared = yaml.safe_load(path.read_text(encoding="utf-8")).get("prefixes") or {}
        for prefix, expansion in declared.items():
            if prefix in biolink:
                assert expansion == biolink[prefix], (path.name, prefix)
    clinical = yaml.safe_load((REPO / "spec" / "clinical.yaml").read_text())["prefixes"]
    prefix_map = yaml.safe_load((REPO / "spec" / "declarations" / "prefixes.yaml").read_text())
    for item in prefix_map["prefixes"]:
        assert clinical.get(item["prefix"]) == item["expansion"], item["prefix"]


def test_descriptions_on_every_element() -> None:
    """What the `recommended` lint rule asks, checked here too so pytest alone catches it."""
    from linkml_runtime.utils.schemaview import SchemaView

    missing = []
    for path in SCHEMAS:
        view = SchemaView(str(path))
        for kind, elements in (
            ("class", view.all_classes(imports=False)),
            ("slot", view.all_slots(imports=False)),
            ("enum", view.all_enums(imports=False)),
        ):
            missing += [
                f"{path.name}: {kind} {n}" for n, e in elements.items() if not e.description
            ]
    assert not missing, missing[:20]

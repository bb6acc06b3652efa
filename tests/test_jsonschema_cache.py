"""LinkML's JSON Schema generation, cached on disk: a cache hit gives byte-identical schemas
without running the generator, and an edit of the schema or of a file it imports is a miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler import cache, jsonschemas

A = """id: https://example.org/a
name: a
prefixes:
  linkml: https://w3id.org/linkml/
  ex: https://example.org/
default_prefix: ex
imports: [linkml:types, b]
classes:
  Thing:
    attributes:
      name: {range: string, required: true}
      kind: {range: Kind}
      note:
        range: string
        required: true
        annotations: {nullable: true}
"""
B = """id: https://example.org/b
name: b
prefixes:
  linkml: https://w3id.org/linkml/
  ex: https://example.org/
default_prefix: ex
imports: [linkml:types]
enums:
  Kind:
    permissible_values: {small: {}, large: {}}
"""


@pytest.fixture
def schemas(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "b.yaml").write_text(B)
    (tmp_path / "a.yaml").write_text(A)
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.delenv("KGBENCH_NO_CACHE", raising=False)
    jsonschemas.generate.cache_clear()
    yield tmp_path / "a.yaml"
    jsonschemas.generate.cache_clear()


def generator_runs(monkeypatch) -> list[Path]:
    runs: list[Path] = []
    real = jsonschemas._generate

    def counted(path: Path):
        runs.append(path)
        return real(path)

    monkeypatch.setattr(jsonschemas, "_generate", counted)
    return runs


def fresh(path: Path) -> dict:
    """What the generator says now (no memo, no disk cache)."""
    jsonschemas.generate.cache_clear()
    return jsonschemas._generate(path.resolve())[0]


def test_a_hit_is_byte_identical_and_runs_no_generator(schemas: Path, monkeypatch) -> None:
    runs = generator_runs(monkeypatch)
    first = jsonschemas.generate(str(schemas))
    assert len(runs) == 1 and list((schemas.parent / "cache").glob("jsonschema-*.json"))
    jsonschemas.generate.cache_clear()  # a new process: only the disk cache is left
    second = jsonschemas.generate(str(schemas))
    assert len(runs) == 1, "a cache hit ran the generator"
    assert json.dumps(second) == json.dumps(first) == json.dumps(fresh(schemas))
    # the nullable annotation is applied before caching, so a hit carries it too
    note = second["$defs"]["Thing"]["properties"]["note"]
    assert "null" in json.dumps(note)


def test_an_edit_of_the_schema_is_a_miss(schemas: Path, monkeypatch) -> None:
    runs = generator_runs(monkeypatch)
    before = jsonschemas.generate(str(schemas))
    schemas.write_text(A.replace("kind: {range: Kind}", "kind: {range: Kind, required: true}"))
    jsonschemas.generate.cache_clear()
    after = jsonschemas.generate(str(schemas))
    assert len(runs) == 2
    assert "kind" not in before["$defs"]["Thing"]["required"]
    assert "kind" in after["$defs"]["Thing"]["required"]
    assert json.dumps(after) == json.dumps(fresh(schemas))


def test_an_edit_of_an_imported_file_is_a_miss(schemas: Path, monkeypatch) -> None:
    runs = generator_runs(monkeypatch)
    before = jsonschemas.generate(str(schemas))
    (schemas.parent / "b.yaml").write_text(B.replace("large: {}", "large: {}, medium: {}"))
    jsonschemas.generate.cache_clear()
    after = jsonschemas.generate(str(schemas))
    assert len(runs) == 2
    assert "medium" not in before["$defs"]["Kind"]["enum"]
    assert "medium" in after["$defs"]["Kind"]["enum"]


def test_two_schemas_never_share_an_entry(schemas: Path) -> None:
    """Each spec schema is also one of the spec files in every key: the schema's own path
    keeps their entries apart."""
    jsonschemas.generate.cache_clear()
    scenario = jsonschemas.generate(str(jsonschemas.SPEC_DIR / "scenario.yaml"))
    response = jsonschemas.generate(str(jsonschemas.SPEC_DIR / "response.yaml"))
    assert "Scenario" in scenario["$defs"] and "ModelResponse" in response["$defs"]
    assert "Scenario" not in response["$defs"]

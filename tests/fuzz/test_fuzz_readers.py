"""Fuzz the compiler's readers: whatever the bytes, a result or one user error, never
another exception (a traceback) and never a hang."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler.api import check_domain
from compiler.schema import load_schema
from compiler.tables import ErrorList, read_table
from compiler.yamlfile import read_yaml
from kgbench.errors import Location, SpecError, UserError
from kgbench.locations import CHECKOUT as REPO_ROOT

from .settings import budget
from .strategies import mutated, near_text

MINI = REPO_ROOT / "tests" / "fixtures" / "domains" / "mini"
YAML_FILES = [
    MINI / "domain.yaml",
    REPO_ROOT / "domains" / "cardio" / "scenarios.yaml",
    REPO_ROOT / "spec" / "declarations" / "conditions.yaml",
]
CSV_FILES = {
    "entities": MINI / "data" / "entities.csv",
    "assertions": MINI / "data" / "assertions.csv",
    "evidence_sources": MINI / "data" / "evidence_sources.csv",
}


@pytest.fixture(scope="module")
def tables():
    model = load_schema(MINI / "schema.yaml", "MiniPredicate", Location("domain.yaml"))
    return model.tables


def _write(data: bytes) -> Path:
    fd, name = tempfile.mkstemp(suffix=".fuzz")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return Path(name)


@budget(ms=1.5)
@given(data=st.one_of(near_text.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary()))
def test_yaml_reader_on_arbitrary_bytes(data: bytes) -> None:
    path = _write(data)
    try:
        read_yaml(path)
    except SpecError:
        pass
    finally:
        path.unlink()


@budget(ms=6.1)
@given(data=st.data(), which=st.sampled_from(YAML_FILES))
def test_yaml_reader_on_mutated_spec_files(data: st.DataObject, which: Path) -> None:
    path = _write(data.draw(mutated(which.read_bytes())))
    try:
        read_yaml(path)
    except SpecError:
        pass
    finally:
        path.unlink()


@budget(ms=2.8)
@given(data=st.data(), table=st.sampled_from(sorted(CSV_FILES)))
def test_csv_reader_on_mutated_tables(tables, data: st.DataObject, table: str) -> None:
    raw = data.draw(
        st.one_of(
            mutated(CSV_FILES[table].read_bytes()),
            near_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
        )
    )
    path = _write(raw)
    errors = ErrorList()
    try:
        result = read_table(tables[table], path, errors)
        assert all(isinstance(e, SpecError) for e in errors.errors)
        if not errors.errors:
            assert len(result) == len(result.columns[tables[table].columns[0].name])
    except UserError:
        pass
    finally:
        path.unlink()


@budget(ms=111, divisor=4, floor=5)
@given(
    data=st.data(), which=st.sampled_from(["domain.yaml", *(f"data/{t}.csv" for t in CSV_FILES)])
)
def test_whole_domain_check_on_a_mutated_file(data: st.DataObject, which: str) -> None:
    """`kgbench validate` end to end: every check, one message or success."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "t" / "fixtures" / "domains" / "mini"
        shutil.copytree(MINI, root)
        (Path(tmp) / "spec").symlink_to(REPO_ROOT / "spec")
        target = root / which
        target.write_bytes(data.draw(mutated(target.read_bytes())))
        try:
            check_domain(root)
        except UserError as exc:
            assert str(exc).strip()

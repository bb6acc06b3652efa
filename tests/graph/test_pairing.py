"""Issue 33, item 4: a bulk load's pairing checks read from its import files
(`harness.graph.pairing`) give the values the compiled queries give on the imported graph,
defect for defect, and are left to the server whenever the reading could differ."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.graph.bulk import import_plan
from harness.graph.pairing import PAIRING, file_values, pairing_values, recognised

from .imported import imported_graph

REPO = Path(__file__).resolve().parents[2]
CLEAN = dict.fromkeys(PAIRING, 0)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    compile_domain(REPO / "tests/fixtures/domains/mini", out_root=out, force=True)
    return out


@pytest.fixture()
def mini(compiled: Path, tmp_path: Path) -> CompiledDomain:
    """A copy of the compiled mini whose import files a test may damage."""
    shutil.copytree(compiled, tmp_path / "generated")
    return CompiledDomain.open("mini", generated=tmp_path / "generated")


def edit(domain: CompiledDomain, name: str, old: str, new: str) -> None:
    path = domain.import_dir / name
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{name} has no {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# one defect per assertion, each of a kind the pairing checks exist for: (file, old, new)
DEFECTS = [
    # a direct edge naming another assertion
    ("relationships_direct.csv", "TARGETS,ASR_0001,", "TARGETS,ASR_0002,"),
    # a second subject
    ("relationships_has_subject.csv", "ASR_0003,BPR_0001,HAS_SUBJECT\n",
     "ASR_0003,BPR_0001,HAS_SUBJECT\nASR_0003,OUT_0002,HAS_SUBJECT\n"),
    # an assertion node whose predicate is not its edge's type
    ("nodes_assertions.csv", "ASR_0004,OUT_0001,CAUSES_INCREASE_IN,",
     "ASR_0004,OUT_0001,CAUSES_DECREASE_IN,"),
    # an assertion without evidence or reason; another whose SUPPORTS edge is reversed
    ("relationships_supports.csv", "EV_0001,ASR_0005,SUPPORTS,,\n", ""),
    ("relationships_supports.csv", "EV_0001,ASR_0006,", "ASR_0006,EV_0001,"),
    # a direct edge that names no assertion
    ("relationships_direct.csv", ",ASR_0007,", ",,"),
    # a direct edge drawn backwards
    ("relationships_direct.csv", "DRG_0002,PRT_0002,TARGETS,ASR_0008,",
     "PRT_0002,DRG_0002,TARGETS,ASR_0008,"),
    # a second direct edge for one assertion (paired, and counted once)
    ("relationships_direct.csv", "PRT_0002,BPR_0002,PARTICIPATES_IN,ASR_0009,true,causal,high,none,0.95,\n",
     "PRT_0002,BPR_0002,PARTICIPATES_IN,ASR_0009,true,causal,high,none,0.95,\n" * 2),
    # an assertion without its object; another with two
    ("relationships_has_object.csv", "ASR_0010,OUT_0001,HAS_OBJECT\n", ""),
    ("relationships_has_object.csv", "ASR_0011,RSK_0001,HAS_OBJECT\n",
     "ASR_0011,RSK_0001,HAS_OBJECT\nASR_0011,OUT_0001,HAS_OBJECT\n"),
]  # fmt: skip


def test_the_compiled_checks_are_the_ones_read_and_a_clean_compile_passes(
    mini: CompiledDomain,
) -> None:
    """Every pairing check of a compiled domain is the Cypher `TEMPLATES` spells (a compiler
    change to one makes this fail, and until the template follows, the server runs it)."""
    found = recognised(mini)
    assert found is not None and found[0] == mini.label and found[2] == list(PAIRING)
    assert "TARGETS" in found[1] and "HAS_SUBJECT" not in found[1]
    assert file_values(mini, import_plan(mini)) == CLEAN
    assert pairing_values(mini, import_plan(mini)) == CLEAN
    example = CompiledDomain.open("cardio")
    assert recognised(example)[2] == list(PAIRING)  # type: ignore[index]
    assert pairing_values(example, import_plan(example)) == CLEAN


def test_each_defect_is_counted_and_left_to_the_server(mini: CompiledDomain) -> None:
    for name, old, new in DEFECTS:
        edit(mini, name, old, new)
    got = file_values(mini, import_plan(mini))
    assert got is not None and all(v > 0 for v in got.values()), got
    assert pairing_values(mini, import_plan(mini)) == {}  # the server runs all three


def test_what_the_importer_could_read_otherwise_is_left_to_the_server(
    mini: CompiledDomain,
) -> None:
    plan = import_plan(mini)
    # a reason quoted empty is "" to the importer, not null: read here as absent, so the
    # check fails here and the server decides
    edit(mini, "relationships_supports.csv", "EV_0001,ASR_0005,SUPPORTS,,\n", "")
    edit(mini, "nodes_assertions.csv", ",DrugBank,,knowledge", ',DrugBank,"",knowledge')
    assert file_values(mini, plan)["assertions_evidenced"] == 1  # type: ignore[index]
    assert "assertions_evidenced" not in pairing_values(mini, plan)
    # a value that is not a plain token: nothing is read here
    edit(mini, "relationships_has_subject.csv", "ASR_0002,", '"ASR_0002 ",')
    assert file_values(mini, plan) is None and pairing_values(mini, plan) == {}
    # a relationship to a node no file holds (the import would fail): nothing is read here
    edit(mini, "relationships_has_subject.csv", '"ASR_0002 ",', "ASR_9999,")
    assert file_values(mini, plan) is None
    # a plan form this module does not read
    assert file_values(mini, {**plan, "nodes": ["Extra=" + plan["nodes"][0]]}) is None


def test_a_check_that_is_not_the_template_is_left_to_the_server(mini: CompiledDomain) -> None:
    changed = [
        SimpleNamespace(
            name=ch.name,
            expect=ch.expect,
            cypher=ch.cypher.replace("count(a)", "count(DISTINCT a)")
            if ch.name == "assertions_evidenced"
            else ch.cypher,
        )
        for ch in mini.plan.checks
    ]
    fake = SimpleNamespace(
        import_dir=mini.import_dir, plan=SimpleNamespace(label=mini.plan.label, checks=changed)
    )
    assert recognised(fake)[2] == ["direct_edges_paired", "assertions_paired"]  # type: ignore[arg-type,index]
    assert pairing_values(fake, import_plan(mini)) == {  # type: ignore[arg-type]
        "direct_edges_paired": 0,
        "assertions_paired": 0,
    }


@pytest.mark.neo4j
def test_the_files_give_the_graphs_values_defect_for_defect(
    mini: CompiledDomain, tmp_path: Path
) -> None:
    """The planted defects, imported by neo4j-admin: the compiled queries on the graph give
    exactly the values read from the files (each check's value counts several defects)."""
    from harness.graph.load import run_checks

    for name, old, new in DEFECTS:
        edit(mini, name, old, new)
    plan = import_plan(mini)
    read = file_values(mini, plan)
    assert read is not None and all(v > 0 for v in read.values()), read
    with imported_graph(mini, plan, tmp_path) as driver:
        graph = {name: value for name, value, _ in run_checks(driver, mini)}
    assert {name: graph[name] for name in PAIRING} == read

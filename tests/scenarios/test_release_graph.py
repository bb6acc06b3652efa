"""A release ships the graph it was generated from: the compile writes the KGX export
(generated/<d>/kgx/), `publish` copies it into the release and hashes it, `verify-release`
checks it is whole and is the graph the gold cites. On the toy domain (never a committed
release)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compiler.api import compile_domain, validate_domain
from compiler.backends import base, kgx
from harness.compiled import CompiledDomain
from harness.gold_layout import content_hash
from harness.release import verify_release
from harness.release.compat import assess
from harness.release.graph import cited_ids, graph_problems
from harness.release.publish import publish_release
from harness.scenarios.generator import generate_file
from kgbench.cli import app
from kgbench.errors import UserError
from kgbench.io import sha256_bytes

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "tests" / "fixtures" / "domains" / "toy"
GRAPH = ("kgx/toy_nodes.tsv", "kgx/toy_edges.tsv", "kgx/prefixes.json")


@pytest.fixture
def toy(tmp_path: Path) -> CompiledDomain:
    """The toy domain compiled into a private generated/ folder, with its scenarios."""
    generated = tmp_path / "generated"
    compile_domain(TOY, out_root=generated, force=True)
    domain = CompiledDomain.open("toy", generated)
    generate_file(domain)
    return domain


def rehash(root: Path) -> None:
    """Recompute the manifest's hashes after an edit (what a forger would do), so that only
    the graph check can tell."""
    path = root / "manifest.json"
    manifest = json.loads(path.read_text())
    for entry in manifest["files"]:
        data = (root / entry["path"]).read_bytes()
        entry["sha256"], entry["bytes"] = sha256_bytes(data), len(data)
    manifest["content_sha256"] = content_hash(manifest["files"])
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def drop_edge(root: Path, edge_id: str) -> None:
    path = root / "kgx" / "toy_edges.tsv"
    lines = path.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(edge_id + "\t")]
    assert len(kept) == len(lines) - 1
    path.write_text("".join(kept))


def test_publish_ships_the_compiled_graph(toy) -> None:
    result = publish_release(toy, "1.0.0")
    root = result.path
    manifest = json.loads((root / "manifest.json").read_text())
    listed = {f["path"]: f["sha256"] for f in manifest["files"]}
    compiled = json.loads((toy.root / "manifest.json").read_text())
    compiled_outputs = {o["path"]: o["sha256"] for o in compiled["outputs"]}
    for rel in GRAPH:  # the compile's exact bytes, hashed in the release manifest
        assert (root / rel).read_bytes() == (toy.root / rel).read_bytes(), rel
        assert listed[rel] == compiled_outputs[rel] == sha256_bytes((root / rel).read_bytes())
    graph = manifest["graph"]
    assert manifest["release_format"] == "1.1.0"
    assert (graph["nodes"], graph["edges"], graph["prefixes"]) == GRAPH
    assert graph["id_prefix"] == "kgbench.toy"
    assert graph["compiled_manifest_sha256"] == sha256_bytes(
        (toy.root / "manifest.json").read_bytes()
    )
    edges = (root / GRAPH[1]).read_text().splitlines()
    nodes = (root / GRAPH[0]).read_text().splitlines()
    assert graph["edge_count"] == len(edges) - 1 and graph["node_count"] == len(nodes) - 1
    # every assertion of the compiled graph is an edge of the shipped one, by its id
    kg = json.loads((toy.root / "kg.json").read_text())
    edge_ids = {line.split("\t", 1)[0] for line in edges[1:]}
    assert {f"kgbench.toy:{a['assertion_id']}" for a in kg["assertions"]} <= edge_ids
    assert verify_release(root) == []
    code = CliRunner().invoke(app, ["verify-release", str(root)])
    assert code.exit_code == 0, code.output
    shipped = f"its graph ({graph['node_count']} nodes, {graph['edge_count']} edges, KGX)"
    assert shipped in " ".join(code.output.split()), code.output


def test_verify_finds_a_graph_that_is_not_the_one_the_gold_cites(toy) -> None:
    root = publish_release(toy, "1.0.0").path
    gold = {
        (rec := json.loads(line))["scenario_id"]: rec
        for line in (root / "gold.jsonl").read_text().splitlines()
    }
    cited_edges, cited_nodes = cited_ids(gold)
    assert cited_edges and cited_nodes, "the toy gold cites assertions and entities"
    victim = sorted(cited_edges)[0]
    drop_edge(root, f"kgbench.toy:{victim}")
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["graph"]["edge_count"] -= 1  # a consistent forgery: counts and hashes agree
    (root / "manifest.json").write_text(json.dumps(manifest))
    rehash(root)
    problems = verify_release(root, index=None)
    assert len(problems) == 1, problems
    assert f"the gold cites 1 assertion(s) the shipped graph lacks ({victim})" in problems[0]
    code = CliRunner().invoke(app, ["verify-release", str(root), "--index", str(root / "none")])
    assert code.exit_code == 2 and "not the graph the gold was built from" in code.output


def test_an_uncited_edge_dropped_is_caught_by_its_count_not_the_gold(toy) -> None:
    """The answer "no" for the gold check: an edge the gold does not cite may go without the
    gold noticing; the recorded edge count still does (and the index, by the digest)."""
    root = publish_release(toy, "1.0.0").path
    gold = {
        (rec := json.loads(line))["scenario_id"]: rec
        for line in (root / "gold.jsonl").read_text().splitlines()
    }
    cited, _ = cited_ids(gold)
    kg = json.loads((toy.root / "kg.json").read_text())
    uncited = sorted({a["assertion_id"] for a in kg["assertions"]} - cited)[0]
    drop_edge(root, f"kgbench.toy:{uncited}")
    rehash(root)
    recorded = json.loads((root / "manifest.json").read_text())["graph"]["edge_count"]
    assert verify_release(root, index=None) == [
        f"manifest.json: graph.edge_count is {recorded}, the graph holds {recorded - 1}"
    ]
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["graph"]["edge_count"] = recorded - 1  # counts forged too: only the pin can tell
    (root / "manifest.json").write_text(json.dumps(manifest))
    rehash(root)
    assert verify_release(root, index=None) == []
    assert "the release was changed afterwards" in " ".join(verify_release(root))


def test_an_edited_file_and_a_dangling_edge_are_found(toy) -> None:
    root = publish_release(toy, "1.0.0").path
    edges = root / "kgx" / "toy_edges.tsv"
    edges.write_text(edges.read_text().replace("kgbench.toy:", "kgbench.toy:X", 1))
    assert any("kgx/toy_edges.tsv: sha256 mismatch" in p for p in verify_release(root))
    rehash(root)
    text = edges.read_text()
    first = text.splitlines()[1].split("\t")
    edges.write_text(text.replace(first[1], "kgbench.toy:NOPE_1", 1))
    rehash(root)
    assert any("edges to nodes it lacks: kgbench.toy:NOPE_1" in p for p in verify_release(root))


def test_publish_ships_only_the_compiles_own_graph(toy) -> None:
    edges = toy.root / "kgx" / "toy_edges.tsv"
    edges.write_bytes(edges.read_bytes() + b"\n")
    with pytest.raises(UserError, match=r"toy_edges.tsv: not the file the compile wrote"):
        publish_release(toy, "1.0.0")
    manifest = toy.root / "manifest.json"
    data = json.loads(manifest.read_text())
    data["outputs"] = [o for o in data["outputs"] if not o["path"].startswith("kgx/")]
    manifest.write_text(json.dumps(data))
    with pytest.raises(UserError, match=r"no KGX export .*recompile it"):
        publish_release(toy, "1.0.0")
    assert not (toy.root / "gold" / "1.0.0").exists()


def test_only_releases_from_format_1_1_0_must_ship_a_graph(tmp_path: Path) -> None:
    old = {"release_format": "1.0.0", "files": []}
    assert graph_problems(tmp_path, old, {}) == []
    new = {"release_format": "1.1.0", "files": []}
    assert graph_problems(tmp_path, new, {}) == [
        "manifest.json: no 'graph' section; a release of format 1.1.0 ships the KGX export of "
        "its graph"
    ]
    listed_elsewhere = {**new, "graph": {"format": "kgx", "nodes": "gold.jsonl"}}
    assert len(graph_problems(tmp_path, listed_elsewhere, {})) == 3


def test_a_changed_graph_needs_a_release(toy) -> None:
    """Same scenarios and gold, another graph: a patch release; a release from before
    releases carried the graph needs one too; the same graph needs none."""
    root = publish_release(toy, "1.0.0").path
    files = {
        rel: (root / rel).read_bytes()
        for rel in (
            "scenarios.jsonl",
            "gold.jsonl",
            "schemas/scenario.schema.json",
            "schemas/gold.schema.json",
            *GRAPH,
        )
    }
    assert assess(files, files).bump == "none"
    without = {k: v for k, v in files.items() if not k.startswith("kgx/")}
    first = assess(without, files)
    assert first.bump == "patch" and first.reasons == [
        "the release now ships its graph (kgx/) (patch)"
    ]
    changed = {**files, GRAPH[1]: files[GRAPH[1]] + b"x\n"}
    assert assess(files, changed).reasons == ["the graph changed (kgx/toy_edges.tsv) (patch)"]
    with pytest.raises(UserError, match=r"identical to release 1\.0\.0"):
        publish_release(toy, "1.0.1")


def test_the_compiled_graph_is_the_export_and_streams_to_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    domain = validate_domain(TOY)
    exported = {a.path: a.content for a in kgx.emit(domain)}
    held = {a.path: a for a in kgx.compiled(domain)}
    assert sorted(held) == sorted(f"kgx/{p}" for p in exported if not p.endswith(".jsonl"))
    assert all(held[f"kgx/{p}"].content == exported[p] for p in exported if "jsonl" not in p)
    assert not any(a.is_streamed for a in held.values())
    monkeypatch.setattr(base, "COMPACT_ROWS", 0)
    streamed = {a.path: a for a in kgx.compiled(domain)}
    assert streamed["kgx/toy_edges.tsv"].is_streamed
    assert {p: a.content for p, a in streamed.items()} == {p: a.content for p, a in held.items()}
    chunks = list(kgx.tsv_chunks(kgx.EDGE_COLUMNS, kgx.edges(domain), batch=3))
    assert len(chunks) > 2 and b"".join(chunks) == exported["toy_edges.tsv"]

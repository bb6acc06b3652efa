"""Issue 29, item 1: `generate` never crashes on a valid domain.

Hypothesis draws small domains from the toy fixture (tests/fixtures/domains/toy) by the ways a
curator may legitimately write one: claims kept, dropped, stripped of their population or moved
to another; the default population declared or not; population profiles, clinical scores, labs,
entity profiles, gold path shapes and the patterns' optional parameters present or absent;
categories kept or dropped; any seed and count. A draw the compiler refuses is not a valid
domain and is rejected; on every valid one, `generate` ends with items or one UserError, never
a traceback, and every item it writes passes `check-scenarios`.

`make test` runs a small derandomized budget (at most 8 examples); `make fuzz` runs as many
random ones as fit its seconds per target (tests/fuzz/settings.py).
"""

from __future__ import annotations

import csv
import io
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import event, example, given, reject
from hypothesis import strategies as st

from compiler.api import compile_domain
from harness.compiled import CompiledDomain
from harness.scenarios.generator import generate_file
from harness.scenarios.validation import check_file
from kgbench.errors import UserError

from .settings import budget

TOY = Path(__file__).resolve().parents[1] / "fixtures" / "domains" / "toy"
# make test: at most 8 derandomized examples (each compiles and generates a whole domain)
BUDGET = budget(ms=460, cap=8)

OPTIONAL_RULES = ("clinical_scores", "labs", "entity_profiles", "gold_path_shapes")
OPTIONAL_CATEGORY = ("marker_distractor", "salient_classes", "expects_uncertainty")


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or ()), list(reader)


def _write_rows(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    out = io.StringIO()
    writer = csv.DictWriter(out, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


@st.composite
def curated_domain(draw: st.DrawFn) -> dict[str, Any]:
    """The edits that turn the toy domain into another small domain."""
    _, assertions = _rows(TOY / "data" / "assertions.csv")
    claims = {}
    for row in assertions:
        claims[row["assertion_id"]] = draw(
            st.sampled_from(["keep", "keep", "drop", "no_population", "POP_0001", "POP_0002"])
        )
    rules = yaml.safe_load((TOY / "scenarios.yaml").read_text(encoding="utf-8"))
    names = [c["category"] for c in rules["categories"]]
    return {
        "claims": claims,
        "default_population": draw(st.booleans()),
        "profiles": draw(st.sampled_from(["both", "POP_0001", "POP_0002", "none"])),
        "drop_rules": draw(st.sets(st.sampled_from(OPTIONAL_RULES))),
        "drop_category_fields": draw(st.sets(st.sampled_from(OPTIONAL_CATEGORY))),
        "categories": draw(st.sets(st.sampled_from(names), min_size=1)),
        "seed": draw(st.integers(0, 2**31 - 1)),
        "per_category": draw(st.integers(1, 3)),
    }


def write_domain(edits: dict[str, Any], folder: Path) -> Path:
    domain = folder / "toy"
    shutil.copytree(TOY, domain)
    data = domain / "data"
    header, assertions = _rows(data / "assertions.csv")
    ev_header, links = _rows(data / "assertion_evidence.csv")
    kept = []
    for row in assertions:
        edit = edits["claims"][row["assertion_id"]]
        if edit == "drop":
            continue
        if edit == "no_population":
            row["population_id"] = ""
        elif edit.startswith("POP_") and row["population_id"]:
            row["population_id"] = edit
        kept.append(row)
    ids = {r["assertion_id"] for r in kept}
    _write_rows(data / "assertions.csv", header, kept)
    _write_rows(
        data / "assertion_evidence.csv", ev_header, [r for r in links if r["assertion_id"] in ids]
    )

    rules = yaml.safe_load((domain / "scenarios.yaml").read_text(encoding="utf-8"))
    if not edits["default_population"]:
        rules.pop("default_population", None)
    if edits["profiles"] == "none":
        rules.pop("populations", None)
    elif edits["profiles"] != "both":
        rules["populations"] = [
            p for p in rules["populations"] if p["population"] == edits["profiles"]
        ]
    for key in edits["drop_rules"]:
        rules.pop(key, None)
    categories = []
    for c in rules["categories"]:
        if c["category"] not in edits["categories"]:
            continue
        for key in edits["drop_category_fields"]:
            c.pop(key, None)
        if "default_population" not in rules:
            for key in ("title", "decision"):
                c[key] = c[key].replace(" in {population}", "")
        categories.append(c)
    rules["categories"] = categories
    rules["seed"] = edits["seed"]
    rules["per_category"] = edits["per_category"]
    (domain / "scenarios.yaml").write_text(yaml.safe_dump(rules, sort_keys=False), "utf-8")
    return domain


# Found by `make fuzz` (2026-12-05): claims without a population beside claims with one made
# two instance keys hold None and a population id at one place, and sorting the pool raised
# TypeError (harness.scenarios.generator._orderable).
NONE_BESIDE_A_POPULATION = {
    "claims": {
        **{f"ASR_{n:04d}": "keep" for n in range(1, 45)},
        **dict.fromkeys(["ASR_0020", "ASR_0025", "ASR_0030", "ASR_0037"], "POP_0002"),
        **dict.fromkeys(["ASR_0022", "ASR_0042", "ASR_0043"], "POP_0001"),
        **dict.fromkeys(
            ["ASR_0021", "ASR_0026", "ASR_0029", "ASR_0033", "ASR_0034", "ASR_0035", "ASR_0036"],
            "no_population",
        ),
        "ASR_0031": "drop",
    },
    "default_population": False,
    "profiles": "POP_0001",
    "drop_rules": {"entity_profiles", "labs", "clinical_scores"},
    "drop_category_fields": {"marker_distractor", "expects_uncertainty", "salient_classes"},
    "categories": {
        "mediated_effect",
        "multiple_pathways",
        "direct_effect",
        "confounded_association",
        "competing_interventions",
    },
    "seed": 480483,
    "per_category": 1,
}


@BUDGET
@given(edits=curated_domain())
@example(edits=NONE_BESIDE_A_POPULATION)
def test_generate_on_any_valid_domain_is_items_or_one_message(edits: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        domain_dir = write_domain(edits, folder)
        try:
            compile_domain(domain_dir, out_root=folder / "generated", force=True)
        except UserError:
            reject()  # not a valid domain: the compiler said why, in one message
        compiled = CompiledDomain.open("toy", generated=folder / "generated")
        try:
            path, records, _ = generate_file(compiled, None, None, folder / "s.jsonl")
        except UserError as err:
            assert str(err).strip()
            event("one message")
            return
        event("items" if records else "no items")
        if records:
            assert check_file(compiled, path) == records


def test_a_domain_without_default_population_and_with_population_less_claims() -> None:
    """The reported crash (competing-interventions: `sorted()` over populations mixing None and
    ids) on the toy domain with its default population removed: items, each valid."""
    edits = {
        "claims": {},
        "default_population": False,
        "profiles": "both",
        "drop_rules": set(),
        "drop_category_fields": set(),
        "categories": {"competing_interventions", "incomplete_evidence", "direct_effect"},
        "seed": 7,
        "per_category": 1,
    }
    _, assertions = _rows(TOY / "data" / "assertions.csv")
    edits["claims"] = {r["assertion_id"]: "keep" for r in assertions}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        compile_domain(write_domain(edits, folder), out_root=folder / "generated", force=True)
        compiled = CompiledDomain.open("toy", generated=folder / "generated")
        path, records, _ = generate_file(compiled, None, None, folder / "s.jsonl")
        assert {r["category"] for r in records} >= {"competing_interventions"}
        assert check_file(compiled, path) == records

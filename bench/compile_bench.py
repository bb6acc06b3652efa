"""Compiler benchmarks (issue: spec language and compiler).

1. cold `kgbench compile` of cardio (a fresh process, forced rebuild), and
2. a no-op recompile (inputs unchanged), each beside `linkml-validate` on the same cardio
   assertions as the baseline;
3. validation of a synthetic domain of 100,000 assertions with planted errors: `kgbench
   validate` against `linkml-validate` on the same rows, checking both report the same errors.
"""

from __future__ import annotations

import csv
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

from kgbench.locations import CHECKOUT as REPO_ROOT

from .synth import make_domain
from .timing import paired, run_once

BIN = Path(sys.executable).parent
KG = str(BIN / "kgbench")
LINKML_VALIDATE = str(BIN / "linkml-validate")


LOCAL_ID = re.compile(r"^[A-Z]{2,5}_[0-9]{3,7}$")
ID_FIELDS = ("assertion_id", "subject_id", "object_id", "population_id")


def typed_json(csv_path: Path, out: Path, prefix: str) -> None:
    """The same assertion rows in LinkML's JSON form (CURIE ids, typed values), the input
    linkml-validate understands (what `kgbench export --format linkml-json` writes)."""
    rows = []
    with csv_path.open(newline="") as f:
        for r in csv.DictReader(f):
            o = {}
            for k, v in r.items():
                if v == "":
                    continue
                if k in ID_FIELDS and LOCAL_ID.match(v):
                    o[k] = f"{prefix}:{v}"
                elif k == "validated" and v in ("true", "false"):
                    o[k] = v == "true"
                elif k == "confidence":
                    try:
                        o[k] = float(v)
                    except ValueError:
                        o[k] = v
                elif k == "source_databases":
                    o[k] = v.split("|")
                else:
                    o[k] = v
            rows.append(o)
    out.write_text(json.dumps(rows))


def main(quick: bool = False) -> list[str]:
    lines = ["## Compiler"]
    runs = 3 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        cardio_json = tmp_path / "cardio_assertions.json"
        typed_json(REPO_ROOT / "domains/cardio/data/assertions.csv", cardio_json, "kgbench.cardio")
        baseline = [
            LINKML_VALIDATE,
            "-s",
            str(REPO_ROOT / "domains/cardio/schema/cardio.yaml"),
            "-C",
            "CardioAssertion",
            str(cardio_json),
        ]
        out = tmp_path / "gen"
        cold = [KG, "compile", "--domain", "cardio", "--out", str(out), "--force"]
        a, b, ratios = paired(
            "kgbench compile cardio (cold, forced)",
            cold,
            "linkml-validate cardio assertions",
            baseline,
            runs,
        )
        lines += [
            a.row(),
            b.row(),
            f"  ratio compile/linkml-validate: median {statistics.median(ratios):.2f}",
        ]
        noop = [KG, "compile", "--domain", "cardio", "--out", str(out)]
        a, b, ratios = paired(
            "kgbench compile cardio (no-op)",
            noop,
            "linkml-validate cardio assertions",
            baseline,
            runs,
        )
        lines += [
            a.row(),
            b.row(),
            f"  ratio no-op/linkml-validate: median {statistics.median(ratios):.3f}",
        ]

        n = 20_000 if quick else 100_000
        domain, planted = make_domain(tmp_path / "synth", n, inject_errors=40)
        synth_json = tmp_path / "synth_assertions.json"
        typed_json(domain / "data/assertions.csv", synth_json, "kgbench.synth")
        ours_cmd = [KG, "validate", "--domain", str(domain)]
        theirs_cmd = [
            LINKML_VALIDATE,
            "-s",
            str(domain / "schema" / "synth.yaml"),
            "-C",
            "CardioAssertion",
            str(synth_json),
        ]
        cold_env = {**os.environ, "KGBENCH_NO_CACHE": "1"}
        cold_t, _ = run_once(ours_cmd, check=False, env=cold_env)
        _, ours = run_once(ours_cmd, check=False)
        _, theirs = run_once(theirs_cmd, check=False)
        pairs = 1 if quick else 3
        a, b, ratios = paired(
            "kgbench validate (100k, warm schema cache)",
            ours_cmd,
            "linkml-validate (100k)",
            theirs_cmd,
            pairs,
            check_a=False,
        )
        ours_found = {
            (int(m.group(1)), m.group(2))
            for m in re.finditer(r"assertions\.csv, line (\d+), field '(\w+)'", ours.stderr)
        }
        theirs_found = set()
        for m in re.finditer(r"\[ERROR\] \[[^\]]*/(\d+)\] (.*)", theirs.stdout + theirs.stderr):
            row, text = int(m.group(1)) + 2, m.group(2)
            field = re.search(r"in /(\w+)", text)
            req = re.search(r"'(\w+)' is a required property", text)
            theirs_found.add((row, (req or field).group(1)))
        lines += [a.row(), b.row()]
        lines.append(
            f"  speed-up linkml-validate/kgbench validate: median {statistics.median(1 / r for r in ratios):.1f}x "
            f"(cold, no schema cache: {cold_t:.2f} s, {b.median / cold_t:.1f}x)"
        )
        lines.append(
            f"  {n:,} assertions with {len(planted)} planted errors; errors found: kgbench {len(ours_found)}, "
            f"linkml-validate {len(theirs_found)}; identical sets: {ours_found == theirs_found == set(planted)}"
        )
    return lines

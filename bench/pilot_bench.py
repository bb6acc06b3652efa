"""The pilot from a stopped Neo4j, against its floor: a bare `kgbench neo4j start` + `stop`.

`kgbench pilot --domain cardio` (the cardio matrix: compile, start, load, generate, extract,
render, answer, score, report, stop) and the bare start + stop of the same embedded server
(same state folder, same store) run in turn, A B A B, so machine load hits both alike. The
target is issue 33's 15 s on a machine where start + stop takes about 6 s: 2.5x the floor.
The pilot's own step timings (its last line before the panel) are printed beside.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from kgbench.locations import CHECKOUT as REPO_ROOT

from .timing import paired, run_once, versus_floor

KG = str(Path(sys.executable).parent / "kgbench")
TARGET = 2.5


def main(quick: bool = False) -> list[str]:
    runs = 1 if quick else 3
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "pilot"
        pilot = [KG, "pilot", "--domain", "cardio", "--run-dir", str(run_dir)]
        floor = ["sh", "-c", f"'{KG}' neo4j start >/dev/null && exec '{KG}' neo4j stop"]
        run_once([KG, "neo4j", "stop"], cwd=str(REPO_ROOT), check=False)  # start stopped
        a, b, _ = paired("pilot", pilot, "start + stop", floor, runs, cwd=str(REPO_ROOT))
        _, last = run_once(pilot, cwd=str(REPO_ROOT))
    lines = ["## Pilot (cardio, from a stopped Neo4j)"]
    lines += versus_floor(
        "kgbench pilot --domain cardio",
        a.runs,
        "kgbench neo4j start + stop",
        b.runs,
        target=TARGET,
        state="fresh processes, Neo4j stopped before each, alternated",
        digits=1,
    )
    steps = re.search(r"timings: (.*?); total", " ".join(last.stderr.split()))
    if steps:
        lines.append(f"  pilot steps (one more run): {steps.group(1)}")
    return lines


if __name__ == "__main__":
    print("\n".join(main(quick="--quick" in sys.argv)))

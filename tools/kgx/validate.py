"""`kgx validate`, offline, on a domain's KGX export (run with the main .venv's Python).

The main environment knows where the pinned Biolink Model wheel keeps its YAML and prefix
map (the files the compiler checks against); KGX lives in .venv-kgx. This script exports the
domain, then runs kgx_offline.py (the KGX command line with its downloads replaced by those
files) in .venv-kgx on the TSV and the JSON Lines files, and prints what kgx reports.

    .venv/bin/python tools/kgx/validate.py --domain cardio      # or: make kgx-validate

Exit status 0 when kgx reports no error for either format, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KGX_PYTHON = REPO / ".venv-kgx" / "bin" / "python"
WRAPPER = Path(__file__).resolve().parent / "kgx_offline.py"


def biolink_files() -> tuple[Path, Path]:
    """The Biolink Model YAML and prefix map of the biolink-model wheel in this environment."""
    sys.path.insert(0, str(REPO))
    from compiler.biolink import _files

    return _files()


def run_kgx_validate(
    folder: Path, stem: str, fmt: str, extra_prefixes: bool = True, timeout: int = 600
) -> dict:
    """kgx's report (by level, error type and message) for <stem>_nodes/<stem>_edges.<fmt>."""
    if not KGX_PYTHON.exists():
        raise FileNotFoundError(f"{KGX_PYTHON} is missing; run `make kgx-venv`")
    model, prefix_map = biolink_files()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [
            str(KGX_PYTHON),
            str(WRAPPER),
            "--biolink-model",
            str(model),
            "--prefix-map",
            str(prefix_map),
            "--report",
            str(report),
        ]
        if extra_prefixes:
            cmd += ["--extra-prefixes", str(folder / "prefixes.json")]
        cmd += [
            "validate",
            "-i",
            fmt,
            str(folder / f"{stem}_nodes.{fmt}"),
            str(folder / f"{stem}_edges.{fmt}"),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        if not report.exists():
            raise RuntimeError(f"kgx validate did not run:\n{done.stdout}\n{done.stderr}")
        return json.loads(report.read_text())


def count(report: dict, level: str = "ERROR") -> int:
    """How many records kgx flagged at one level."""
    return sum(len(v) for msgs in report.get(level, {}).values() for v in msgs.values())


def main() -> int:
    parser = argparse.ArgumentParser(prog="tools/kgx/validate.py")
    parser.add_argument("--domain", required=True)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from compiler.export import export_domain

    result = export_domain(args.domain, "kgx")
    status = 0
    for fmt in ("tsv", "jsonl"):
        report = run_kgx_validate(result.out_dir, result.domain, fmt)
        errors = count(report)
        print(
            f"kgx validate ({fmt}) {result.domain}: {errors} errors, {count(report, 'WARNING')} warnings"
        )
        if report:
            print(json.dumps(report, indent=2, sort_keys=True)[:4000])
        status |= int(errors > 0)
    return status


if __name__ == "__main__":
    sys.exit(main())

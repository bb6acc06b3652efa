"""`python -m bench [--quick] [--only NAME]`: run the benchmarks and print their figures."""

from __future__ import annotations

import argparse
import importlib

SUITES = [
    "compile_bench",
    "neo4j_bench",
    "bulk_bench",
    "runner_bench",
    "scoring_bench",
    "hostile_bench",
    "probe_bench",
    "study_bench",
    "verify_bench",
    "pilot_bench",
]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "--quick", action="store_true", help="fewer runs and smaller synthetic data"
    )
    parser.add_argument("--only", choices=SUITES, help="run one suite")
    args = parser.parse_args()
    for name in [args.only] if args.only else SUITES:
        module = importlib.import_module(f"bench.{name}")
        for line in module.main(quick=args.quick):
            print(line, flush=True)


if __name__ == "__main__":
    main()

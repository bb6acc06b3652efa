"""`python -m harness.runner run|serve-reference ...`, usable before the main CLI mounts it."""

from __future__ import annotations

from .cli import runner_app


def main() -> None:
    runner_app(prog_name="python -m harness.runner")


if __name__ == "__main__":
    main()

"""`python -m harness.neo4j start|stop|status|build`, usable before the main CLI mounts it."""

from __future__ import annotations

import sys

from kgbench.cliutil import print_user_error
from kgbench.errors import UserError

from .cli import neo4j_app


def main() -> None:
    try:
        neo4j_app(prog_name="python -m harness.neo4j")
    except UserError as exc:
        print_user_error(exc)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()

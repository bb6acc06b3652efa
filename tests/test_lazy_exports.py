"""Lazy package attributes (`kgbench.lazy`): the command line's packages import their heavy
parts only when a name that needs them is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
import harness.neo4j, harness.server
from kgbench.cli import app  # the root command line, every command mounted
heavy = [m for m in ("neo4j", "harness.server.app", "pandas") if m in sys.modules]
assert not heavy, heavy
from harness.neo4j import connection_settings
from harness.server import FaultPlan
assert "neo4j" in sys.modules and "harness.server.app" not in sys.modules
assert harness.server.FaultPlan is FaultPlan
print("ok")
"""


def test_mounting_the_command_line_loads_no_driver_server_or_pandas() -> None:
    """A fresh interpreter: importing the root command line leaves the neo4j driver, the
    reference server and pandas unloaded; each loads on its first named use, and only it."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import harness.neo4j

    with pytest.raises(AttributeError, match=r"harness\.neo4j.*no_such_name"):
        harness.neo4j.no_such_name  # noqa: B018

"""The fuzz run's own account: per target, the examples it was given, and the CPU and wall
seconds it took, printed at the end of `make fuzz` (and of any run of tests/fuzz with
KGBENCH_FUZZ_RANDOM=1), with the load average, so a budget is sized from measured rates
(CPU seconds per example do not depend on what else the machine runs; wall seconds do)."""

from __future__ import annotations

import os
import time
from collections.abc import Generator

import pytest

from .settings import RANDOM

_TIMES: dict[str, list[float]] = {}  # target -> [examples, cpu s, wall s]


def _target(item: pytest.Item) -> str:
    return f"{item.path.stem}::{item.name}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    cpu, wall = time.process_time(), time.perf_counter()
    yield
    inner = getattr(getattr(item, "obj", None), "hypothesis", None)
    chosen = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    if inner is None or chosen is None:
        return
    _TIMES[_target(item)] = [
        chosen.max_examples,
        time.process_time() - cpu,
        time.perf_counter() - wall,
    ]


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not RANDOM or not _TIMES:
        return
    write = terminalreporter.write_line
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    write(f"fuzz budget (load average {load}): examples, CPU s, wall s, CPU ms per example")
    total = [0.0, 0.0, 0.0]
    for name, (examples, cpu, wall) in sorted(_TIMES.items()):
        write(f"  {name}: {examples:.0f}, {cpu:.1f}, {wall:.1f}, {1000 * cpu / examples:.1f}")
        total = [total[0] + examples, total[1] + cpu, total[2] + wall]
    write(f"  all targets: {total[0]:.0f} examples, {total[1]:.1f} CPU s, {total[2]:.1f} wall s")

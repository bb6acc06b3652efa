"""Whole-process timing: several runs after a warm-up, medians, and paired ratios."""

from __future__ import annotations

import statistics
import subprocess
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    label: str
    runs: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    def row(self) -> str:
        return f"{self.label:<52} median {self.median:8.3f} s  (min {min(self.runs):.3f}, max {max(self.runs):.3f}, n={len(self.runs)})"


def run_once(
    cmd: list[str], cwd: str | None = None, check: bool = True, env: dict | None = None
) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if check and proc.returncode not in (0,):
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return took, proc


def time_command(
    label: str,
    cmd: list[str],
    runs: int = 5,
    warmup: int = 1,
    cwd: str | None = None,
    check: bool = True,
) -> Timing:
    for _ in range(warmup):
        run_once(cmd, cwd, check)
    return Timing(label, [run_once(cmd, cwd, check)[0] for _ in range(runs)])


def paired(
    label_a: str,
    cmd_a: list[str],
    label_b: str,
    cmd_b: list[str],
    runs: int = 5,
    cwd: str | None = None,
    check_a: bool = True,
) -> tuple[Timing, Timing, list[float]]:
    """A and B in turn (A B A B ...), so a drift in machine speed hits both alike."""
    run_once(cmd_a, cwd, check_a), run_once(cmd_b, cwd, check=False)
    a, b = [], []
    for _ in range(runs):
        a.append(run_once(cmd_a, cwd, check_a)[0])
        b.append(run_once(cmd_b, cwd, check=False)[0])
    return Timing(label_a, a), Timing(label_b, b), [x / y for x, y in zip(a, b, strict=True)]

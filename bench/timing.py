"""Whole-process timing: several runs after a warm-up, medians, and paired ratios."""

from __future__ import annotations

import os
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


def load_average() -> str:
    """The 1-minute load average and core count, said beside figures measured on a machine
    that other work shares (a figure is only comparable to one taken under similar load)."""
    try:
        one = os.getloadavg()[0]
    except OSError:
        return "load unknown"
    return f"load {one:.1f} on {os.cpu_count()} cores"


def figure(
    label: str,
    values: list[float],
    *,
    unit: str,
    target: float | None,
    higher_is_better: bool,
    state: str,
    digits: int = 0,
    no_target: str = "no target (baseline)",
) -> str:
    """One figure as every bench line prints it: median with min/max and n, the server or
    process state it was measured in (warm or cold, and the baseline's state), and the target
    with PASS/FAIL, or "no target" for a baseline printed for comparison only."""
    med, lo, hi = statistics.median(values), min(values), max(values)
    num = f"{{:,.{digits}f}}"
    if target is None:
        verdict = no_target
    else:
        ok = med >= target if higher_is_better else med <= target
        sign = ">=" if higher_is_better else "<="
        verdict = f"target {sign} {num.format(target)} {unit}: {'PASS' if ok else 'FAIL'}"
    return (
        f"{label:<48} median {num.format(med)} {unit} (min {num.format(lo)}, max "
        f"{num.format(hi)}, n={len(values)}; {state})  {verdict}"
    )


def versus_floor(
    label: str,
    values: list[float],
    floor_label: str,
    floor_values: list[float],
    *,
    target: float,
    state: str,
    digits: int = 3,
    unit: str = "s",
) -> list[str]:
    """A figure as a ratio to its floor, measured in the same run and state (paired runs, A
    B A B ...): the ratio with its target and PASS/FAIL first, then both absolute figures
    beside it for information (absolute seconds are not comparable across machines or
    loads; the ratio is)."""
    ratios = [a / b for a, b in zip(values, floor_values, strict=True)]
    med = statistics.median(ratios)
    verdict = "PASS" if med <= target else "FAIL"
    return [
        f"{label:<48} {med:.2f}x {floor_label} (min {min(ratios):.2f}, max {max(ratios):.2f}, "
        f"n={len(ratios)}; {state}; {load_average()})  target <= {target:.2f}x: {verdict}",
        figure(f"  {label}", values, unit=unit, target=None, higher_is_better=False,
               state=state, digits=digits, no_target="(information)"),
        figure(f"  floor: {floor_label}", floor_values, unit=unit, target=None,
               higher_is_better=False, state=state, digits=digits, no_target="(information)"),
    ]  # fmt: skip

"""C5 review benchmark: verification latency per triplet on cardio (target p95 <= 20 ms).

The triplets are the reference generator's for every cardio scenario (true, false and
unlinkable ones in the declared mix, harness.verify.responders), so exact matches, refuted
triplets that fall through to the path query, and unlinkable ends that never reach Neo4j are
all in the sample, as in a run. Timed per triplet: the whole `Reviewer.review` (screening,
linking, the review queries), after a warm-up pass (query plans compiled, page cache filled).

Baseline in the same run, A and B alternating per pass, both on one long-lived session with
auto-commit reads: B sends the exact query and then, for a triplet it does not verify, the
path query (two round trips for a refuted triplet, as the previous version did); A sends the
compiled review query (`cypher/C5.verify.cypher`), one round trip whatever the verdict, the
path search run inside it only when no assertion states the claim. Both give the same
verdicts (tests/verify/test_review.py); the figures are per triplet, overall and by verdict.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from harness.evaluation.prompts import PromptRenderer
from harness.graph.load import load
from harness.neo4j import connection_settings, open_driver, start, stop
from harness.scenario_files import generated_set, read_scenarios
from harness.verify import steps
from harness.verify.graph_check import Reviewer, VerifySettings
from harness.verify.responders import VerifyResponder

TARGET_P95_MS = 20.0


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def sample(compiled: CompiledDomain, settings: VerifySettings, limit: int | None) -> list[Any]:
    """The reference generator's triplets for the cardio scenarios (at most n per option)."""
    responder = VerifyResponder(compiled)
    renderer = PromptRenderer(compiled)
    predicates = {p["name"]: p for p in compiled.graph["predicates"]}
    scenarios = read_scenarios(generated_set(compiled))[:limit]
    out = []
    for s in scenarios:
        text = steps.generate_prompt(settings.verify, s, renderer.target_outcome(s), predicates)
        out += responder.generate(text)["triplets"]
    return out


def timed(reviewer: Reviewer, triplets: list[Any]) -> tuple[list[float], list[str]]:
    """Milliseconds per triplet, and each triplet's verdict (exact, path or status)."""
    times, kinds = [], []
    for t in triplets:
        start_t = time.perf_counter()
        verdict = reviewer.review(t)
        times.append((time.perf_counter() - start_t) * 1000)
        kinds.append(verdict.method or verdict.status)
    return times, kinds


def main(quick: bool = False) -> list[str]:
    compiled = CompiledDomain.open("cardio")
    settings = VerifySettings.open(compiled, "C5")
    triplets = sample(compiled, settings, 20 if quick else None)
    passes = 2 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "neo4j"
        info = start(state, watch_pid=os.getpid())
        try:
            with open_driver(connection_settings(info.state_dir)) as driver:
                load(driver, compiled)
                one = Reviewer(driver, compiled, settings)
                two = Reviewer(driver, compiled, settings, one_round_trip=False)
                assert one.one_round_trip, "cardio is compiled without the review query"
                timed(one, triplets), timed(two, triplets)  # warm-up: plans, page cache
                a: list[float] = []
                b: list[float] = []
                kinds: list[str] = []
                for _ in range(passes):
                    times, kinds_now = timed(one, triplets)
                    a += times
                    kinds += kinds_now
                    b += timed(two, triplets)[0]
                one.close()
                two.close()
        finally:
            stop(state)
    by_kind_a = _by_kind(kinds, a)
    by_kind_b = _by_kind(kinds, b)
    mix = ", ".join(f"{k} {len(v) // passes}" for k, v in sorted(by_kind_a.items()))
    checked = sum(len(v) for k, v in by_kind_a.items() if k in ("exact", "path", "refuted"))
    checked //= passes
    p95, base95 = _pct(a, 0.95), _pct(b, 0.95)
    refuted95 = _pct(by_kind_a.get("refuted", [0.0]), 0.95)
    verdict = "PASS" if p95 <= TARGET_P95_MS and refuted95 <= TARGET_P95_MS else "FAIL"
    return [
        "## C5 review (verify-and-revise)",
        f"cardio review per triplet ({len(triplets)} triplets x {passes} passes after a warm-up; "
        f"{mix}; {checked} reach Neo4j)",
        f"one round trip (the compiled review query): p50 {_pct(a, 0.5):.2f} ms, p95 "
        f"{p95:.2f} ms, max {max(a):.2f} ms",
        f"  by verdict (p50/p95): {_split(by_kind_a)}",
        f"baseline, two round trips (exact query, then the path query when not verified): p50 "
        f"{_pct(b, 0.5):.2f} ms, p95 {base95:.2f} ms, max {max(b):.2f} ms",
        f"  by verdict (p50/p95): {_split(by_kind_b)}",
        f"speed-up at p95: overall {base95 / p95:.2f}x, refuted "
        f"{_pct(by_kind_b.get('refuted', [0.0]), 0.95) / max(refuted95, 1e-9):.2f}x",
        f"target p95 <= {TARGET_P95_MS:.0f} ms per triplet, overall and refuted: {verdict}",
    ]


def _by_kind(kinds: list[str], times: list[float]) -> dict[str, list[float]]:
    """Times grouped by the verdict of the one-round-trip review (the same triplet gets the
    same verdict either way)."""
    out: dict[str, list[float]] = {}
    for kind, ms in zip(kinds, times, strict=True):
        out.setdefault(kind, []).append(ms)
    return out


def _split(by_kind: dict[str, list[float]]) -> str:
    return ", ".join(
        f"{k} {_pct(v, 0.5):.2f}/{_pct(v, 0.95):.2f} ms" for k, v in sorted(by_kind.items())
    )


if __name__ == "__main__":
    for line in main():
        print(line)

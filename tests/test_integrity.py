"""Semantic integrity checks: what a domain may downgrade and what stays fine. (Each check's
error message is a fixture in tests/bad_inputs/review_cases.txt; their cost at 100,000 rows
is part of the compile benchmark.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from compiler.api import check_domain, compile_domain
from kgbench.cli import app
from kgbench.errors import UserError

CYCLE_ROW = (
    "ASR_0099,OUT_0002,CAUSES_INCREASE_IN,OUT_0001,causal,increase,causal,low,0.5,false,"
    "feedback,,long_term,,no source\n"
)


def _append(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.write_text(path.read_text() + text)


def test_the_committed_domains_pass_every_check() -> None:
    for name in ("cardio", "afib"):
        assert check_domain(name).warnings == ()


def test_a_downgraded_check_warns_and_compiles(
    mini_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _append(mini_copy, "data/assertions.csv", CYCLE_ROW)
    with pytest.raises(UserError, match=r"causal cycle .*\[causal_cycle\]"):
        check_domain(mini_copy)
    _append(mini_copy, "domain.yaml", "integrity:\n  warn: [causal_cycle]  # a feedback loop\n")
    monkeypatch.chdir(mini_copy)
    result = CliRunner().invoke(
        app, ["compile", "--domain", str(mini_copy), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "warning: data/assertions.csv, line 18" in result.stderr
    assert "[causal_cycle, a warning in domain.yaml]" in result.stderr
    assert (tmp_path / "mini" / "kg.json").exists()


def test_a_predicate_declared_to_cycle_may_cycle(mini_copy: Path, tmp_path: Path) -> None:
    _append(mini_copy, "data/assertions.csv", CYCLE_ROW)
    _append(mini_copy, "domain.yaml", "integrity:\n  cycling_predicates: [CAUSES_INCREASE_IN]\n")
    assert compile_domain(mini_copy, out_root=tmp_path).warnings == ()


def test_a_symlink_inside_the_domain_is_accepted(mini_copy: Path) -> None:
    """Review 46 (a PASS that must stay one): a link to a file within the domain."""
    real = mini_copy / "data" / "entities_real.csv"
    (mini_copy / "data" / "entities.csv").rename(real)
    (mini_copy / "data" / "entities.csv").symlink_to(real)
    assert check_domain(mini_copy).entities == 16


def test_same_population_or_shared_class_name_is_not_a_collision(mini_copy: Path) -> None:
    """A drug's synonym equal to the name of its own class is fine (it names the class)."""
    assert check_domain(mini_copy).warnings == ()


def test_distinct_rows_counts_rows_exactly_with_or_without_codes(monkeypatch) -> None:
    """The prechecks' row count equals Python's set of row tuples, by dictionary codes and by
    the joined-string fallback taken where the codes could overflow."""
    import random

    import pyarrow as pa

    from compiler import integrity

    rng = random.Random(17)
    for _ in range(200):
        n = rng.randint(1, 120)
        cols = [
            pa.array([rng.choice(["a", "b", "", "ab", "b\x1fa"]) for _ in range(n)])
            for _ in range(rng.randint(1, 4))
        ]
        expected = len(set(zip(*(c.to_pylist() for c in cols), strict=True)))
        assert integrity._distinct_rows(*cols) == expected
    assert integrity._distinct_rows(pa.array([], pa.string())) == 0
    joined = []
    monkeypatch.setattr(
        integrity, "_distinct", lambda v: joined.append(v) or len(set(v.to_pylist()))
    )
    huge = [pa.array([f"v{i}" for i in range(3)])] * 40  # 3**40 > 2**62: the fallback
    assert integrity._distinct_rows(*huge) == 3 and joined

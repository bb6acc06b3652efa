"""Links to an evidence source whose row has a bad cell are decided by column (they count as
the assertion's link and support nothing, with no message of their own), and the result is
exactly what checking every link row one by one gives: the same messages in the same order,
the same SUPPORTS links, the same assertions counted as linked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import compiler.crosstable as crosstable
from bench.synth import ERROR_KINDS, make_domain
from compiler.frontend import load_domain
from kgbench.errors import UserErrors


def _row_by_row(model, tables, class_prefix):
    """The per-row path: every row of every table flagged (what a table without Arrow
    columns gets), nothing decided by column."""
    return {
        **{n: np.ones(len(tables[n]), dtype=bool) for n in crosstable.GRAPH_TABLES},
        "duplicate_links": True,
        "repeated_link_rows": np.ones(len(tables["assertion_evidence"]), dtype=bool),
        "links_to_broken_sources": np.zeros(len(tables["assertion_evidence"]), dtype=bool),
    }


def _checked(domain: Path, monkeypatch, suspects=None) -> tuple[list[str], tuple]:
    seen: list = []
    check = crosstable.check_graph_tables

    def recording(*args, **kwargs):
        result = check(*args, **kwargs)
        seen.append(result)
        return result

    monkeypatch.setattr("compiler.frontend.check_graph_tables", recording)
    if suspects is not None:
        monkeypatch.setattr(crosstable, "_suspects", suspects)
    with pytest.raises(UserErrors) as raised:
        load_domain(domain)
    monkeypatch.undo()
    _, evidence, assertions, supports, _ = seen[0]
    return [str(p) for p in raised.value.problems], (
        [(s.assertion_id, s.evidence_id) for s in supports],
        [a.assertion_id for a in assertions],
        [e.evidence_id for e in evidence],
    )


def test_links_to_broken_sources_read_as_row_by_row(tmp_path: Path, monkeypatch) -> None:
    # every kind, many times: most evidence sources get a bad cell (a year of 2300), so most
    # links cite a broken source; duplicate and dangling links are planted among them
    domain, planted = make_domain(tmp_path, 3_000, inject_errors=6 * len(ERROR_KINDS))
    assert {p.kind for p in planted} == set(ERROR_KINDS)
    fast_messages, fast = _checked(domain, monkeypatch)
    slow_messages, slow = _checked(domain, monkeypatch, _row_by_row)
    assert fast_messages == slow_messages
    assert fast == slow
    assert len(fast_messages) == len(planted)


def test_a_link_to_a_broken_source_supports_nothing_and_counts_as_linked(
    tmp_path: Path, monkeypatch
) -> None:
    """The "no" cases by hand: one source with a bad year; its links are no SUPPORTS links,
    yet their assertions are not reported as having no evidence link; a repeated link to it
    is still reported as a duplicate."""
    domain, _ = make_domain(tmp_path, 400)
    data = domain / "data"
    sources = (data / "evidence_sources.csv").read_text().splitlines()
    sources[1] = sources[1].replace(",2020,", ",2300,")  # EV_000001: a bad cell
    (data / "evidence_sources.csv").write_text("\n".join(sources) + "\n")
    links = (data / "assertion_evidence.csv").read_text().splitlines()
    cited = [line for line in links[1:] if line.endswith(",EV_000001")]
    assert cited
    (data / "assertion_evidence.csv").write_text("\n".join([*links, cited[0]]) + "\n")
    messages, (supports, _, _) = _checked(domain, monkeypatch)
    assert not any(e == "EV_000001" for _, e in supports)
    assert [m for m in messages if "2300" in m] and [m for m in messages if "duplicate" in m]
    assert not [m for m in messages if "no evidence link" in m]
    assert len(messages) == 2
    assert messages == _checked(domain, monkeypatch, _row_by_row)[0]

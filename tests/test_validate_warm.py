"""Work `kgbench validate` stopped doing twice (issue 33, item 5, the warm valid path) still
gives what doing it twice gave, and still catches what it caught.

- The domain schema is parsed once for its pre-check and the lines of Biolink's findings
  (`yamlfile.read_yaml_once`): the same document while the bytes are the same, a new parse
  after an edit, and the same error as `read_yaml` for a broken file.
- The evidence links' repeated (assertion, source) pairs are found by row numbers where
  every id is known (`crosstable._pairs_repeat`): the answer the joined keys give, the
  separator's ambiguity included.
"""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from compiler import yamlfile
from compiler.crosstable import _joined, _pairs_repeat
from compiler.yamlfile import read_yaml, read_yaml_once
from kgbench.errors import SpecError


def test_an_unchanged_file_is_parsed_once(tmp_path: Path) -> None:
    path = tmp_path / "schema.yaml"
    path.write_text("id: a\nclasses:\n  Drug:\n    is_a: Entity\n", encoding="utf-8")
    first = read_yaml_once(path)
    assert read_yaml_once(path) is first
    assert first.data == read_yaml(path).data
    assert first.line_of(["classes", "Drug", "is_a"]) == read_yaml(path).line_of(
        ["classes", "Drug", "is_a"]
    )


def test_an_edited_file_is_parsed_anew_even_at_the_same_size(tmp_path: Path) -> None:
    path = tmp_path / "schema.yaml"
    path.write_text("id: a\nname: x\n", encoding="utf-8")
    first = read_yaml_once(path)
    path.write_text("id: b\nname: y\n", encoding="utf-8")  # same size, maybe same mtime
    again = read_yaml_once(path)
    assert again is not first
    assert again.data == {"id": "b", "name": "y"}


@pytest.mark.parametrize(
    "data",
    [b"a: 1\na: 2\n", b"a: [1, 2\n", b"x: \xff\n"],
    ids=["duplicate-key", "malformed", "not-utf8"],
)
def test_a_broken_file_is_the_same_error_and_is_not_kept(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "broken.yaml"
    path.write_bytes(data)
    with pytest.raises(SpecError) as plain:
        read_yaml(path)
    for _ in range(2):  # and again: nothing was kept
        with pytest.raises(SpecError) as once:
            read_yaml_once(path)
        assert str(once.value) == str(plain.value)
    assert str(path) not in yamlfile._PARSED


def test_a_directory_is_the_same_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as plain:
        read_yaml(tmp_path)
    with pytest.raises(SpecError) as once:
        read_yaml_once(tmp_path)
    assert str(once.value) == str(plain.value)


def test_the_kept_documents_are_bounded(tmp_path: Path) -> None:
    for i in range(yamlfile.PARSED_KEPT + 3):
        path = tmp_path / f"s{i}.yaml"
        path.write_text(f"n: {i}\n", encoding="utf-8")
        assert read_yaml_once(path).data == {"n": i}
    assert len(yamlfile._PARSED) <= yamlfile.PARSED_KEPT


def _joined_answer(a: list[str], e: list[str]) -> bool:
    pairs = _joined(pa.array(a, pa.string()), pa.array(e, pa.string()))
    return len(pc.unique(pairs)) != len(pairs)


def _answer(a: list[str], e: list[str], assertions: list[str], sources: list[str]) -> bool:
    link_a, link_e = pa.array(a, pa.string()), pa.array(e, pa.string())
    src = pa.array(sources, pa.string())
    a_row = pc.index_in(link_a, value_set=pa.array(assertions, pa.string()))
    e_row = pc.index_in(link_e, value_set=src)
    return _pairs_repeat(link_a, link_e, a_row, e_row, len(src))


@pytest.mark.parametrize("trial", range(40))
def test_repeated_pairs_by_rows_are_the_repeats_of_the_joined_keys(trial: int) -> None:
    rng = random.Random(trial)
    assertions = [f"A_{i}" for i in range(rng.randint(1, 30))]
    sources = [f"E_{i}" for i in range(rng.randint(1, 6))]
    if trial % 4 == 0:
        assertions.append(assertions[0])  # a repeated id in the looked-up table
    n = rng.randint(1, 40)
    a = [rng.choice(assertions) for _ in range(n)]
    e = [rng.choice(sources) for _ in range(n)]
    if trial % 5 == 1:
        a[rng.randrange(n)] = "A_unknown"  # a link to no assertion: the joined keys decide
    if trial % 7 == 2:
        e[rng.randrange(n)] = "E_unknown"
    assert _answer(a, e, assertions, sources) == _joined_answer(a, e)


def test_no_link_repeats_without_a_repeated_pair() -> None:
    assert (
        _answer(["A_1", "A_1", "A_2"], ["E_1", "E_2", "E_1"], ["A_1", "A_2"], ["E_1", "E_2"])
        is False
    )
    assert (
        _answer(["A_1", "A_2", "A_1"], ["E_1", "E_2", "E_1"], ["A_1", "A_2"], ["E_1", "E_2"])
        is True
    )


def test_a_separator_inside_an_id_keeps_the_joined_answer() -> None:
    """'A|B' + 'C' and 'A' + 'B|C' are one joined key: still one repeat, as before."""
    assertions, sources = ["A|B", "A"], ["C", "B|C"]
    a, e = ["A|B", "A"], ["C", "B|C"]
    assert _joined_answer(a, e) is True
    assert _answer(a, e, assertions, sources) is True


def test_a_small_load_keeps_its_freed_pages_and_a_large_one_gives_them_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same domain either way; only a load of `WORTH_GIVING_BACK` bytes of tables or more
    hands its pages back between phases (`kgbench.heap.sized_load`), and `give_back` outside
    a load always does."""
    from bench.synth import make_domain
    from compiler import frontend
    from kgbench import heap
    from kgbench.heap import WORTH_GIVING_BACK, give_back, worth_giving_back

    domain, _ = make_domain(tmp_path / "d", 2_000)
    files = sorted((domain / "data").glob("*.csv"))
    doc = frontend._domain_config(domain)
    tables = frontend.as_mapping(doc, "tables")
    assert frontend._table_bytes(domain, doc, tables) == sum(f.stat().st_size for f in files)
    assert not worth_giving_back(WORTH_GIVING_BACK - 1) and worth_giving_back(WORTH_GIVING_BACK)

    calls: list[int] = []
    monkeypatch.setattr(heap, "_release", lambda: calls.append(1))
    small = frontend.load_domain(domain, derive=False)
    assert calls == []
    give_back()
    assert calls == [1]  # outside a load: always
    calls.clear()
    monkeypatch.setattr(heap, "WORTH_GIVING_BACK", 0)
    large = frontend.load_domain(domain, derive=False)
    assert len(calls) == len(files) + 4  # each table, the cross-table pass, two checks, the end
    assert (small.name, small.warnings, len(small.entities), len(small.assertions)) == (
        large.name,
        large.warnings,
        len(large.entities),
        len(large.assertions),
    )
    assert small.entities == large.entities and list(small.assertions) == list(large.assertions)


def test_a_cache_entry_is_used_only_while_every_dependency_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file is hashed once per lookup (a key file that is also a dependency): still a
    rebuild when a dependency that is not a key file changes or goes."""
    from compiler import cache

    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.delenv("KGBENCH_NO_CACHE", raising=False)
    key, dep = tmp_path / "key.yaml", tmp_path / "dep.yaml"
    key.write_text("a: 1\n", encoding="utf-8")
    dep.write_text("b: 1\n", encoding="utf-8")
    builds: list[int] = []

    def build() -> tuple[int, list[Path]]:
        builds.append(1)
        return len(builds), [key, dep] if dep.exists() else [key]

    assert cache.cached("test", [key], "", build) == 1
    assert cache.cached("test", [key], "", build) == 1  # from the entry
    dep.write_text("b: 2\n", encoding="utf-8")
    assert cache.cached("test", [key], "", build) == 2
    assert cache.cached("test", [key], "", build) == 2
    dep.unlink()
    assert cache.cached("test", [key], "", build) == 3
    key.write_text("a: 2\n", encoding="utf-8")  # another key: another entry
    assert cache.cached("test", [key], "", build) == 4


@pytest.mark.parametrize("errors", [0, 3, 40])
def test_a_link_or_a_reason_from_the_links_rows_is_the_answer_of_their_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, errors: int
) -> None:
    """ "A link or a reason, not both" read from `_suspects`' rows of the links' assertions
    reports what the lookup of every link's id reported: every planted kind (missing
    evidence, links to unknown assertions and sources, repeated links, broken sources)."""
    from bench.synth import ERROR_KINDS, make_domain
    from compiler import crosstable
    from compiler.frontend import load_domain
    from kgbench.errors import UserErrors

    domain, planted = make_domain(tmp_path / "d", 2_000, inject_errors=errors)
    assert errors < len(ERROR_KINDS) or {p.kind for p in planted} == set(ERROR_KINDS)
    seen: list[list[int]] = []
    rule = crosstable._without_evidence_rule

    def both(asr, counted, links, link_rows=None):
        by_ids = rule(asr, counted, links)
        assert link_rows is not None
        by_rows = rule(asr, counted, links, link_rows)
        assert by_rows == by_ids
        seen.append(by_rows)
        return by_rows

    monkeypatch.setattr(crosstable, "_without_evidence_rule", both)
    if errors:
        with pytest.raises(UserErrors):
            load_domain(domain, derive=False)
    else:
        load_domain(domain, derive=False)
    assert len(seen) == 1
    expected = sum(p.kind == "no_evidence" for p in planted)
    assert len(seen[0]) == expected

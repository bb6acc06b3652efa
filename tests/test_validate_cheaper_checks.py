"""Checks made cheaper for issue 33, item 5 still catch what they caught, with the same words.

- A table's strict UTF-8 check runs on the mapped file by Arrow (`tables._valid_utf8_head`)
  instead of decoding it into a str: a bad byte anywhere, and a header longer than the
  decoded start, are reported and read exactly as Python's codec and the whole text say.
- A table's lines are counted a chunk at a time (`tables._simple_records`), not on a copy
  of the whole file: the same lines, whatever falls across a cut.
- A column is trimmed only where a cell's first or last byte may be whitespace
  (`tables._trimmed`): the same cells as the kernel's trim.
- A column's repeated values are found by a running maximum over its dictionary codes
  (`rules._repeated`): the same rows, in order, as a pass with a set.
- `SuggestIndex.expect` keys only the options that share a key with the words to come: each
  lookup answers what the index of every option answers.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from bench.synth import make_domain
from compiler.schema import load_schema
from compiler.tables import (
    HEAD_BYTES,
    HEADER_PREFIX,
    ErrorList,
    _line_numbers,
    _python_parse,
    _record_lines,
    _simple_records,
    _trimmed,
    _valid_utf8_head,
    read_table,
)
from kgbench.errors import Location, SpecError
from kgbench.suggest import SuggestIndex


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    domain, _ = make_domain(tmp_path_factory.mktemp("synth"), 10_000)
    model = load_schema(domain / "schema" / "synth.yaml", "SynthPredicate", Location("synth"))
    return domain, model


def _error(spec: object, path: Path, reader: str) -> str:
    with pytest.raises(SpecError) as caught:
        read_table(spec, path, ErrorList(), reader=reader)  # type: ignore[arg-type]
    return str(caught.value)


@pytest.mark.parametrize(
    "bad",
    [b"\xe9", b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"],
    ids=["latin-1", "surrogate", "overlong", "past-U+10FFFF", "cut"],
)
@pytest.mark.parametrize("where", ["early", "past-the-head"])
def test_a_bad_byte_anywhere_is_the_same_error(
    synth: tuple[Path, object], tmp_path: Path, bad: bytes, where: str
) -> None:
    domain, model = synth
    data = (domain / "data" / "assertions.csv").read_bytes()
    assert len(data) > 2 * HEAD_BYTES  # the byte past the decoded start is past it
    at = data.index(b"\n", 200 if where == "early" else len(data) - 1_000) + 1
    path = tmp_path / "assertions.csv"
    path.write_bytes(data[:at] + b"x" + bad + b"y" + data[at:])
    assert _valid_utf8_head(path) is None  # no: not valid, left to Python's codec
    spec = model.tables["assertions"]  # type: ignore[attr-defined]
    fast, slow = _error(spec, path, "auto"), _error(spec, path, "python")
    assert fast == slow and "not valid UTF-8: byte 0x" in fast  # yes: the same message
    line = data[:at].count(b"\n") + 1
    assert f"line {line}:" in fast


def test_valid_utf8_reads_the_same_table(synth: tuple[Path, object], tmp_path: Path) -> None:
    domain, model = synth
    spec = model.tables["entities"]  # type: ignore[attr-defined]
    path = tmp_path / "entities.csv"
    text = (domain / "data" / "entities.csv").read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    # descriptions of multibyte characters, across the cut of the decoded start ("ignore"
    # may drop a cut one there)
    rest = rest.replace(",,\n", "," + "\u00e9\U0001f600" * 50 + ",\n")
    path.write_text(header + "\n" + rest, "utf-8")
    assert path.stat().st_size > 2 * HEAD_BYTES
    head = _valid_utf8_head(path)
    assert head is not None and not head[1] and head[0].startswith(header)  # yes: valid
    fast, slow = read_table(spec, path, ErrorList()), read_table(spec, path, ErrorList(), "python")
    assert fast.columns == slow.columns


def test_a_header_longer_than_the_decoded_start_is_read_whole(
    synth: tuple[Path, object], tmp_path: Path
) -> None:
    domain, model = synth
    spec = model.tables["entities"]  # type: ignore[attr-defined]
    path = tmp_path / "entities.csv"
    text = (domain / "data" / "entities.csv").read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    # a header of more than HEADER_PREFIX characters: an unknown column, named in full
    long_name = "x" * (HEADER_PREFIX + 100)
    path.write_text(f"{header},{long_name}\n{rest}", "utf-8")
    fast, slow = _error(spec, path, "auto"), _error(spec, path, "python")
    assert fast == slow and f"unknown column '{long_name}'" in fast


def test_expected_words_get_what_the_whole_index_gives() -> None:
    ids = {f"DRG_{i:06d}" for i in range(1, 2_000)} | {"drg-000005", "Ärger_007", "ärger-7x"}
    ids |= {"MONDO:0005148", "HP:0000001", "DRG_100", "DRG_0010_0", "ABC_0_7", "ABC_70"}
    words = [
        "drg-99", "DRG_000099x", "DRG_5000", "Drg_5", "drg-000005", "ÄRGER_7", "mondo_5148",
        "hp-1", "drg-1-0-0", "abc-7", "abc_7_0", "ärger_07",
    ]  # fmt: skip
    whole = SuggestIndex(ids)
    answers = [whole.match(w) for w in words]
    assert answers[0] == "DRG_000099"  # yes: the same id written differently
    assert answers[1] is None and answers[2] is None  # no: not the same id, no such id
    assert answers[3] is None  # no: two ids share the key
    assert answers[4] == "DRG_000005"  # yes: the other of the two
    assert answers[5] == "Ärger_007"  # yes: keyed by casefold, in Python
    assert answers[6] == "MONDO:0005148" and answers[7] == "HP:0000001"  # yes: ':' ids
    assert answers[8] is None  # no: DRG_000100, DRG_100 and DRG_0010_0 all key 'drg100'
    # yes: leading zeros dropped, other zeros kept ('abc7' is not 'abc70')
    assert answers[9] == "ABC_0_7" and answers[10] == "ABC_70"
    for array in (None, pa.array(sorted(ids) * 2, pa.string())):  # repeats: one option each
        prepared = SuggestIndex(ids)
        prepared.expect(words[:-1], array)  # the last word is not announced: still matches
        assert [prepared.match(w) for w in words[:-1]] == answers[:-1]
        assert prepared._by_key is None  # answered without keying every option
        assert prepared.match(words[-1]) == answers[-1] == "Ärger_007"


def _lines_by_definition(data: bytes) -> tuple[int, ...]:
    """The lines as `_record_lines` worked them out from the whole file read as bytes."""
    simple = b'"' not in data and b"\n\n" not in data and b"\r\n\r\n" not in data
    if simple and (b"\r" not in data or data.count(b"\r") == data.count(b"\r\n")):
        n = data.count(b"\n") + (0 if data.endswith(b"\n") else 1) - 1
        return tuple(range(2, n + 2))
    return _python_parse(data.decode("utf-8"), None, "x", strict=False).lines


def test_lines_counted_by_chunk_are_the_lines_of_the_whole_file(tmp_path: Path) -> None:
    rng = random.Random(5)
    pieces = [b"a", b",", b"\n", b"\r", b"\r\n", b'"', b"\r\n\r\n", b"\n\n"]
    path = tmp_path / "t.csv"
    for _ in range(1_500):
        data = b"h,i\n" + b"".join(rng.choice(pieces) for _ in range(rng.randrange(20)))
        try:
            expected = _lines_by_definition(data)
        except csv.Error:
            continue  # the strict reader refuses it before lines are asked for
        path.write_bytes(data)
        for chunk in (1, 2, 3, 5, 1 << 20):  # a quote, blank line or CR pair across a cut
            n = _simple_records(path, chunk)
            got = _record_lines(path) if n is None else tuple(range(2, n + 2))
            assert got == expected, (data, chunk)
        # given the parser's record count, a file of one line per record is not read at all
        assert tuple(_line_numbers(path, len(expected))) == expected, data


def test_a_column_is_trimmed_as_the_kernel_trims_it() -> None:
    rng = random.Random(9)
    # ASCII and Unicode whitespace, controls, and characters that are neither, at the edges
    chars = ["a", "Z", "1", " ", "\t", "\n", "\x0b", "\x1c", "\x85", "\xa0", "\u2000", "\u3000"]
    chars += ["é", "\u200b", "\ufeff", "\x00", "\x7f", ","]
    for _ in range(3_000):
        cells = ["".join(rng.choice(chars) for _ in range(rng.randrange(5))) for _ in range(4)]
        column = pa.array(cells, pa.string())
        for values in (column, column.slice(1)):  # an offset into the buffers too
            assert _trimmed(values).to_pylist() == pc.utf8_trim_whitespace(values).to_pylist()
    plain = pa.array(["a", "", "b c"], pa.string())
    assert _trimmed(plain) is plain  # yes: nothing to trim, no copy
    assert _trimmed(pa.array(["a ", "b"], pa.string())).to_pylist() == ["a", "b"]  # no: trimmed


def test_repeats_by_running_maximum_are_the_repeats_in_order() -> None:
    from compiler.rules import _repeated

    def by_definition(values: list[str]) -> list[int]:
        seen: set[str] = set()
        out = []
        for i, text in enumerate(values):
            if text in seen:
                out.append(i)
            seen.add(text)
        return out

    rng = random.Random(4)
    for _ in range(3_000):
        cells = [rng.choice("abcdef") * rng.randrange(1, 3) for _ in range(rng.randrange(1, 25))]
        column = pa.array(cells, pa.string())
        for values in (column, column.slice(rng.randrange(len(cells)))):
            assert _repeated(None, values) == by_definition(values.to_pylist())  # type: ignore[arg-type]
    assert _repeated(None, pa.array(["x", "y", "z"])) == []  # type: ignore[arg-type]  # no
    assert _repeated(None, pa.array(["x", "y", "x", "x"])) == [2, 3]  # type: ignore[arg-type]


def test_an_index_of_an_array_answers_as_the_index_of_its_set() -> None:
    ids = [f"ASR_{i:06d}" for i in range(1, 3_000)] + ["ASR_000007", "asr-9x", "Target"]
    words = ["asr-7", "ASR_9X", "ASR_5000", "asr_0000010", "Targte", "ASR_000007"]
    whole = SuggestIndex(set(ids))
    answers = [whole.match(w) for w in words]
    assert answers[0] == "ASR_000007" and answers[1] == "asr-9x"  # yes
    assert answers[2] is None and answers[5] is None  # no: no such id; the word itself
    assert answers[4] == "Target"  # yes: a name, by one typing slip
    lazy = SuggestIndex.of_array(pa.array(ids, pa.string()))  # a repeat: one option
    lazy.expect(words[:4])
    assert [lazy.match(w) for w in words[:4]] == answers[:4]
    assert lazy._options is None  # yes: the ids were answered without their set
    assert [lazy.match(w) for w in words[4:]] == answers[4:]  # a name: the set is made
    assert "ASR_000001" in lazy and "ASR_999999" not in lazy and len(lazy) == len(set(ids))
    few = SuggestIndex.of_array(pa.array(["EV_1", "EV_2", "EV_1"], pa.string()))
    assert few.match("ev-1") == SuggestIndex({"EV_1", "EV_2"}).match("ev-1") == "EV_1"

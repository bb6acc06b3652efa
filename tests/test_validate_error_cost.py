"""Errors cost what they are, not errors x rows (issue 33, item 5), with the same words.

`rules.check_column` finds a duplicate's first occurrence by one vectorised pass per erring
column and words each distinct failing text once; `suggest.id_keys` keys a large id set by
Arrow kernels for the "same id written differently" hint. Each is held here to what the
one-by-one definition says, by hand-made yes and no cases.
"""

from __future__ import annotations

import pyarrow as pa

from compiler.rules import check_column
from compiler.schema import Column
from kgbench.suggest import SuggestIndex, _id_key, id_keys


def _column(**kwargs) -> Column:
    fields = dict(
        name="id", range="string", required=True, multivalued=False, identifier=False,
        pattern=None, minimum=None, maximum=None, enum_values=(), references=None,
    )  # fmt: skip
    return Column(**{**fields, **kwargs})


def _checked(col: Column, values: list[str]) -> dict[int, str]:
    return dict(check_column(col, pa.array(values, pa.string()), lambda row: row + 2))


def test_a_duplicate_names_the_line_of_its_first_occurrence() -> None:
    col = _column(identifier=True, pattern=r"^A_[0-9]+$")
    found = _checked(col, ["A_1", "bad", "A_1", "A_2", "A_2", "A_1"])
    # yes: each later occurrence names the first one's line (row 0 -> line 2, row 3 -> 5),
    # also after an earlier rule (the pattern, row 1) took a row out of the column
    assert found[2] == "duplicate id 'A_1' (first defined on line 2)"
    assert found[4] == "duplicate id 'A_2' (first defined on line 5)"
    assert found[5] == "duplicate id 'A_1' (first defined on line 2)"
    assert found[1].startswith("expected a value matching")
    # no: a first occurrence is not a duplicate
    assert sorted(found) == [1, 2, 4, 5]


def test_an_enum_typo_repeated_on_many_rows_gets_the_same_hint_on_each() -> None:
    col = _column(name="predicate", range="Predicate", enum_values=("TARGETS", "TREATS"))
    found = _checked(col, ["TARGETS", "TARGETZ", "TREATS", "TARGETZ", "WIDGET"])
    hint = "expected one of TARGETS, TREATS; got 'TARGETZ' (did you mean 'TARGETS'?)"
    assert found[1] == found[3] == hint  # yes: worded once, on every row that has it
    assert found[4] == "expected one of TARGETS, TREATS; got 'WIDGET'"  # no hint: not close
    assert sorted(found) == [1, 3, 4]  # no: valid values are not reported


def test_a_list_cell_reports_the_row_of_its_bad_item() -> None:
    col = _column(name="dbs", range="Db", multivalued=True, enum_values=("X", "Y"))
    found = _checked(col, ["X|Y", "Y|Z", "X", "Z|X|Z"])
    assert sorted(found) == [1, 3]  # yes: rows 1 and 3; no: rows 0 and 2
    assert found[1] == found[3] == "expected one of X, Y; got 'Z'"


def test_arrow_id_keys_equal_the_python_definition() -> None:
    texts = [
        "DRG_000099", "drg-99", "DRG_0009", "a00b00", "0", "000", "0a01", "x01y02",
        "1-0002", "AB12CD0034", "Ärger_007", "ß_01", "", "__",
    ]  # fmt: skip
    keys = id_keys(texts)
    assert keys == [_id_key(t) for t in texts]
    assert keys[0] == keys[1]  # yes: the same id written differently
    assert keys[0] != keys[2]  # no: another digit is another id
    assert keys[-4] == "rger7" and keys[-3] == "ss1"  # non-ASCII keyed by casefold, in Python


def test_a_large_index_suggests_the_same_id_only() -> None:
    index = SuggestIndex({f"DRG_{i:06d}" for i in range(1, 1000)})
    assert index.match("drg-99") == "DRG_000099"  # yes
    assert index.match("DRG_000099x") is None  # no: not the same id
    assert index.match("DRG_1000") is None  # no: no such id


def test_a_key_that_two_ids_share_suggests_neither_unless_one_is_the_word() -> None:
    index = SuggestIndex({f"DRG_{i:06d}" for i in range(1, 1000)} | {"drg-000005"})
    assert index.match("Drg_5") is None  # no: 'DRG_000005' or 'drg-000005', ambiguous
    assert index.match("drg-000005") == "DRG_000005"  # yes: the other one of the two


def test_distinct_count_is_count_distinct() -> None:
    from compiler.rules import distinct_count

    for values in (["a", "b", "a"], ["a", "b"], [], ["a", None, "a", None]):
        array = pa.array(values, pa.string())
        # yes where values repeat, no where they do not; a null is not a value
        assert distinct_count(array) == len({v for v in values if v is not None})

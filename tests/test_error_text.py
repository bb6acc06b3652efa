"""An error's text is made once (issue 33 item 5: 10,000 errors in one report) and reads as
it always did: `file, line N, field 'f': message`, or the bare message without a location."""

from __future__ import annotations

import pickle

from kgbench.errors import Location, SpecError, UserError, UserErrors


class _CountedLocation(Location):
    """A Location that counts how often its text is asked for."""

    calls = 0

    def __str__(self) -> str:
        type(self).calls += 1
        return super().__str__()


def test_text_unchanged() -> None:
    loc = Location("data/a.csv", 3, "id")
    assert str(SpecError("bad id", loc)) == "data/a.csv, line 3, field 'id': bad id"
    assert str(UserError("no location")) == "no location"
    assert SpecError("bad id", loc).args == ("data/a.csv, line 3, field 'id': bad id",)
    row = Location("x.json", 7, None, row_label="row")
    assert str(UserError("m", row)) == "x.json, row 7: m"


def test_location_text_made_once_per_error() -> None:
    _CountedLocation.calls = 0
    errors = [SpecError(f"e{i}", _CountedLocation("f.csv", i)) for i in range(1, 101)]
    report = UserErrors(errors, max_shown=0)
    assert _CountedLocation.calls == 100
    assert str(report).splitlines()[0] == "f.csv, line 1: e1"
    assert len(str(report).splitlines()) == 100


def test_pickles_to_the_same_text() -> None:
    exc = SpecError("bad", Location("f.csv", 2))
    assert str(pickle.loads(pickle.dumps(exc))) == str(exc)

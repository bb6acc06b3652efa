"""kgbench.gcpause, the one owner of pausing the cyclic collector: off inside, nested blocks
keep it off until the outermost ends, and the state before is restored (also on an error)."""

from __future__ import annotations

import gc

import pytest

from kgbench.gcpause import gc_paused


def test_paused_inside_and_restored_after_nesting_and_errors() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block does not turn it back on
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("a check failed")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()

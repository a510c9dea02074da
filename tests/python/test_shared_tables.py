# Facts that C++ and Python share come from one C++ table, read through the bindings: the tracker
# protocol's codes (src/anvil/rpc/tracker_codes.def). These tests fail when a Python copy creeps
# back in and drifts, and compare the tables with TVM's where TVM has one.
import os

import pytest

from anvil import _ffi
from anvil.rpc.tracker import TrackerCode


def _tvm_or_skip(module):
    try:
        return __import__(module, fromlist=["_"])
    except Exception as err:  # noqa: BLE001 - any import failure means: no TVM peer here
        if os.environ.get("CI") == "true":
            raise  # scripts/setup.sh installs apache-tvm: in CI a missing peer fails the run
        pytest.skip(f"import {module} failed: {err!r}")


# -- tracker codes ------------------------------------------------------------------------------

def test_tracker_codes_are_the_cpp_table():
    table = _ffi.rpc.tracker_codes()
    assert table["UPDATE_INFO"] == 5 and table["FAIL"] == -1 and len(table) == 9
    public = {k: v for k, v in vars(TrackerCode).items() if k.isupper()}
    assert public == table


def test_tracker_codes_match_tvm():
    tvm_base = _tvm_or_skip("tvm.rpc.base")
    theirs = {k: v for k, v in vars(tvm_base.TrackerCode).items() if k.isupper()}
    assert _ffi.rpc.tracker_codes() == theirs

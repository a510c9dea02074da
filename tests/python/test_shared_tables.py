# Facts that C++ and Python share come from one C++ table, read through the bindings: the tracker
# protocol's codes (src/anvil/rpc/tracker_codes.def) and the device type names
# (src/anvil/runtime/device_types.def). These tests fail when a Python copy creeps back in and
# drifts, and compare the tables with TVM's where TVM has one.
import os

import pytest

import anvil
from anvil import _ffi
from anvil.rpc.tracker import RPC_TRACKER_MAGIC, TrackerCode


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
    assert RPC_TRACKER_MAGIC == _ffi.rpc.TRACKER_MAGIC == tvm_base.RPC_TRACKER_MAGIC == 0x2F271


# -- device type names --------------------------------------------------------------------------

def test_every_device_name_round_trips_between_cpp_and_python():
    table = _ffi.device_type_codes()
    assert {"cpu", "cuda", "opencl", "vulkan", "llvm", "cl", "gpu", "nvptx", "hexagon"} <= set(table)
    for name, code in table.items():
        if code == 16:  # Hexagon: named, but this build's DLDeviceType cannot hold it
            continue
        dev = anvil.device(name, 2)
        assert (dev.device_type, dev.device_id) == (code, 2), name
        canonical = repr(dev).split("(")[0]
        assert table[canonical] == code, (name, canonical)
        assert anvil.device(f"{canonical}:1") == anvil.Device(code, 1)


def test_hexagon_is_refused_locally_with_its_code():
    with pytest.raises(ValueError, match="code 16"):
        anvil.device("hexagon")


def test_rpc_session_devices_use_the_same_table():
    sess = anvil.rpc.LocalSession()
    try:
        for name, code in _ffi.device_type_codes().items():
            dev = sess.device(f"{name}:3")
            assert (dev.device_type, dev.device_id) == (code, 3), name
        assert sess.device("hexagon").device_type == 16  # a remote Hexagon stays reachable
        with pytest.raises(ValueError, match="unknown device"):
            sess.device("tpu")
    finally:
        sess.close()


def test_device_names_match_tvm():
    tvm = _tvm_or_skip("tvm")
    theirs = getattr(tvm.runtime.Device, "_DEVICE_TYPE_TO_NAME", None)  # TVM 0.22+: code -> name
    if theirs is None:
        pytest.skip("this TVM has no Device._DEVICE_TYPE_TO_NAME")
    theirs = {int(code): name for code, name in theirs.items()}
    table = _ffi.device_type_codes()
    for code in sorted(set(table.values())):
        assert code in theirs, code
        names = {name for name, c in table.items() if c == code}
        assert theirs[code] in names, (code, theirs[code], names)
        if code != 16:
            assert repr(anvil.Device(code)) == f"{theirs[code]}(0)"

# Error mapping: each anvil::Error kind raised in C++ surfaces as its Python type, and the
# everyday user mistakes raise the type a Python user expects.
import numpy as np
import pytest

import anvil
from anvil import runtime

# AnvilErrorKind codes (runtime/c_abi.h, base/error_kinds.def) and the Python types they map to.
KINDS = [
    (1, ValueError),
    (2, TypeError),
    (3, IndexError),
    (4, NotImplementedError),
    (5, RuntimeError),
    (6, OSError),
    (7, anvil.InternalError),
]


@pytest.mark.parametrize("code, exc_type", KINDS)
def test_each_kernel_error_kind_maps_to_its_python_type(exported, code, exc_type):
    with pytest.raises(exc_type, match="raise_kind: requested error") as info:
        exported["raise_kind"](code)
    assert type(info.value) is exc_type  # exactly: not a subclass standing in for it


def test_unknown_error_code_becomes_runtime_error(exported):
    with pytest.raises(RuntimeError) as info:
        exported["raise_kind"](99)
    assert type(info.value) is RuntimeError


def test_internal_error_is_a_runtime_error():
    assert issubclass(anvil.InternalError, RuntimeError)
    assert anvil.InternalError.__module__ == "anvil"


def test_value_errors_from_user_mistakes():
    with pytest.raises(ValueError, match="shape"):
        anvil.empty((2, 2), "float32").copyfrom(np.ones((3,), dtype=np.float32))
    with pytest.raises(ValueError, match="cannot parse data type"):
        anvil.empty((2,), "floaty")
    with pytest.raises(ValueError, match="unknown device"):
        anvil.device("tpu")
    with pytest.raises(ValueError, match="testing.nope"):
        anvil.get_global_func("testing.nope")


def test_type_errors_from_user_mistakes():
    echo = anvil.get_global_func("testing.echo")
    # The RPC test helpers (registered once any session started in this process) replace the
    # runtime's echo with TVM's, which takes "at least" one argument.
    with pytest.raises(TypeError, match="testing.echo expects (at least )?1 argument"):
        echo()
    with pytest.raises(TypeError, match="expected a Device or a Tensor"):
        anvil.empty((2,), "float32").copyto("cpu")
    with pytest.raises(TypeError, match="argument 1: expected string but got int"):
        anvil.get_global_func("runtime.allocator_bytes_held")("cpu", 3)


def test_not_implemented_error_from_cpp():
    with pytest.raises(NotImplementedError, match="cannot run before it is compiled"):
        runtime.c_source_module("", ["k"])["k"]


def test_os_error_from_cpp(tmp_path):
    with pytest.raises(OSError, match="cannot open"):
        runtime.load_module(tmp_path / "nope.so")


def test_index_error_from_python_survives_cpp():
    def fail():
        raise IndexError("index 9 out of range")

    anvil.register_func("pytest.errors.index", fail, override=True)
    try:
        with pytest.raises(IndexError, match="index 9"):
            anvil.get_global_func("pytest.errors.index")()
    finally:
        anvil.remove_global_func("pytest.errors.index")


def test_non_anvil_python_exception_through_the_kernel_abi_names_its_type(exported):
    def fail(v):
        raise KeyError("missing key")

    with pytest.raises(RuntimeError, match="KeyError: 'missing key'"):
        exported["call_back"](fail, 1)


def test_non_integer_arguments_are_type_errors():
    with pytest.raises(TypeError, match="expected an int, got 'str'"):
        anvil.empty((2, "3"), "float32")
    with pytest.raises(TypeError, match="expected an int, got 'float'"):
        anvil.Device(1.5)
    assert anvil.empty((np.int64(2), np.int32(3))).shape == (2, 3)


def test_other_cpp_exceptions_become_runtime_error(tmp_path, monkeypatch):
    # std::filesystem fails inside export_library (TMPDIR is not a directory): not an anvil::Error.
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    monkeypatch.setenv("TMPDIR", str(not_a_dir))
    with pytest.raises(RuntimeError) as info:
        runtime.c_source_module("int x;", []).export_library(tmp_path / "x.so")
    assert type(info.value) is RuntimeError

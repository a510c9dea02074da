# Values crossing the boundary: every Python type testing.echo can carry there and back.
import ctypes

import numpy as np
import pytest

import anvil
from anvil.runtime import ShapeTuple

echo = anvil.get_global_func("testing.echo")


@pytest.mark.parametrize("value", [None, True, False, 0, -7, 2**63 - 1, -(2**63), 2.5, float("inf"),
                                   "", "héllo", b"\x00\xffbytes"])
def test_scalars_round_trip_with_their_type(value):
    out = echo(value)
    assert out == value and type(out) is type(value)


def test_bytearray_becomes_bytes():
    assert echo(bytearray(b"ab")) == b"ab"


def test_int_out_of_range_is_value_error():
    with pytest.raises(ValueError, match="64-bit"):
        echo(2**63)


def test_numpy_scalars_become_python_values():
    assert echo(np.int32(5)) == 5 and type(echo(np.int32(5))) is int
    assert echo(np.float32(1.5)) == 1.5
    assert echo(np.bool_(True)) is True


def test_sequences_become_lists():
    assert echo([1, "a", [2.5, None]]) == [1, "a", [2.5, None]]
    assert echo((1, 2)) == [1, 2]
    assert echo([]) == []


def test_shape_tuple_round_trips():
    out = echo(ShapeTuple((2, 3, 4)))
    assert isinstance(out, ShapeTuple) and isinstance(out, tuple) and out == (2, 3, 4)


def test_device_function_module_objects_round_trip(kernels):
    assert echo(anvil.cpu(3)) == anvil.cpu(3)
    assert echo(echo).same_as(echo)
    assert echo(kernels).same_as(kernels)


def test_handles_are_ctypes_pointers():
    p = ctypes.c_void_p(0x1234)
    out = echo(p)
    assert isinstance(out, ctypes.c_void_p) and out.value == 0x1234


def test_tensor_and_numpy_arguments(make_random):
    t = anvil.tensor(make_random((2,), "int32"))
    assert echo(t).same_as(t)
    arr = make_random((3,), "float64")
    out = echo(arr)
    assert isinstance(out, anvil.Tensor)
    assert out.data_ptr == arr.__array_interface__["data"][0]  # zero-copy


def test_read_only_numpy_argument_is_copied(make_random):
    arr = make_random((3,), "float64")
    arr.flags.writeable = False
    out = echo(arr)
    assert out.data_ptr != arr.__array_interface__["data"][0]
    np.testing.assert_array_equal(out.numpy(), arr)


def test_data_types_come_back_as_strings():
    empty = anvil.get_global_func("runtime.tensor_empty")
    t = empty(ShapeTuple((2, 2)), "int8", anvil.cpu(0))
    assert t.shape == (2, 2) and t.dtype == "int8"


def test_unsupported_objects_are_type_errors():
    with pytest.raises(TypeError, match="dict"):
        echo({"a": 1})
    with pytest.raises(TypeError, match="object"):
        echo(object())


def test_wrong_argument_count_is_type_error():
    with pytest.raises(TypeError, match="testing.echo expects 1 argument"):
        echo(1, 2)


def test_keyword_arguments_are_refused():
    with pytest.raises(TypeError):
        echo(value=1)

# anvil.Tensor: creation, numpy round trips for every dtype, copies, views, printing and errors.
import numpy as np
import pytest

import anvil
from conftest import NOT_APPLICABLE

ALL_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64",
              "uint8", "uint16", "uint32", "uint64", "bool"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_numpy_round_trip_keeps_values_shape_and_dtype(make_random, dtype):
    src = make_random((3, 5, 2), dtype)
    t = anvil.tensor(src)
    assert t.shape == (3, 5, 2)
    assert t.dtype == dtype
    assert t.ndim == 3
    assert t.device == anvil.cpu(0)
    out = t.numpy()
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, src)  # a copy: bit-exact
    assert out.__array_interface__["data"][0] != t.data_ptr


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_empty_then_copyfrom_then_numpy(make_random, dtype):
    src = make_random((7,), dtype)
    t = anvil.empty((7,), dtype)
    assert t.copyfrom(src) is t
    np.testing.assert_array_equal(t.numpy(), src)
    np.testing.assert_array_equal(np.asarray(t), src)


def test_tensor_copies_its_input(make_random):
    src = make_random((4, 4), "float32")
    t = anvil.tensor(src)
    src[0, 0] += 10.0
    assert t.numpy()[0, 0] != src[0, 0]


def test_tensor_accepts_lists_and_dtype_argument():
    t = anvil.tensor([[1, 2, 3], [4, 5, 6]], dtype="float32")
    assert t.dtype == "float32" and t.shape == (2, 3)
    np.testing.assert_array_equal(t.numpy(), np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32))
    assert anvil.tensor([True, False]).dtype == "bool"
    assert anvil.tensor(np.float32(2.5)).shape == ()


def test_scalar_and_empty_shapes(make_random):
    s = anvil.tensor(np.array(3.5, dtype=np.float64))
    assert s.shape == () and s.ndim == 0 and float(s.numpy()) == 3.5
    z = anvil.empty((0, 3), "int32")
    assert z.shape == (0, 3) and z.numpy().shape == (0, 3)


def test_properties_strides_size_nbytes():
    t = anvil.empty((2, 3, 4), "int16")
    assert t.strides == (12, 4, 1)  # in elements
    assert t.size == 24 and t.nbytes == 48
    assert t.is_contiguous
    assert len(t) == 2
    assert anvil.empty(5, "float32").shape == (5,)


def test_copyto_device_and_tensor(make_random):
    src = make_random((5, 3), "float64")
    t = anvil.tensor(src)
    u = t.copyto(anvil.cpu(0))
    assert not u.same_as(t) and u.data_ptr != t.data_ptr
    np.testing.assert_array_equal(u.numpy(), src)
    dst = anvil.empty((5, 3), "float64")
    assert t.copyto(dst).same_as(dst)
    np.testing.assert_array_equal(dst.numpy(), src)


def test_copyfrom_tensor_and_casting_rules(make_random):
    t = anvil.empty((4,), "float32")
    src64 = make_random((4,), "float64")
    t.copyfrom(src64)  # same_kind: float64 -> float32 allowed
    np.testing.assert_allclose(t.numpy(), src64, rtol=1e-6)  # float32 rounding of float64 data
    with pytest.raises(TypeError, match="cannot cast"):
        anvil.empty((4,), "int32").copyfrom(src64)
    other = anvil.tensor(make_random((4,), "float32"))
    t.copyfrom(other)
    np.testing.assert_array_equal(t.numpy(), other.numpy())


def test_copyfrom_shape_mismatch_is_value_error(make_random):
    t = anvil.empty((2, 3), "float32")
    with pytest.raises(ValueError, match="shape"):
        t.copyfrom(make_random((3, 2), "float32"))
    with pytest.raises(ValueError, match="shapes and dtypes must match"):
        t.copyfrom(anvil.empty((3, 2), "float32"))
    with pytest.raises(ValueError, match="shapes and dtypes must match"):
        t.copyfrom(anvil.empty((2, 3), "float64"))


def test_copyfrom_strided_numpy_source(make_random):
    big = make_random((6, 8), "int32")
    view = big[::2, 1::3]
    t = anvil.empty(view.shape, "int32").copyfrom(view)
    np.testing.assert_array_equal(t.numpy(), view)


def test_numpy_of_strided_tensor(make_random):
    big = make_random((6, 8), "float32")
    t = anvil.from_dlpack(big[1::2, ::-2])
    assert not t.is_contiguous
    np.testing.assert_array_equal(t.numpy(), big[1::2, ::-2])


def test_bad_dtype_string_is_value_error():
    with pytest.raises(ValueError, match="cannot parse data type 'f32'"):
        anvil.empty((2,), "f32")
    with pytest.raises(ValueError, match="cannot hold elements of type float33"):
        anvil.empty((2,), "float33")
    with pytest.raises(ValueError, match="cannot hold"):
        anvil.empty((2,), "float32x4")


def test_negative_dimension_is_value_error():
    with pytest.raises(ValueError, match="negative"):
        anvil.empty((2, -1), "float32")


def test_unsupported_numpy_dtype_is_type_error():
    with pytest.raises(TypeError, match="complex128"):
        anvil.tensor(np.ones(3, dtype=np.complex128))


def test_bfloat16_rounds_floats_and_exposes_raw_bits():
    values = np.array([1.0, -2.5, 3.140625, 1.00390625], dtype=np.float32)  # the last rounds to even
    t = anvil.tensor(values, dtype="bfloat16")
    assert t.dtype == "bfloat16"
    assert t.numpy().dtype.name == "bfloat16"  # an ml_dtypes array
    bits = t.view(dtype="uint16").numpy()
    back = (bits.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(back, np.array([1.0, -2.5, 3.140625, 1.0], dtype=np.float32))
    raw = anvil.empty((4,), "bfloat16").copyfrom(bits)  # uint16 sources are taken as raw bits
    np.testing.assert_array_equal(raw.view(dtype="uint16").numpy(), bits)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                                  "float8_e8m0fnu",
                                  "float4_e2m1fn", "int4", "uint4", "int2", "uint2", "bfloat16"])
def test_low_precision_types_round_trip_ml_dtypes_arrays(name):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    values = np.array([0.0, 1.0, -1.0, 1.5, 2.0, 3.0, 0.5, -2.0], dtype=np.float32)
    if name.startswith("uint"):
        values = np.abs(values)
    if "int" in name:
        values = np.trunc(values)
    array = values.astype(getattr(ml_dtypes, name))
    t = anvil.tensor(array)  # the dtype comes from the array
    assert t.dtype == name and t.nbytes == array.nbytes
    back = t.numpy()
    assert back.dtype == array.dtype
    np.testing.assert_array_equal(back.view(f"uint{8 * array.itemsize}"), array.view(f"uint{8 * array.itemsize}"))
    # float sources are converted as ml_dtypes converts them (to nearest even)
    u = anvil.empty(values.shape, name).copyfrom(values)
    np.testing.assert_array_equal(u.numpy().astype(np.float32), array.astype(np.float32))
    scalar = anvil.tensor(array[3])  # 0-d stays 0-d
    assert scalar.shape == () and scalar.numpy().astype(np.float32) == array[3].astype(np.float32)


def test_view_shares_memory_and_checks_size(make_random):
    t = anvil.tensor(make_random((2, 6), "float32"))
    v = t.view((3, 4))
    assert v.data_ptr == t.data_ptr and v.shape == (3, 4)
    np.testing.assert_array_equal(v.numpy().ravel(), t.numpy().ravel())
    with pytest.raises(ValueError, match="needs"):
        t.view((5, 5))


def test_repr_and_str_show_header_and_values():
    t = anvil.tensor(np.array([[1.5, 2.5]], dtype=np.float32))
    text = repr(t)
    assert text.startswith("<anvil.Tensor shape=(1, 2), dtype=float32, device=cpu(0)>")
    assert "1.5" in text and "2.5" in text
    assert "2.5" in str(t)
    big = anvil.empty((100, 100), "float32")
    assert repr(big) == "<anvil.Tensor shape=(100, 100), dtype=float32, device=cpu(0)>"


def test_array_protocol_with_dtype_and_copy_false(make_random):
    src = make_random((3,), "int32")
    t = anvil.tensor(src)
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), src.astype(np.float64))
    with pytest.raises(ValueError, match="from_dlpack"):
        np.array(t, copy=False)


def test_tensor_is_not_constructible_directly():
    with pytest.raises(TypeError):
        anvil.Tensor()


def test_tensor_on_missing_device_fails_cleanly():
    if anvil.cuda(0).exist:
        pytest.skip(NOT_APPLICABLE + "a CUDA device exists here")
    with pytest.raises(RuntimeError, match="cuda"):
        anvil.empty((2,), "float32", anvil.cuda(0))


def test_classes_print_under_their_public_names():
    assert anvil.Tensor.__module__ == "anvil" and anvil.Device.__module__ == "anvil"
    assert anvil.runtime.Module.__module__ == "anvil.runtime"

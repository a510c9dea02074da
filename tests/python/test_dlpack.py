# DLPack both ways without copies: numpy <-> anvil share memory, capsules are consumed once and
# the producer's deleter runs exactly once.
import gc
import sys

import numpy as np
import pytest

import anvil
from conftest import NOT_APPLICABLE

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "bool"]


def address(array):
    return array.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_to_anvil_shares_memory(make_random, dtype):
    arr = make_random((4, 3), dtype)
    t = anvil.from_dlpack(arr)
    assert t.data_ptr == address(arr)
    assert t.shape == (4, 3) and t.dtype == dtype
    # A write through numpy is visible through the tensor ...
    arr[1, 2] = not arr[1, 2] if dtype == "bool" else arr[1, 2] + 1
    np.testing.assert_array_equal(t.numpy(), arr)
    # ... and a write through the tensor is visible in numpy.
    replacement = make_random((4, 3), dtype)
    t.copyfrom(replacement)
    np.testing.assert_array_equal(arr, replacement)


@pytest.mark.parametrize("dtype", DTYPES)
def test_anvil_to_numpy_shares_memory(make_random, dtype):
    t = anvil.tensor(make_random((5,), dtype))
    arr = np.from_dlpack(t)
    assert address(arr) == t.data_ptr
    assert arr.dtype == np.dtype(dtype) and arr.shape == (5,)
    replacement = make_random((5,), dtype)
    arr[...] = replacement
    np.testing.assert_array_equal(t.numpy(), replacement)
    t.copyfrom(make_random((5,), dtype))
    np.testing.assert_array_equal(arr, t.numpy())


def test_strided_numpy_import_keeps_strides(make_random):
    base = make_random((4, 6), "float32")
    view = base[:, 1::2]
    t = anvil.from_dlpack(view)
    assert t.strides == (6, 2) and not t.is_contiguous
    assert t.data_ptr == address(view)
    np.testing.assert_array_equal(t.numpy(), view)


def test_numpy_deleter_runs_exactly_once(make_random):
    arr = make_random((16,), "float64")
    base = sys.getrefcount(arr)
    t = anvil.from_dlpack(arr)
    assert sys.getrefcount(arr) == base + 1  # the capsule's manager holds the array
    u = anvil.get_global_func("testing.echo")(t)  # more references to the same tensor
    del t
    gc.collect()
    assert sys.getrefcount(arr) == base + 1
    del u
    gc.collect()
    assert sys.getrefcount(arr) == base  # released once: not leaked, not released twice


def test_capsule_is_renamed_when_consumed_and_cannot_be_reused(make_random):
    arr = make_random((3,), "int32")
    base = sys.getrefcount(arr)
    cap = arr.__dlpack__()
    assert '"dltensor"' in repr(cap)
    t = anvil.from_dlpack(cap)
    assert '"used_dltensor"' in repr(cap)
    with pytest.raises(ValueError, match="already consumed"):
        anvil.from_dlpack(cap)
    assert t.data_ptr == address(arr)
    del cap  # consumed: dropping the capsule must not run the deleter
    gc.collect()
    assert sys.getrefcount(arr) == base + 1
    del t  # the legacy deleter runs now, once
    gc.collect()
    assert sys.getrefcount(arr) == base


def test_versioned_capsule_is_consumed_without_copy(make_random):
    arr = make_random((3, 2), "float32")
    cap = arr.__dlpack__(max_version=(1, 0))
    assert '"dltensor_versioned"' in repr(cap)
    t = anvil.from_dlpack(cap)
    assert '"used_dltensor_versioned"' in repr(cap)
    assert t.data_ptr == address(arr)
    with pytest.raises(ValueError, match="already consumed"):
        anvil.from_dlpack(cap)


def test_read_only_producer_is_copied(make_random):
    arr = make_random((5,), "int64")
    arr.flags.writeable = False
    t = anvil.from_dlpack(arr)  # numpy flags the versioned capsule read-only
    assert t.data_ptr != address(arr)
    np.testing.assert_array_equal(t.numpy(), arr)


def test_numpy_view_of_anvil_tensor_is_writable(make_random):
    t = anvil.tensor(make_random((4,), "float32"))
    arr = np.from_dlpack(t)  # numpy asks for a versioned capsule
    assert arr.flags.writeable
    legacy = np.from_dlpack(_LegacyOnly(t))
    assert address(legacy) == t.data_ptr and not legacy.flags.writeable  # numpy's rule for legacy


class _LegacyOnly:
    """A producer that only speaks the pre-1.0 protocol (no max_version)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None):
        return self.tensor.__dlpack__()

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def test_legacy_producer_is_imported(make_random):
    t = anvil.tensor(make_random((3,), "uint8"))
    u = anvil.from_dlpack(_LegacyOnly(t))
    assert u.data_ptr == t.data_ptr


def test_unconsumed_anvil_capsule_releases_the_tensor(make_random):
    arr = make_random((8,), "float32")
    base = sys.getrefcount(arr)
    t = anvil.from_dlpack(arr)
    cap = t.__dlpack__()
    assert '"dltensor"' in repr(cap)
    versioned = t.__dlpack__(max_version=(1, 0))
    assert '"dltensor_versioned"' in repr(versioned)
    del t
    gc.collect()
    assert sys.getrefcount(arr) == base + 1  # the capsule keeps the tensor (and so the array)
    del cap
    gc.collect()
    assert sys.getrefcount(arr) == base + 1
    del versioned
    gc.collect()
    assert sys.getrefcount(arr) == base


def test_anvil_capsule_round_trips_through_anvil(make_random):
    t = anvil.tensor(make_random((2, 2), "float64"))
    u = anvil.from_dlpack(t.__dlpack__())
    assert u.data_ptr == t.data_ptr and not u.same_as(t)
    u2 = anvil.from_dlpack(t)  # an object with __dlpack__
    assert u2.data_ptr == t.data_ptr


def test_dlpack_device_and_copy_flags(make_random):
    t = anvil.tensor(make_random((3,), "float32"))
    assert t.__dlpack_device__() == (1, 0)
    copied = np.from_dlpack(t, copy=True)
    assert address(copied) != t.data_ptr
    np.testing.assert_array_equal(copied, t.numpy())
    shared = np.from_dlpack(t, copy=False)
    assert address(shared) == t.data_ptr
    with pytest.raises(BufferError, match="copy=False"):
        t.__dlpack__(dl_device=(2, 0), copy=False)


def test_from_dlpack_rejects_non_dlpack_objects():
    with pytest.raises(TypeError, match="__dlpack__"):
        anvil.from_dlpack(42)


def test_numpy_scalar_array_round_trip():
    arr = np.array(7, dtype=np.int64)
    t = anvil.from_dlpack(arr)
    assert t.shape == () and int(np.from_dlpack(t)) == 7


def test_torch_round_trip_without_copy(make_random):
    torch = pytest.importorskip("torch", reason=NOT_APPLICABLE + "torch is not installed (an optional peer: "
                                "scripts/setup.sh does not install it)")
    x = torch.from_numpy(make_random((4, 5), "float32"))
    t = anvil.from_dlpack(x)
    assert t.data_ptr == x.data_ptr()
    y = torch.from_dlpack(t)
    assert y.data_ptr() == t.data_ptr
    y.add_(1.0)
    np.testing.assert_array_equal(t.numpy(), x.numpy())

# Tensor creation (anvil.tensor, anvil.empty, anvil.from_dlpack) and the numpy-facing methods of
# anvil.Tensor: numpy(), copyfrom(), __array__ and printing. The class itself is C++ (_ffi.Tensor).
#
# Low-precision types (bfloat16, float8_*, float4_e2m1fn, int4, uint4, int2, uint2): numpy has
# none of them; ml_dtypes does, under the same names and with the same memory layout (one element
# per byte for the sub-byte types). With ml_dtypes installed Tensor.numpy() returns its arrays and
# anvil.tensor / copyfrom take them (or float arrays, rounded to nearest even like ml_dtypes'
# astype). Without it Tensor.numpy() raises TypeError; t.view(dtype="uint8" or "uint16").numpy()
# gives the raw bits either way, and unsigned arrays of the storage width count as raw bits.
import numpy as np

try:
    import ml_dtypes as _ml_dtypes
except ImportError:  # optional: only for numpy interop of the low-precision types
    _ml_dtypes = None

from . import _ffi
from ._device import cpu, device as _to_device
from ._ffi import Tensor

_NUMPY_DTYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
}
# Anvil name -> the unsigned numpy dtype of its storage (the raw bits).
_LOW_PRECISION = {
    "bfloat16": "uint16", "float8_e4m3fn": "uint8", "float8_e4m3fnuz": "uint8", "float8_e5m2": "uint8",
    "float8_e5m2fnuz": "uint8", "float8_e8m0fnu": "uint8", "float4_e2m1fn": "uint8", "int4": "uint8",
    "uint4": "uint8", "int2": "uint8", "uint2": "uint8",
}
_REPR_MAX_ELEMENTS = 1000


def _dtype_name(dtype):
    """The Anvil name of a dtype given as a string, numpy dtype or Python/numpy type."""
    if isinstance(dtype, str):
        return dtype
    return np.dtype(dtype).name


def _numpy_dtype(name, what):
    if name not in _NUMPY_DTYPES and name not in _LOW_PRECISION:
        raise TypeError(f"{what}: numpy dtype '{name}' has no Anvil equivalent "
                        f"(supported: {', '.join(sorted(_NUMPY_DTYPES | set(_LOW_PRECISION)))})")
    return name


def _low_precision_bits(array, name):
    """The raw bits (uint8 / uint16) of `array` as low-precision type `name`: an array of that type
    or of the raw storage type as it is, anything else converted (ml_dtypes; bfloat16 without it:
    rounded to nearest even here)."""
    raw = _LOW_PRECISION[name]
    array = np.asarray(array)
    if array.dtype.name == name:
        return np.asarray(array, order="C").view(raw)
    if array.dtype.name == raw:
        return array
    if _ml_dtypes is not None:
        return array.astype(getattr(_ml_dtypes, name)).view(raw)
    if name != "bfloat16":
        raise TypeError(f"converting to {name} needs the ml_dtypes package (or pass the raw bits as {raw})")
    bits = np.asarray(array, dtype=np.float32, order="C").view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(array, dtype=np.float32))
    return np.where(nan, 0x7FC0, rounded).astype(np.uint16)


def empty(shape, dtype="float32", device=None):
    """Create an uninitialised tensor.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : str or numpy dtype
    device : Device, optional
        Defaults to cpu(0).

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError
        For a negative dimension or an unknown dtype.
    """
    dev = cpu(0) if device is None else _to_device(device)
    return _ffi.empty(shape, _dtype_name(dtype), dev)


def tensor(data, device=None, dtype=None):
    """Copy array-like data into a new tensor (TVM's ``tvm.nd.array``).

    Parameters
    ----------
    data : array_like or Tensor
        Anything ``np.asarray`` accepts.
    device : Device, optional
        Where the tensor lives; defaults to cpu(0).
    dtype : str or numpy dtype, optional
        Defaults to the dtype numpy infers for `data`.

    Returns
    -------
    Tensor
        A new tensor owning a copy of the data.
    """
    dev = cpu(0) if device is None else _to_device(device)
    if isinstance(data, Tensor) and (dtype is None or _dtype_name(dtype) == data.dtype):
        return data.copyto(dev)
    name = None if dtype is None else _dtype_name(dtype)
    source = data.numpy() if isinstance(data, Tensor) else data
    if name is None and isinstance(source, np.ndarray) and source.dtype.name in _LOW_PRECISION:
        name = source.dtype.name  # an ml_dtypes array
    if name in _LOW_PRECISION:
        bits = _low_precision_bits(source, name)
        out = _ffi.empty(bits.shape, name, dev)
        out.view(dtype=_LOW_PRECISION[name])._copy_from(np.asarray(bits, order="C"))
        return out
    else:
        array = np.asarray(data.numpy() if isinstance(data, Tensor) else data, dtype=name)
        name = _numpy_dtype(array.dtype.name, "anvil.tensor")
    out = _ffi.empty(array.shape, name, dev)
    return out.copyfrom(array)


def from_dlpack(obj):
    """Import a tensor without copying it, through the DLPack protocol.

    Parameters
    ----------
    obj : object with ``__dlpack__`` (numpy array, torch tensor, ...) or a DLPack PyCapsule
        Legacy (``"dltensor"``) and versioned (``"dltensor_versioned"``) capsules are accepted; a
        capsule can be consumed only once (it is renamed ``"used_..."``).

    Returns
    -------
    Tensor
        Shares the producer's memory; the producer's deleter runs once, when the tensor dies.
        A producer that flags its data read-only (DLPack 1.0) gets a private copy instead,
        since Anvil tensors are writable.
    """
    return _ffi.from_dlpack(obj)


def _numpy(self):
    """Copy the tensor into a new numpy array (works for tensors on any device).

    Raises
    ------
    TypeError
        For a low-precision type (bfloat16, float8_*, int4, ...) without the ml_dtypes package: use
        ``t.view(dtype="uint16").numpy()`` (``"uint8"`` for the 8-bit and smaller) for the bits.
    """
    if self.dtype in _LOW_PRECISION:
        raw = _LOW_PRECISION[self.dtype]
        if _ml_dtypes is None:
            raise TypeError(f"Tensor.numpy: numpy has no {self.dtype} (install ml_dtypes); use "
                            f"t.view(dtype='{raw}').numpy() for the raw bits")
        array = np.empty(self.shape, dtype=raw)
        self.view(dtype=raw)._copy_to_numpy(array)
        return array.view(getattr(_ml_dtypes, self.dtype))
    array = np.empty(self.shape, dtype=self.dtype)
    self._copy_to_numpy(array)
    return array


def _copyfrom(self, source):
    """Copy data into this tensor and return it.

    Parameters
    ----------
    source : Tensor or array_like
        Must have the tensor's shape. A Tensor must also have its dtype; a numpy array is cast
        when numpy's "same_kind" rule allows it (float64 -> float32 yes, float -> int no); other
        array-likes are converted to the tensor's dtype.

    Returns
    -------
    Tensor
        self

    Raises
    ------
    ValueError
        When the shapes (or, for a Tensor source, the dtypes) differ.
    TypeError
        When a numpy array's dtype cannot be cast safely.
    """
    if isinstance(source, Tensor):
        self._copy_from(source)
        return self
    if self.dtype in _LOW_PRECISION:
        array, target = _low_precision_bits(source, self.dtype), self.view(dtype=_LOW_PRECISION[self.dtype])
    else:
        if isinstance(source, np.ndarray):
            array = source
            if array.dtype.name != self.dtype:
                if not np.can_cast(array.dtype, self.dtype, casting="same_kind"):
                    raise TypeError(f"Tensor.copyfrom: cannot cast a {array.dtype.name} array into a "
                                    f"{self.dtype} tensor (numpy 'same_kind' casting)")
                array = array.astype(self.dtype)
        else:
            array = np.asarray(source, dtype=self.dtype)
        target = self
    if tuple(array.shape) != self.shape:
        raise ValueError(f"Tensor.copyfrom: the source has shape {tuple(array.shape)} but the tensor "
                         f"has shape {self.shape}")
    target._copy_from(array)
    return self


def _array(self, dtype=None, copy=None):
    if copy is False:
        raise ValueError("anvil.Tensor: numpy cannot share its memory through __array__; "
                         "use np.from_dlpack(t) for a zero-copy view")
    array = self.numpy()
    return array if dtype is None else array.astype(dtype, copy=False)


def _header(self):
    return f"<anvil.Tensor shape={self.shape}, dtype={self.dtype}, device={self.device!r}>"


def _printable(self):
    return (self.device.device_type == 1 and self.size <= _REPR_MAX_ELEMENTS
            and (self.dtype not in _LOW_PRECISION or _ml_dtypes is not None))


def _repr(self):
    return _header(self) + ("\n" + repr(self.numpy()) if _printable(self) else "")


def _str(self):
    return _header(self) + ("\n" + str(self.numpy()) if _printable(self) else "")


def _len(self):
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


Tensor.numpy = _numpy
Tensor.asnumpy = _numpy  # TVM's old name
Tensor.copyfrom = _copyfrom
Tensor.__array__ = _array
Tensor.__repr__ = _repr
Tensor.__str__ = _str
Tensor.__len__ = _len

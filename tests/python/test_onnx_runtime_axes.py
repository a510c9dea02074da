# Axes known only at run time (frontend/onnx/specialize.h): a graph input gives ReduceX's axes,
# CumSum's axis or Squeeze/Unsqueeze's axes. The model is compiled once, without binding that
# input, and run with every value it may take (negative axes, any order) against numpy in
# float64 on fresh random data; a value the node was not compiled for (a repeated axis, one out of
# range, a dim that is not 1) fails with the node's message instead of picking a branch.
import itertools

import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx as O
except ImportError:
    O = None


def _compile(op, x_shape, axes_shape, axes_dtype=np.int64, opset=18, **attrs):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    h = O.helper
    node = h.make_node(op, ["x", "axes"], ["y"], **attrs)
    g = h.make_graph([node], "t",
                     [h.make_tensor_value_info("x", O.TensorProto.FLOAT, list(x_shape)),
                      h.make_tensor_value_info("axes", h.np_dtype_to_tensor_dtype(np.dtype(axes_dtype)),
                                               list(axes_shape))],
                     [h.make_tensor_value_info("y", O.TensorProto.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    mod = anvil.frontend.from_onnx(m)
    run = anvil.runtime.VirtualMachine(anvil.compile(mod, "llvm"), anvil.cpu())["main"]

    def call(x, axes):
        got = run(x, np.asarray(axes, axes_dtype))
        got = got[0] if isinstance(got, (list, tuple)) else got
        return got.numpy() if hasattr(got, "numpy") else np.asarray(got)

    return call


def _logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


_REDUCE = {
    "ReduceSum": lambda x, a, k: np.sum(x, axis=a, keepdims=k),
    "ReduceMean": lambda x, a, k: np.mean(x, axis=a, keepdims=k),
    "ReduceMax": lambda x, a, k: np.max(x, axis=a, keepdims=k),
    "ReduceL2": lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)),
    "ReduceLogSumExp": _logsumexp,
}


@pytest.mark.parametrize("op", sorted(_REDUCE))
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_over_every_run_time_set_of_axes(op, keepdims, rng):
    shape = (3, 4, 5)
    run = _compile(op, shape, [2], keepdims=keepdims)
    for axes in itertools.permutations(range(-3, 3), 2):
        if axes[0] % 3 == axes[1] % 3:
            continue
        x = rng.standard_normal(shape).astype(np.float32)
        want = _REDUCE[op](x.astype(np.float64), tuple(axes), bool(keepdims))
        got = run(x, axes)
        assert got.shape == want.shape, (axes, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(axes))


@pytest.mark.parametrize("axes", [[1, 1], [0, 3], [-4, 0], [0, -3]])
def test_reduce_with_axes_it_was_not_compiled_for_fails_clearly(axes, rng):
    run = _compile("ReduceSum", (3, 4, 5), [2], keepdims=1)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    with pytest.raises(ValueError, match=r"ReduceSum.*axes known only at run time.*2 distinct axes in \[-3, 3\).*got \["):
        run(x, axes)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_cumsum_over_a_run_time_axis(dtype, rng):
    run = _compile("CumSum", (3, 4, 5), [], axes_dtype=dtype, opset=14, exclusive=0, reverse=0)
    for axis in range(-3, 3):
        x = rng.standard_normal((3, 4, 5)).astype(np.float32)
        np.testing.assert_allclose(run(x, axis), np.cumsum(x.astype(np.float64), axis=axis), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="CumSum.*compiled for"):
        run(rng.standard_normal((3, 4, 5)).astype(np.float32), 3)


def test_unsqueeze_and_squeeze_by_run_time_axes(rng):
    unsqueeze = _compile("Unsqueeze", (3, 4), [2], opset=13)
    for axes in [[0, 1], [0, 3], [1, -1], [-4, 2], [3, 2]]:
        x = rng.standard_normal((3, 4)).astype(np.float32)
        want = np.expand_dims(x, tuple(axes))
        got = unsqueeze(x, axes)
        assert got.shape == want.shape, axes
        np.testing.assert_array_equal(got, want)
    squeeze = _compile("Squeeze", (1, 3, 1, 4), [1], opset=13)
    for axes in [[0], [2], [-2], [-4]]:
        x = rng.standard_normal((1, 3, 1, 4)).astype(np.float32)
        want = np.squeeze(x, tuple(axes))
        got = squeeze(x, axes)
        assert got.shape == want.shape, axes
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match=r"Squeeze.*compiled for \(\[0\], \[2\]\).*got \[1\]"):
        squeeze(rng.standard_normal((1, 3, 1, 4)).astype(np.float32), [1])

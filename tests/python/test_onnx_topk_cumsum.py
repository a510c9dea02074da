# TopK and CumSum end to end (ONNX node -> importer -> the hand-written kernels ops/cpu/topk.h and
# ops/cpu/cumsum.h) against numpy on fresh random data: TopK against a stable argsort (ties by
# lower index, as ONNX says) on integer-valued data full of ties, innermost and non-last axes,
# k = 1, k past 32, k = n, float32/float16/int64, largest and smallest, values and indices
# exactly; CumSum against numpy.cumsum in float64 (exclusive/reverse spelled with flips and
# shifts), inner and outer axes, float32 (rtol 1e-5, atol 1e-5 * length) and int64 (exact).
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx as O
except ImportError:
    O = None


def _run(node, x, initializers, n_out):
    h = O.helper
    g = h.make_graph([node], "t", [h.make_tensor_value_info("x", h.np_dtype_to_tensor_dtype(x.dtype), list(x.shape))],
                     [h.make_tensor_value_info(f"y{i}", 0, None) for i in range(n_out)],
                     initializer=[O.numpy_helper.from_array(v, k) for k, v in initializers.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    exe = anvil.compile(anvil.frontend.from_onnx(m), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x)
    got = got if isinstance(got, (list, tuple)) else [got]
    return [g.numpy() if hasattr(g, "numpy") else np.asarray(g) for g in got]


@pytest.mark.parametrize("shape,axis,k", [((2, 1000), -1, 5), ((3, 4096), 1, 100), ((5, 37), -1, 37),
                                          ((4, 300, 6), 1, 40), ((64, 3), 0, 1), ((8, 2000), -1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
@pytest.mark.parametrize("largest", [1, 0])
def test_topk_matches_a_stable_sort(shape, axis, k, dtype, largest, rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    x = rng.integers(-30, 30, size=shape).astype(dtype)
    node = O.helper.make_node("TopK", ["x", "k"], ["y0", "y1"], axis=axis, largest=largest, sorted=1)
    values, indices = _run(node, x, {"k": np.array([k], np.int64)}, 2)
    order = np.argsort(-x.astype(np.float64) if largest else x, axis=axis, kind="stable")
    want_i = np.take(order, np.arange(k), axis=axis)
    assert indices.dtype == np.int64 and values.dtype == dtype
    np.testing.assert_array_equal(indices, want_i)
    np.testing.assert_array_equal(values, np.take_along_axis(x, want_i, axis=axis))


@pytest.mark.parametrize("shape,axis", [((8, 4096), -1), ((4096, 20), 0), ((6, 333, 19), 1), ((7,), 0)])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_cumsum_matches_numpy(shape, axis, exclusive, reverse, dtype, rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    x = (rng.uniform(-1, 1, size=shape) if dtype == np.float32 else rng.integers(-10**12, 10**12, size=shape)).astype(dtype)
    node = O.helper.make_node("CumSum", ["x", "axis"], ["y0"], exclusive=exclusive, reverse=reverse)
    (got,) = _run(node, x, {"axis": np.array(axis, np.int64)}, 1)
    xd = x.astype(np.float64) if dtype == np.float32 else x
    if reverse:
        xd = np.flip(xd, axis)
    want = np.cumsum(xd, axis=axis)
    if exclusive:
        want = want - xd
    if reverse:
        want = np.flip(want, axis)
    assert got.dtype == dtype
    if dtype == np.int64:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * shape[axis])


def test_topk_with_k_known_only_at_run_time(rng):
    # K a graph input: compiled once, the outputs' axis a run-time Var the kernel reads (k = 0, 1,
    # a middle value and n); k > n fails with the kernel's message.
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    h = O.helper
    for axis, largest in [(-1, 1), (0, 0)]:
        node = h.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)
        g = h.make_graph([node], "t", [h.make_tensor_value_info("x", O.TensorProto.FLOAT, [6, 50]),
                                       h.make_tensor_value_info("k", O.TensorProto.INT64, [1])],
                         [h.make_tensor_value_info("v", 0, None), h.make_tensor_value_info("i", 0, None)])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        m.ir_version = 8
        main = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(m), "llvm"), anvil.cpu())["main"]
        x = rng.integers(-10, 10, size=(6, 50)).astype(np.float32)
        n = x.shape[axis]
        for k in [0, 1, 4, n]:
            values, indices = [t.numpy() for t in main(x, np.array([k], np.int64))]
            order = np.argsort(-x if largest else x, axis=axis, kind="stable")
            want_i = np.take(order, np.arange(k), axis=axis)
            np.testing.assert_array_equal(indices, want_i)
            np.testing.assert_array_equal(values, np.take_along_axis(x, want_i, axis=axis))
        with pytest.raises(ValueError, match=f"topk: k = {n + 1} is larger than the axis length {n}"):
            main(x, np.array([n + 1], np.int64))

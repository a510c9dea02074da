# Reductions the node tests found wanting, end to end against numpy: ReduceMax/ReduceMin of bool
# (any / all, also over an empty axis) and ReduceProd over an empty axis, whose kernel reads no
# input element (the input is still the kernel's parameter).
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx as O
except ImportError:
    O = None


def _run(op, x, axes, keepdims, opset=20):
    h = O.helper
    node = h.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)
    g = h.make_graph([node], "t", [h.make_tensor_value_info("x", h.np_dtype_to_tensor_dtype(x.dtype), list(x.shape))],
                     [h.make_tensor_value_info("y", 0, None)],
                     initializer=[O.numpy_helper.from_array(np.array(axes, np.int64), "axes")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    exe = anvil.compile(anvil.frontend.from_onnx(m), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x)
    got = got[0] if isinstance(got, (list, tuple)) else got
    return got.numpy() if hasattr(got, "numpy") else np.asarray(got)


@pytest.mark.parametrize("op,fn", [("ReduceMax", np.any), ("ReduceMin", np.all)])
@pytest.mark.parametrize("shape,axes", [((4, 5, 3), [1]), ((4, 5, 3), [0, 2]), ((3, 0, 2), [1])])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_bool_max_min_are_any_all(op, fn, shape, axes, keepdims, rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    x = rng.random(shape) < (0.15 if op == "ReduceMax" else 0.85)
    got = _run(op, x, axes, keepdims)
    want = fn(x, axis=tuple(axes), keepdims=bool(keepdims))
    assert got.dtype == np.bool_ and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_prod_over_an_empty_axis_is_one(rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    x = rng.random((2, 0, 4)).astype(np.float32)
    got = _run("ReduceProd", x, [1], 1, opset=18)
    np.testing.assert_array_equal(got, np.ones((2, 1, 4), np.float32))


@pytest.mark.parametrize("op,fn", [("ReduceMean", np.mean), ("ReduceSum", np.sum), ("ReduceMax", np.max),
                                   ("ReduceMin", np.min)])
def test_reduction_to_a_scalar_fuses_its_epilogue(op, fn, rng):
    # sqrt(reduce(x * x over every axis, keepdims=0) + eps) * gain: one kernel (fuse_ops gives a
    # 0-d reduction its prologue and epilogue), against numpy in float64.
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    h = O.helper
    nodes = [h.make_node("Mul", ["x", "x"], ["q"]), h.make_node(op, ["q"], ["r"], keepdims=0),
             h.make_node("Add", ["r", "eps"], ["a"]), h.make_node("Sqrt", ["a"], ["s"]), h.make_node("Mul", ["s", "g"], ["y"])]
    consts = [O.numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("eps", 1e-3), ("g", 0.75))]
    g = h.make_graph(nodes, "t", [h.make_tensor_value_info("x", O.TensorProto.FLOAT, [64, 300])],
                     [h.make_tensor_value_info("y", O.TensorProto.FLOAT, [])], initializer=consts)
    exe = anvil.compile(anvil.frontend.from_onnx(h.make_model(g, opset_imports=[h.make_opsetid("", 18)])), "llvm")
    kernels = [line for line in exe.as_text().splitlines() if "call @" in line and "vm.builtin" not in line]
    assert len(kernels) == 1 and "_sqrt_multiply" in kernels[0], kernels
    x = rng.uniform(-1, 1, (64, 300)).astype(np.float32)
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x).numpy()
    want = np.sqrt(fn(x.astype(np.float64) ** 2) + 1e-3) * 0.75
    assert got.shape == () and abs(float(got) - want) <= 1e-5 * abs(want), (float(got), want)

"""Shape-like operator inputs known only at run time (Reshape's shape, Expand's shape, Tile's
repeats, ConstantOfShape's shape, Trilu's k, OneHot's depth): compiled once, run with several
values, checked against numpy on fresh random data (exact: these ops only move or select values).
"""
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

import anvil


def compile_model(nodes, inputs, opset=14, out_type=TP.FLOAT):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info("y", out_type, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    vm = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), target="llvm"), anvil.cpu())
    return lambda *args: vm["main"](*args).numpy()


def test_reshape_by_run_time_shape():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    f = compile_model([helper.make_node("Reshape", ["x", "s"], ["y"])], [("x", TP.FLOAT, [2, 3, 4]), ("s", TP.INT64, [3])])
    for target, expected in (([4, 0, -1], (4, 3, 2)), ([24, 1, 1], (24, 1, 1)), ([-1, 2, 2], (6, 2, 2))):
        y = f(x, np.array(target, dtype=np.int64))
        assert y.shape == expected
        np.testing.assert_array_equal(y, x.reshape(expected))
    with pytest.raises(ValueError, match=r"reshape_target: x \[2, 3, 4\] \(24 elements\) cannot be reshaped to \[5, 5, 5\]"):
        f(x, np.array([5, 5, 5], dtype=np.int64))


def test_reshape_allowzero_at_run_time():
    x = np.random.default_rng(1).standard_normal((0, 3, 4)).astype("float32")
    f = compile_model([helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)],
                      [("x", TP.FLOAT, [0, 3, 4]), ("s", TP.INT64, [3])])
    assert f(x, np.array([3, 4, 0], dtype=np.int64)).shape == (3, 4, 0)


def test_expand_tile_and_constant_of_shape_at_run_time():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 1)).astype("float32")
    expand = compile_model([helper.make_node("Expand", ["x", "s"], ["y"])], [("x", TP.FLOAT, [3, 1]), ("s", TP.INT64, [3])])
    for s in ([2, 1, 6], [1, 3, 1], [4, 3, 5]):
        np.testing.assert_array_equal(expand(x, np.array(s, dtype=np.int64)), x * np.ones(s, dtype="float32"))
    z = rng.standard_normal((2, 3, 4)).astype("float32")
    tile = compile_model([helper.make_node("Tile", ["x", "r"], ["y"])], [("x", TP.FLOAT, [2, 3, 4]), ("r", TP.INT64, [3])])
    for r in ([1, 2, 3], [2, 1, 1], [1, 0, 1]):
        np.testing.assert_array_equal(tile(z, np.array(r, dtype=np.int64)), np.tile(z, r))
    value = helper.make_tensor("v", TP.FLOAT, [1], [2.5])
    full = compile_model([helper.make_node("ConstantOfShape", ["s"], ["y"], value=value)], [("s", TP.INT64, [2])])
    for s in ([2, 5], [0, 3]):
        np.testing.assert_array_equal(full(np.array(s, dtype=np.int64)), np.full(s, 2.5, dtype="float32"))


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_with_run_time_k(upper):
    x = np.random.default_rng(3).standard_normal((2, 3, 5)).astype("float32")
    f = compile_model([helper.make_node("Trilu", ["x", "k"], ["y"], upper=upper)], [("x", TP.FLOAT, [2, 3, 5]), ("k", TP.INT64, [])])
    for k in (-4, -1, 0, 2, 7):
        expected = np.triu(x, k) if upper else np.tril(x, k)
        np.testing.assert_array_equal(f(x, np.array(k, dtype=np.int64)), expected)


def test_one_hot_with_run_time_depth():
    indices = np.array([[0, 2], [-1, 5]], dtype=np.int64)
    values = np.array([-1.5, 3.0], dtype="float32")
    f = compile_model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=1)],
                      [("i", TP.INT64, [2, 2]), ("d", TP.FLOAT, []), ("v", TP.FLOAT, [2])], opset=11)
    for depth in (3, 6):
        y = f(indices, np.array(depth, dtype="float32"), values)
        wrapped = np.where(indices < 0, indices + depth, indices)
        expected = np.where(np.arange(depth)[None, :, None] == wrapped[:, None, :], values[1], values[0])
        assert y.shape == (2, depth, 2)
        np.testing.assert_array_equal(y, expected)

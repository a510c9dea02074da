# anvil.frontend.from_onnx(..., input_values=...): a graph input bound to a value at import becomes
# a constant (ImportOptions::input_values), so an operator that needs it at import (ReduceSum's
# axes given as an input) converts; the bound input leaves main's parameters; wrong dtypes and
# unknown names are errors naming the input. The conformance runner binds node tests' shape-like
# inputs this way (tests/conformance/bind_inputs.py).
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    onnx = None
require(onnx is not None, "pip package onnx (scripts/setup.sh installs it)")


def reduce_sum_model():
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum", keepdims=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5]),
                                            helper.make_tensor_value_info("axes", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_bound_axes_input_imports_and_runs(make_random):
    model = reduce_sum_model()
    with pytest.raises(NotImplementedError, match="must be known at import"):
        anvil.frontend.from_onnx(model)
    axes = np.array([0, 2], np.int64)
    mod = anvil.frontend.from_onnx(model, input_values={"axes": axes})
    axes[:] = 1  # the module holds a copy
    assert mod.input_names == ["x"]
    x = make_random((3, 4, 5))
    out = anvil.runtime.VirtualMachine(anvil.compile(mod), anvil.cpu())["main"](x).numpy()
    np.testing.assert_allclose(out, x.sum(axis=(0, 2)), rtol=1e-5, atol=1e-5)


def test_bad_input_values_name_the_input():
    model = reduce_sum_model()
    with pytest.raises(ValueError, match="'axes'.*int32"):
        anvil.frontend.from_onnx(model, input_values={"axes": np.array([0, 2], np.int32)})
    with pytest.raises(ValueError, match="'nope'"):
        anvil.frontend.from_onnx(model, input_values={"nope": np.array([0], np.int64)})
    with pytest.raises(TypeError, match="input_values"):
        anvil.frontend.from_onnx(model, input_values=[1, 2])


def test_bound_zero_d_input_keeps_its_rank():
    """Trilu's k is a 0-d input: bound, it stays 0-d (np.ascontiguousarray would make it [1])."""
    node = helper.make_node("Trilu", ["x", "k"], ["y"], name="tril", upper=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 5]),
                                            helper.make_tensor_value_info("k", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    mod = anvil.frontend.from_onnx(model, input_values={"k": np.array(-1, np.int64)})
    x = np.random.default_rng(7).standard_normal((4, 5)).astype(np.float32)  # seed 7
    out = anvil.runtime.VirtualMachine(anvil.compile(mod), anvil.cpu())["main"](x).numpy()
    np.testing.assert_array_equal(out, np.tril(x, -1))

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
    axes = np.array([0, 2], np.int64)
    mod = anvil.frontend.from_onnx(model, input_values={"axes": axes})
    axes[:] = 1  # the module holds a copy
    assert mod.input_names == ["x"]
    x = make_random((3, 4, 5))
    out = anvil.runtime.VirtualMachine(anvil.compile(mod), anvil.cpu())["main"](x).numpy()
    np.testing.assert_allclose(out, x.sum(axis=(0, 2)), rtol=1e-5, atol=1e-5)
    # Unbound, the axes stay a run-time input (the node is compiled once per possible axes set).
    free = anvil.frontend.from_onnx(model)
    assert free.input_names == ["x", "axes"]
    out = anvil.runtime.VirtualMachine(anvil.compile(free), anvil.cpu())["main"](x, np.array([2, 0], np.int64)).numpy()
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


def _import_time_input():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
    from bind_inputs import import_time_input

    return import_time_input


def test_runner_binds_named_float_inputs_and_the_sources_of_computed_values():
    """The conformance runner's choice: Resize's float scales (named by the converter's words),
    and for a Range limit computed as Cast(size), the integer graph input `size`."""
    import_time_input = _import_time_input()
    resize = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")
    g = helper.make_graph([resize], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
                                          helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    # The runner reads the importer's message (as an import that needs the value words it; the
    # message is spelled here, so the test holds whatever the importer supports at run time).
    message = "onnx: node 0 (Resize, opset 19): Resize with scales or sizes not known at import"
    assert import_time_input(m, message, ["x", "scales"], set()) == "scales"
    scales = np.array([1, 1, 2, 3], np.float32)
    mod = anvil.frontend.from_onnx(m, input_values={"scales": scales})
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    out = anvil.runtime.VirtualMachine(anvil.compile(mod), anvil.cpu())["main"](x).numpy()
    np.testing.assert_array_equal(out, x.repeat(2, axis=2).repeat(3, axis=3))

    nodes = [helper.make_node("Cast", ["size"], ["n"], to=TensorProto.FLOAT),
             helper.make_node("Range", ["zero", "n", "one"], ["r"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("size", TensorProto.INT32, [])],
                          [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)],
                          [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
                           helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    message = "onnx: node 1 (Range, opset 17): Range with a limit not known at import"
    assert import_time_input(m, message, ["size"], set()) == "size"
    mod = anvil.frontend.from_onnx(m, input_values={"size": np.array(5, np.int32)})
    out = anvil.runtime.VirtualMachine(anvil.compile(mod), anvil.cpu())["main"]().numpy()
    np.testing.assert_array_equal(out, np.arange(5, dtype=np.float32))

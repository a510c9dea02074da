# ONNX If and Loop as control flow in the VM: models built with onnx.helper, imported by
# anvil.frontend.from_onnx, compiled for llvm and compared with ONNX Runtime on random inputs
# (seed SEED). Nested Ifs on a 0-d input take every way of every branch (one input per leaf);
# a Loop's trip count and its condition depend on the data.
import numpy as np
import pytest

import anvil
from conftest import SEED, require

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    onnx = None
require(onnx is not None, "pip package onnx (scripts/setup.sh installs it)")
try:
    import onnxruntime
except ImportError:
    onnxruntime = None
require(onnxruntime is not None, "pip package onnxruntime")

FLOAT = TensorProto.FLOAT


def _run_both(model, feeds):
    onnx.checker.check_model(model)
    exe = anvil.compile(anvil.frontend.from_onnx(model))
    out = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*feeds.values())
    got = [o.numpy() for o in out] if isinstance(out, (list, tuple)) else [out.numpy()]
    sess = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return got, sess.run(None, feeds)


def _const(name, value, dtype=np.float32):
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(np.array(value, dtype=dtype)))


_counter = [0]


def _fresh(prefix):
    _counter[0] += 1
    return f"{prefix}{_counter[0]}"


def _branches(depth, low, high, out):
    """A subgraph computing `out` from the outer x, r and t: below depth 0 a leaf, else an If on
    t > (low + high) / 2 whose branches split the interval again."""
    if depth == 0:
        k = _fresh("leaf")
        # Each leaf its own function of the outer values (x a graph input, r computed outside).
        scale = _fresh("s")
        nodes = [_const(scale, float(len(k)) * 0.25 + low), helper.make_node("Mul", ["x", scale], [k + "_m"]),
                 helper.make_node("Add", [k + "_m", "r"], [k + "_a"]), helper.make_node("Add", [k + "_a", "t"], [out])]
        return nodes
    mid = (low + high) / 2
    thr, cond = _fresh("thr"), _fresh("cond")
    then_out, else_out = _fresh("then"), _fresh("else")
    then_g = helper.make_graph(_branches(depth - 1, mid, high, then_out), _fresh("g"), [],
                               [helper.make_tensor_value_info(then_out, FLOAT, None)])
    else_g = helper.make_graph(_branches(depth - 1, low, mid, else_out), _fresh("g"), [],
                               [helper.make_tensor_value_info(else_out, FLOAT, None)])
    return [_const(thr, mid), helper.make_node("Greater", ["t", thr], [cond]),
            helper.make_node("If", [cond], [out], then_branch=then_g, else_branch=else_g)]


def _nested_if_model(depth):
    nodes = [helper.make_node("Relu", ["x"], ["r"])] + _branches(depth, -4.0, 4.0, "y")
    graph = helper.make_graph(nodes, "nested_if", [helper.make_tensor_value_info("x", FLOAT, [3, 4]),
                                                   helper.make_tensor_value_info("t", FLOAT, [])],
                              [helper.make_tensor_value_info("y", FLOAT, [3, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_nested_ifs_on_a_0d_input_take_every_branch():
    depth = 4  # 15 Ifs, 16 leaves
    model = _nested_if_model(depth)
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    exe = anvil.compile(anvil.frontend.from_onnx(model))
    vm = anvil.runtime.VirtualMachine(exe, anvil.cpu())
    sess = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    width = 8.0 / 2 ** depth
    results = set()
    for leaf in range(2 ** depth):  # one t inside each leaf's interval of (-4, 4)
        t = np.array(-4.0 + width * (leaf + rng.uniform(0.1, 0.9)), dtype=np.float32)
        got = vm["main"](x, t).numpy()
        want = sess.run(None, {"x": x, "t": t})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        results.add(round(float((want - t - np.maximum(x, 0)).sum()), 3))
    assert len(results) == 2 ** depth  # every leaf gave its own result


def test_if_with_several_outputs_and_an_outer_computed_value():
    then_g = helper.make_graph([helper.make_node("Add", ["r", "x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])],
                               "then", [], [helper.make_tensor_value_info("a", FLOAT, None),
                                            helper.make_tensor_value_info("b", FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Sub", ["r", "x"], ["c"]), helper.make_node("Identity", ["r"], ["d"])],
                               "else", [], [helper.make_tensor_value_info("c", FLOAT, None),
                                            helper.make_tensor_value_info("d", FLOAT, None)])
    nodes = [helper.make_node("Exp", ["x"], ["r"]), helper.make_node("If", ["flag"], ["p", "q"], then_branch=then_g,
                                                                     else_branch=else_g),
             helper.make_node("Mul", ["p", "q"], ["y"])]
    graph = helper.make_graph(nodes, "if2", [helper.make_tensor_value_info("x", FLOAT, [2, 5]),
                                             helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", FLOAT, [2, 5]),
                               helper.make_tensor_value_info("q", FLOAT, [2, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.random.default_rng(SEED).standard_normal((2, 5)).astype(np.float32)
    for flag in (True, False):
        got, want = _run_both(model, {"x": x, "flag": np.array(flag)})
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _loop_model():
    # y = y * 0.5 + x + iteration while sum(y) < limit, at most M times; scan: y after each step.
    body_nodes = [_const("half", 0.5), helper.make_node("Mul", ["y_in", "half"], ["h"]),
                  helper.make_node("Add", ["h", "x"], ["hx"]), helper.make_node("Cast", ["i"], ["fi"], to=FLOAT),
                  helper.make_node("Add", ["hx", "fi"], ["y_out"]),
                  helper.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0),
                  helper.make_node("Less", ["s", "limit"], ["c_out"]),
                  helper.make_node("Identity", ["y_out"], ["scan"])]
    body = helper.make_graph(body_nodes, "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                                                  helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                                                  helper.make_tensor_value_info("y_in", FLOAT, [3])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("y_out", FLOAT, [3]),
                              helper.make_tensor_value_info("scan", FLOAT, [3])])
    # The scan output feeds a kernel: its length (the iteration count) is bound after the loop.
    nodes = [helper.make_node("Loop", ["M", "cond", "y0"], ["y", "ys"], body=body), _const("two", 2.0),
             helper.make_node("Mul", ["ys", "two"], ["z"])]
    graph = helper.make_graph(nodes, "loop", [helper.make_tensor_value_info("M", TensorProto.INT64, []),
                                              helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                                              helper.make_tensor_value_info("y0", FLOAT, [3]),
                                              helper.make_tensor_value_info("x", FLOAT, [3]),
                                              helper.make_tensor_value_info("limit", FLOAT, [])],
                              [helper.make_tensor_value_info("y", FLOAT, [3]),
                               helper.make_tensor_value_info("ys", FLOAT, [None, 3]),
                               helper.make_tensor_value_info("z", FLOAT, [None, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("trips,cond,limit", [(0, True, 100.0), (1, True, 100.0), (7, True, 1e9), (50, True, 25.0),
                                              (5, False, 100.0)])
def test_loop_with_a_data_dependent_trip_count(trips, cond, limit):
    rng = np.random.default_rng(SEED)
    feeds = {"M": np.array(trips, dtype=np.int64), "cond": np.array(cond),
             "y0": rng.standard_normal(3).astype(np.float32), "x": rng.uniform(0.5, 1.5, 3).astype(np.float32),
             "limit": np.array(limit, dtype=np.float32)}
    got, want = _run_both(_loop_model(), feeds)
    assert got[1].shape == want[1].shape and got[2].shape == want[2].shape
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_if_whose_branches_give_different_shapes_feeds_a_kernel():
    # then: (6, 4) = Concat(x, x); else: (3, 4) = x + 1. The if's first dim is bound when it ran.
    then_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["a"], axis=0)], "then", [],
                               [helper.make_tensor_value_info("a", FLOAT, None)])
    else_g = helper.make_graph([_const("one", 1.0), helper.make_node("Add", ["x", "one"], ["b"])], "else", [],
                               [helper.make_tensor_value_info("b", FLOAT, None)])
    nodes = [helper.make_node("If", ["flag"], ["p"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Sigmoid", ["p"], ["s"]), helper.make_node("ReduceSum", ["s"], ["y"], keepdims=0)]
    graph = helper.make_graph(nodes, "if_shapes", [helper.make_tensor_value_info("x", FLOAT, [3, 4]),
                                                   helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("s", FLOAT, [None, 4]),
                               helper.make_tensor_value_info("y", FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.random.default_rng(SEED).standard_normal((3, 4)).astype(np.float32)
    for flag in (True, False):
        got, want = _run_both(model, {"x": x, "flag": np.array(flag)})
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _if_in_loop_model(with_trip_count):
    # Each iteration adds w (read from the main graph two scopes out) on even iterations and
    # subtracts it on odd ones; without M the loop stops on the body's condition (i < stop).
    then_g = helper.make_graph([helper.make_node("Add", ["acc_in", "w"], ["t"])], "even", [],
                               [helper.make_tensor_value_info("t", FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Sub", ["acc_in", "w"], ["e"])], "odd", [],
                               [helper.make_tensor_value_info("e", FLOAT, None)])
    body_nodes = [_const("two_i", 2, np.int64), _const("zero_i", 0, np.int64),
                  helper.make_node("Mod", ["i", "two_i"], ["m"]), helper.make_node("Equal", ["m", "zero_i"], ["even"]),
                  helper.make_node("If", ["even"], ["acc_out"], then_branch=then_g, else_branch=else_g),
                  _const("one_i", 1, np.int64), helper.make_node("Add", ["i", "one_i"], ["next"]),
                  helper.make_node("Less", ["next", "stop"], ["c_out"])]
    body = helper.make_graph(body_nodes, "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                                                  helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                                                  helper.make_tensor_value_info("acc_in", FLOAT, [2, 2])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("acc_out", FLOAT, [2, 2])])
    inputs = ["M" if with_trip_count else "", "" if with_trip_count else "cond", "acc0"]
    nodes = [helper.make_node("Exp", ["x"], ["w"]), helper.make_node("Loop", inputs, ["acc"], body=body)]
    graph_inputs = [helper.make_tensor_value_info("x", FLOAT, [2, 2]), helper.make_tensor_value_info("acc0", FLOAT, [2, 2]),
                    helper.make_tensor_value_info("stop", TensorProto.INT64, [])]
    graph_inputs.append(helper.make_tensor_value_info("M", TensorProto.INT64, []) if with_trip_count
                        else helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    graph = helper.make_graph(nodes, "if_in_loop", graph_inputs, [helper.make_tensor_value_info("acc", FLOAT, [2, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("with_trip_count,limit,stop", [(True, 3, 100), (True, 6, 4), (False, None, 5), (False, None, 0)])
def test_if_inside_a_loop_reads_a_value_two_scopes_out(with_trip_count, limit, stop):
    rng = np.random.default_rng(SEED)
    feeds = {"x": rng.standard_normal((2, 2)).astype(np.float32), "acc0": rng.standard_normal((2, 2)).astype(np.float32),
             "stop": np.array(stop, dtype=np.int64)}
    if with_trip_count:
        feeds["M"] = np.array(limit, dtype=np.int64)
    else:
        feeds["cond"] = np.array(True)
    got, want = _run_both(_if_in_loop_model(with_trip_count), feeds)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)

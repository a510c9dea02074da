"""Split sizes, Pad amounts (and axes) and Range's start/limit/delta known only at run time:
each model is compiled once (no input bound) and run with several values on fresh random data,
checked against numpy (exact where values are only moved; Range's float32 values against the
float64 formula start + i * delta with rtol 1e-6, atol 1e-5), and a bad value raises a
ValueError naming what was wrong.
"""
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

import anvil


def compile_model(nodes, inputs, outputs, opset=18):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    vm = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), target="llvm"), anvil.cpu())

    def run(*args):
        out = vm["main"](*args)
        return [o.numpy() for o in out] if isinstance(out, (list, tuple)) else [out.numpy()]
    return run


@pytest.mark.parametrize("axis", [0, -1])
def test_split_by_run_time_sizes(axis):
    rng = np.random.default_rng(10)
    f = compile_model([helper.make_node("Split", ["x", "s"], ["a", "b", "c"], axis=axis)],
                      [("x", TP.FLOAT, [6, 6]), ("s", TP.INT64, [3])], [("a", TP.FLOAT), ("b", TP.FLOAT), ("c", TP.FLOAT)])
    for sizes in ([1, 2, 3], [0, 6, 0], [6, 0, 0], [3, 3, 0], [2, 2, 2]):
        x = rng.standard_normal((6, 6)).astype("float32")
        got = f(x, np.array(sizes, dtype=np.int64))
        expected = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
        assert [g.shape for g in got] == [e.shape for e in expected]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)
    x = rng.standard_normal((6, 6)).astype("float32")
    for bad in ([2, 2, 3], [-1, 4, 3]):
        with pytest.raises(ValueError, match=r"split sizes must be non-negative and sum to axis [01]'s dim 6"):
            f(x, np.array(bad, dtype=np.int64))


def reference_pad(x, begins, ends, mode, value=0.0):
    """numpy: crop by the negative amounts, then np.pad by the positive ones (float64 not needed: exact)."""
    crop = tuple(slice(max(-b, 0), x.shape[k] - max(-e, 0)) for k, (b, e) in enumerate(zip(begins, ends)))
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends)]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x[crop], widths, mode={"edge": "edge", "reflect": "reflect", "wrap": "wrap", "constant": "constant"}[mode], **kw)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_by_run_time_amounts(mode):
    rng = np.random.default_rng(11)
    inputs = [("x", TP.FLOAT, ["a", "b", "c"]), ("p", TP.INT64, [6])]  # symbolic dims: an empty axis below
    node_inputs = ["x", "p"]
    if mode == "constant":
        inputs.append(("v", TP.FLOAT, []))
        node_inputs.append("v")
    f = compile_model([helper.make_node("Pad", node_inputs, ["y"], mode=mode)], inputs, [("y", TP.FLOAT)])
    for _ in range(5):
        x = rng.standard_normal((3, 4, 5)).astype("float32")
        low = -2 if mode == "constant" else 0  # cropping needs constant mode
        pads = [int(rng.integers(low, d)) for d in (3, 4, 5) for _ in range(1)] + \
               [int(rng.integers(low, d)) for d in (3, 4, 5)]
        args = [x, np.array(pads, dtype=np.int64)]
        value = float(rng.standard_normal())
        if mode == "constant":
            args.append(np.array(value, dtype="float32"))
        y = f(*args)[0]
        np.testing.assert_array_equal(y, reference_pad(x, pads[:3], pads[3:], mode, np.float32(value)))
    x = rng.standard_normal((3, 4, 5)).astype("float32")
    bad = [0, 0, -4, 0, 0, -2] if mode == "constant" else [0, 0, 5 if mode == "reflect" else -1, 0, 0, 0]
    args = [x, np.array(bad, dtype=np.int64)] + ([np.array(0, dtype="float32")] if mode == "constant" else [])
    with pytest.raises(ValueError, match=r"Pad.*(dim \+ begin \+ end must be >= 0|pads by amounts >= 0)"):
        f(*args)
    if mode != "constant":  # an empty axis: not padded is fine, padded is an error (nothing to repeat)
        empty = np.zeros((3, 0, 5), dtype="float32")
        assert f(empty, np.array([1, 0, 0, 0, 0, 2], dtype=np.int64))[0].shape == (4, 0, 7)
        with pytest.raises(ValueError, match=r"an empty axis not at all"):
            f(empty, np.array([0, 1, 0, 0, 0, 0], dtype=np.int64))


def test_pad_by_run_time_axes():
    rng = np.random.default_rng(12)
    f = compile_model([helper.make_node("Pad", ["x", "p", "", "a"], ["y"], mode="constant")],
                      [("x", TP.FLOAT, [3, 4, 5]), ("p", TP.INT64, [4]), ("a", TP.INT64, [2])], [("y", TP.FLOAT)])
    for axes, pads in (([0, 2], [1, -2, 0, 3]), ([-1, 1], [2, 0, -1, 1]), ([1, -3], [0, 0, 3, 1])):
        x = rng.standard_normal((3, 4, 5)).astype("float32")
        begins, ends = [0, 0, 0], [0, 0, 0]
        for i, a in enumerate(axes):
            begins[a % 3], ends[a % 3] = pads[i], pads[i + 2]
        y = f(x, np.array(pads, dtype=np.int64), np.array(axes, dtype=np.int64))[0]
        np.testing.assert_array_equal(y, reference_pad(x, begins, ends, "constant"))
    x = rng.standard_normal((3, 4, 5)).astype("float32")
    for axes in ([0, -3], [0, 3]):  # an axis twice, an axis out of range
        with pytest.raises(ValueError, match=r"axes must be distinct and within \[-rank, rank\)"):
            f(x, np.array([1, 1, 1, 1], dtype=np.int64), np.array(axes, dtype=np.int64))


@pytest.mark.parametrize("dtype,tp", [("float32", TP.FLOAT), ("int32", TP.INT32), ("int64", TP.INT64)])
def test_range_of_run_time_values(dtype, tp):
    rng = np.random.default_rng(13)
    f = compile_model([helper.make_node("Range", ["s", "l", "d"], ["y"])], [("s", tp, []), ("l", tp, []), ("d", tp, [])],
                      [("y", tp)], opset=11)
    for _ in range(6):
        if dtype == "float32":
            s, l, d = (np.float32(v) for v in (rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(0.3, 2) * rng.choice([-1, 1])))
        else:
            s, l, d = int(rng.integers(-20, 20)), int(rng.integers(-20, 20)), int(rng.integers(1, 5)) * int(rng.choice([-1, 1]))
        n = max(int(np.ceil((np.float64(l) - np.float64(s)) / np.float64(d))), 0)
        y = f(*(np.array(v, dtype=dtype) for v in (s, l, d)))[0]
        assert y.shape == (n,) and y.dtype == np.dtype(dtype)
        expected = np.float64(s) + np.arange(n, dtype=np.float64) * np.float64(d)
        if dtype == "float32":
            np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-5)
        else:
            np.testing.assert_array_equal(y, expected.astype(dtype))
    with pytest.raises(ValueError, match=r"range_length: Range\(start 1, limit 5, delta 0\) has no length"):
        f(*(np.array(v, dtype=dtype) for v in (1, 5, 0)))


def test_hann_window_of_run_time_size():
    """The window functions' expanded bodies: a float Range(0, size, 1) of a run-time size, then
    0.5 - 0.5 cos(2 pi r / size); checked against float64 numpy (rtol 1e-5, atol 1e-6)."""
    c = lambda name, v: helper.make_node("Constant", [], [name], value=helper.make_tensor(name, TP.FLOAT, [], [v]))
    nodes = [helper.make_node("Cast", ["n"], ["nf"], to=TP.FLOAT), c("zero", 0.0), c("one", 1.0), c("half", 0.5),
             c("tau", 2 * np.pi), helper.make_node("Range", ["zero", "nf", "one"], ["r"]),
             helper.make_node("Mul", ["r", "tau"], ["t"]), helper.make_node("Div", ["t", "nf"], ["u"]),
             helper.make_node("Cos", ["u"], ["cu"]), helper.make_node("Mul", ["cu", "half"], ["h"]),
             helper.make_node("Sub", ["half", "h"], ["y"])]
    f = compile_model(nodes, [("n", TP.INT64, [])], [("y", TP.FLOAT)], opset=17)
    for n in (1, 7, 10, 64):
        y = f(np.array(n, dtype=np.int64))[0]
        expected = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n, dtype=np.float64) / n)
        assert y.shape == (n,)
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)

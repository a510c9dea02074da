# ONNX ops whose output shape depends on tensor values, run by the VM: NonZero of a run-time
# value and Slice by run-time starts/ends/steps (graph ops nonzero / dynamic_slice; the VM's
# builtins compute them and bind their fresh dims, so kernels after them size by those dims).
# Models built with onnx.helper on symbolic input shapes, compiled once, run on random inputs
# (seed SEED) of several shapes and compared with numpy.
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


def _compile(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model)), anvil.cpu())["main"]

    def run(*feeds):
        out = fn(*[anvil.tensor(np.ascontiguousarray(f)) for f in feeds])
        return [o.numpy() for o in out] if isinstance(out, (list, tuple)) else [out.numpy()]

    return run


def _with_zeros(rng, shape, fraction, dtype):
    x = rng.standard_normal(shape).astype(dtype) if dtype == np.float32 else rng.integers(1, 9, shape).astype(dtype)
    x[rng.random(shape) < fraction] = 0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_nonzero_matches_numpy_on_a_symbolic_shape(dtype):
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.INT32
    # NonZero, then kernels on its [2, n] result (n bound at run time): Cast and Mul.
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Cast", ["nz"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["f", "two"], ["y"])]
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, ["N", "M"])],
                              [helper.make_tensor_value_info("nz", TensorProto.INT64, [2, None]),
                               helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, None])], [two])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model)), anvil.cpu())["main"]
    rng = np.random.default_rng(SEED)
    for shape in [(3, 5), (1, 1), (7, 2), (0, 4), (16, 33)]:
        for fraction in [0.0, 0.3, 0.9, 1.0]:
            x = _with_zeros(rng, shape, fraction, dtype)
            nz, y = (o.numpy() for o in fn(anvil.tensor(x)))
            want = np.array(np.nonzero(x), dtype=np.int64)
            assert nz.dtype == np.int64 and nz.shape == want.shape, (shape, fraction)
            np.testing.assert_array_equal(nz, want)
            np.testing.assert_array_equal(y, want.astype(np.float32) * 2)


def test_nonzero_of_three_dims_and_negative_zero():
    run = _compile([helper.make_node("NonZero", ["x"], ["y"])],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["A", 3, "B"])],
                   [helper.make_tensor_value_info("y", TensorProto.INT64, [3, None])])
    rng = np.random.default_rng(SEED + 1)
    x = _with_zeros(rng, (4, 3, 5), 0.5, np.float32)
    x[0, 0, :] = -0.0  # zero, though its sign bit is set
    x[1, 1, 1] = np.nan  # not zero
    (got,) = run(x)
    np.testing.assert_array_equal(got, np.array(np.nonzero(x), dtype=np.int64))


def _numpy_slice(x, starts, ends, axes, steps):
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[a] = slice(int(s), int(e), int(st))
    return x[tuple(index)]


def _spec_slice(x, starts, ends, axes, steps):
    """Slice as the ONNX operator text says (and onnxruntime does): negatives + dim, then starts
    clamped to [0, d] ([0, d - 1] stepping back), ends to [0, d] ([-1, d - 1]). numpy differs in
    one case: stepping back from a start still negative after + dim, numpy gives nothing where
    the clamp to 0 gives element 0."""
    for s, e, a, st in zip(starts, ends, axes, steps):
        d = x.shape[a]
        s, e, st = int(s), int(e), int(st)
        s, e = s + d if s < 0 else s, e + d if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), d), min(max(e, 0), d)
        else:
            s, e = min(max(s, 0), d - 1), min(max(e, -1), d - 1)
        x = np.take(x, np.arange(s, e, st, dtype=np.int64), axis=a)
    return x


@pytest.mark.parametrize("with_steps,runtime_axes", [(False, False), (True, False), (True, True)])
def test_slice_by_run_time_starts_and_ends_matches_numpy(with_steps, runtime_axes):
    # Starts/ends (and steps, axes) are graph inputs: known only at run time; else axes (1, -1)
    # constant. The slice then feeds a kernel (Add) that sizes by the bound extents.
    inputs = ["x", "starts", "ends", "axes"] + (["steps"] if with_steps else [])
    nodes = [helper.make_node("Slice", inputs, ["s"]), helper.make_node("Add", ["s", "one"], ["y"])]
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "C", "W"]),
          helper.make_tensor_value_info("starts", TensorProto.INT64, [2]),
          helper.make_tensor_value_info("ends", TensorProto.INT64, [2])]
    if with_steps:
        vi.append(helper.make_tensor_value_info("steps", TensorProto.INT64, [2]))
    inits = [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])]
    if runtime_axes:
        vi.append(helper.make_tensor_value_info("axes", TensorProto.INT64, [2]))
    else:
        inits.append(helper.make_tensor("axes", TensorProto.INT64, [2], [1, -1]))
    graph = helper.make_graph(nodes, "g", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None, None])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model)), anvil.cpu())["main"]
    rng = np.random.default_rng(SEED + 2)
    big = np.iinfo(np.int64)
    for trial in range(40):
        shape = tuple(int(d) for d in rng.integers(1, 9, 3))
        x = rng.standard_normal(shape).astype(np.float32)
        axes = [[1, 2], [2, 0], [-1, -3], [0, 1]][trial % 4] if runtime_axes else [1, 2]
        dims = [shape[a] for a in axes]
        starts = np.array([rng.integers(-2 * d - 1, 2 * d + 2) for d in dims], dtype=np.int64)
        ends = np.array([rng.integers(-2 * d - 1, 2 * d + 2) for d in dims], dtype=np.int64)
        if trial % 7 == 0:
            ends[0] = big.max if trial % 2 == 0 else big.min  # "to the end", either way
        steps = np.array([rng.choice([-3, -2, -1, 1, 2, 3]) for _ in dims], dtype=np.int64) if with_steps else \
            np.ones(2, np.int64)
        feeds = [x, starts, ends] + ([steps] if with_steps else []) + ([np.array(axes, np.int64)] if runtime_axes else [])
        got = fn(*[anvil.tensor(f) for f in feeds]).numpy()
        want = _spec_slice(x, starts, ends, axes, steps) + 1
        assert got.shape == want.shape, (shape, starts, ends, axes, steps)
        np.testing.assert_array_equal(got, want)
        if all(st > 0 or s >= -d for s, st, d in zip(starts, steps, dims)):
            np.testing.assert_array_equal(got, _numpy_slice(x, starts, ends, axes, steps) + 1)


def test_slice_by_int32_starts_computed_in_the_graph():
    # starts = ends - k with ends a run-time int32 value; one axis, default axes and steps.
    nodes = [helper.make_node("Sub", ["ends", "k"], ["starts"]), helper.make_node("Slice", ["x", "starts", "ends"], ["y"])]
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
          helper.make_tensor_value_info("ends", TensorProto.INT32, [1])]
    graph = helper.make_graph(nodes, "g", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])],
                              [helper.make_tensor("k", TensorProto.INT32, [1], [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model)), anvil.cpu())["main"]
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    for e in [-20, -1, 0, 2, 5, 10, 30]:
        got = fn(anvil.tensor(x), anvil.tensor(np.array([e], np.int32))).numpy()
        np.testing.assert_array_equal(got, x[e - 3:e])


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_compress_matches_numpy(axis):
    # Compress = take of nonzero(condition)'s indices; the condition a run-time bool vector,
    # shorter than the axis on some runs (numpy.compress drops the rest), all false on others.
    kw = {} if axis is None else {"axis": axis}
    nodes = [helper.make_node("Compress", ["x", "c"], ["y"], **kw)]
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "M"]),
          helper.make_tensor_value_info("c", TensorProto.BOOL, ["L"])]
    graph = helper.make_graph(nodes, "g", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model)), anvil.cpu())["main"]
    rng = np.random.default_rng(SEED + 3)
    for trial in range(12):
        shape = tuple(int(d) for d in rng.integers(1, 7, 2))
        x = rng.standard_normal(shape).astype(np.float32)
        full = x.size if axis is None else shape[axis]
        length = int(rng.integers(1, full + 1))
        c = rng.random(length) < [0.0, 0.5, 1.0][trial % 3]
        got = fn(anvil.tensor(x), anvil.tensor(c)).numpy()
        want = np.compress(c, x, axis=axis)
        assert got.shape == want.shape, (shape, c, axis)
        np.testing.assert_array_equal(got, want)


def test_loop_carried_value_grown_by_run_time_slices_and_a_nested_if():
    # Each iteration appends x[i:i+1] (once when i is even, twice when odd, through an If in the
    # body that reads the carried value): the carried length changes per iteration, so it is a
    # symbolic dim bound per body call and from the loop's result; against onnxruntime.
    onnxruntime = pytest.importorskip("onnxruntime")
    INT64, FLOAT, BOOL = TensorProto.INT64, TensorProto.FLOAT, TensorProto.BOOL
    then_g = helper.make_graph([helper.make_node("Concat", ["y_in", "s"], ["t_out"], axis=0)], "then", [],
                               [helper.make_tensor_value_info("t_out", FLOAT, [None])])
    else_g = helper.make_graph([helper.make_node("Concat", ["y_in", "s", "s"], ["e_out"], axis=0)], "else", [],
                               [helper.make_tensor_value_info("e_out", FLOAT, [None])])
    body_nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Add", ["i", "one"], ["end"]),
        helper.make_node("Unsqueeze", ["i", "zero"], ["st"]),
        helper.make_node("Unsqueeze", ["end", "zero"], ["en"]),
        helper.make_node("Slice", ["x", "st", "en"], ["s"]),
        helper.make_node("Mod", ["i", "two"], ["odd_i"]),
        helper.make_node("Equal", ["odd_i", "zero_s"], ["even"]),
        helper.make_node("If", ["even"], ["y_out"], then_branch=then_g, else_branch=else_g),
    ]
    body = helper.make_graph(
        body_nodes, "body",
        [helper.make_tensor_value_info("i", INT64, []), helper.make_tensor_value_info("cond_in", BOOL, []),
         helper.make_tensor_value_info("y_in", FLOAT, [None])],
        [helper.make_tensor_value_info("cond_out", BOOL, []), helper.make_tensor_value_info("y_out", FLOAT, [None])],
        [helper.make_tensor("one", INT64, [], [1]), helper.make_tensor("zero", INT64, [1], [0]),
         helper.make_tensor("two", INT64, [], [2]), helper.make_tensor("zero_s", INT64, [], [0])])
    loop = helper.make_node("Loop", ["M", "c", "y0"], ["y"], body=body)
    graph = helper.make_graph(
        [loop], "g",
        [helper.make_tensor_value_info("M", INT64, []), helper.make_tensor_value_info("c", BOOL, []),
         helper.make_tensor_value_info("y0", FLOAT, [1]), helper.make_tensor_value_info("x", FLOAT, [6])],
        [helper.make_tensor_value_info("y", FLOAT, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model)), anvil.cpu())["main"]
    sess = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(SEED + 4).standard_normal(6).astype(np.float32)
    for m in range(6):
        feeds = {"M": np.array(m, np.int64), "c": np.array(True), "y0": np.array([7.0], np.float32), "x": x}
        got = fn(*[anvil.tensor(v) for v in feeds.values()]).numpy()
        (want,) = sess.run(None, feeds)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("is_sorted", [1, 0])
def test_unique_matches_numpy(axis, is_sorted):
    # All four outputs on a symbolic [N, M] int32 input with many repeats; unsorted = numpy's
    # sorted result reordered by first occurrence.
    kw = {"sorted": is_sorted} if axis is None else {"sorted": is_sorted, "axis": axis}
    node = helper.make_node("Unique", ["x"], ["y", "idx", "inv", "cnt"], **kw)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT32, ["N", "M"])],
                              [helper.make_tensor_value_info(o, TensorProto.INT64 if o != "y" else TensorProto.INT32, None)
                               for o in ["y", "idx", "inv", "cnt"]])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    fn = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model)), anvil.cpu())["main"]
    rng = np.random.default_rng(SEED + 5)
    for trial in range(8):
        shape = tuple(int(d) for d in rng.integers(1, 7, 2))
        x = rng.integers(0, 1 + trial % 3, shape).astype(np.int32)  # values 0..k: many repeats
        got = [o.numpy() for o in fn(anvil.tensor(x))]
        y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
        inv = inv.reshape(-1)
        if not is_sorted:
            order = np.argsort(idx, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            y = np.take(y, order, axis=0 if axis is None else axis)
            idx, cnt, inv = idx[order], cnt[order], rank[inv]
        for g, w in zip(got, [y, idx, inv, cnt]):
            assert g.shape == w.shape, (shape, axis, g.shape, w.shape)
            np.testing.assert_array_equal(g, w)

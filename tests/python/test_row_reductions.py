# Row reductions over the last axis (norm.cc reduce_over: softmax, log_softmax, layer_norm,
# rms_norm; group_norm's own split) at lengths that are and are not a multiple of the 16-lane
# vector, static and symbolic: the lane partials cover the full vectors, a scalar tail the rest.
# ONNX models imported by anvil.frontend.from_onnx, compiled for llvm, run on the VM and
# compared with numpy in float64 on fresh random inputs (seed SEED): float32 rtol 1e-5 (atol
# 1e-7 for softmax's probabilities, 1e-5 for the others' values near 0), float16 to its last
# bits. One compiled symbolic model is run at several lengths. The generated code is checked
# to vectorise the reductions and the output pass at a symbolic length (TIR after storage_flatten).
import numpy as np
import pytest

import anvil
from conftest import SEED, require

try:
    import onnx as O
except ImportError:
    O = None

STATIC = [1, 7, 15, 16, 17, 100, 128, 1000]
SYMBOLIC_RUNS = [1, 7, 16, 17, 100, 1000]
OPS = ["softmax", "log_softmax", "layer_norm", "rms_norm"]
TOL = {"softmax": (1e-5, 1e-7), "log_softmax": (1e-5, 1e-5), "layer_norm": (1e-5, 1e-5), "rms_norm": (1e-5, 1e-5)}


def _model(op, rows, length, elem=1):
    # x [rows..., length]; layer/rms norm's scale (and bias) of shape [length] are graph inputs so
    # a symbolic length works.
    h = O.helper
    vi = lambda name, shape: h.make_tensor_value_info(name, elem, shape)  # noqa: E731
    inputs, opset = [vi("x", rows + [length])], 17
    if op == "softmax":
        node = h.make_node("Softmax", ["x"], ["y"], axis=-1)
    elif op == "log_softmax":
        node = h.make_node("LogSoftmax", ["x"], ["y"], axis=-1)
    elif op == "layer_norm":
        node = h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1, epsilon=1e-5)
        inputs += [vi("s", [length]), vi("b", [length])]
    else:
        node = h.make_node("RMSNormalization", ["x", "s"], ["y"], axis=-1, epsilon=1e-5)
        inputs += [vi("s", [length])]
        opset = 23
    g = h.make_graph([node], op, inputs, [vi("y", None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _feeds(op, rng, shape, dtype):
    x = (rng.standard_normal(shape) * 3 + 0.5).astype(dtype)
    feeds = [x]
    if op in ("layer_norm", "rms_norm"):
        feeds.append(rng.uniform(0.5, 1.5, shape[-1]).astype(dtype))
    if op == "layer_norm":
        feeds.append(rng.uniform(-0.5, 0.5, shape[-1]).astype(dtype))
    return feeds


def _reference(op, feeds):
    x = feeds[0].astype(np.float64)
    if op in ("softmax", "log_softmax"):
        z = x - x.max(axis=-1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=-1, keepdims=True))
        return np.exp(z - lse) if op == "softmax" else z - lse
    s = feeds[1].astype(np.float64)
    if op == "rms_norm":
        return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5) * s
    d = x - x.mean(axis=-1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * s + feeds[2].astype(np.float64)


def _run(exe, feeds):
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*feeds)
    return got.numpy() if hasattr(got, "numpy") else np.asarray(got)


def _require():
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("length", STATIC)
def test_static_length_matches_numpy(op, length):
    _require()
    rng = np.random.default_rng([SEED, OPS.index(op), length])
    feeds = _feeds(op, rng, (2, 3, length), np.float32)
    exe = anvil.compile(anvil.frontend.from_onnx(_model(op, [2, 3], length)), "llvm")
    got = _run(exe, feeds)
    rtol, atol = TOL[op]
    np.testing.assert_allclose(got, _reference(op, feeds), rtol=rtol, atol=atol, err_msg=f"{op} L={length} seed {SEED}")


@pytest.mark.parametrize("op", OPS)
def test_symbolic_length_matches_numpy_at_several_lengths(op):
    # x [n, 3, L] with n and L symbolic: one compiled model run at every length.
    _require()
    exe = anvil.compile(anvil.frontend.from_onnx(_model(op, ["n", 3], "L")), "llvm")
    rtol, atol = TOL[op]
    for length in SYMBOLIC_RUNS:
        rng = np.random.default_rng([SEED, 10 + OPS.index(op), length])
        feeds = _feeds(op, rng, (2, 3, length), np.float32)
        np.testing.assert_allclose(_run(exe, feeds), _reference(op, feeds), rtol=rtol, atol=atol,
                                   err_msg=f"{op} symbolic L run at {length}, seed {SEED}")


@pytest.mark.parametrize("op", ["softmax", "layer_norm"])
def test_float16_symbolic_length(op):
    # float16 (32 lanes a vector): softmax computes in float32 and rounds once; layer_norm's
    # statistics are float16 reductions here, so its tolerance is a few float16 ulps of |y| <= ~4.
    _require()
    exe = anvil.compile(anvil.frontend.from_onnx(_model(op, [4], "L", elem=O.TensorProto.FLOAT16)), "llvm")
    for length in [5, 31, 32, 33, 100]:
        rng = np.random.default_rng([SEED, 20 + OPS.index(op), length])
        feeds = _feeds(op, rng, (4, length), np.float16)
        if op == "softmax":
            feeds = [(f / 3).astype(np.float16) for f in feeds]
        tol = 2e-3 if op == "softmax" else 1e-2
        np.testing.assert_allclose(_run(exe, feeds).astype(np.float64), _reference(op, feeds), rtol=tol, atol=tol,
                                   err_msg=f"{op} float16 L={length} seed {SEED}")


def test_group_norm_non_multiple_and_symbolic_last_dim():
    # GroupNormalization over [C/G, H, W] with W 1, 20 (16 + tail 4) and symbolic (run at 7 and 33).
    _require()
    h = O.helper
    for w in [1, 20, "W"]:
        node = h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2, epsilon=1e-5)
        g = h.make_graph([node], "gn", [h.make_tensor_value_info("x", 1, ["n", 4, 3, w])], [h.make_tensor_value_info("y", 1, None)])
        rng = np.random.default_rng([SEED, 30, 0 if w == "W" else w])
        s, b = rng.uniform(0.5, 1.5, 4).astype(np.float32), rng.uniform(-0.5, 0.5, 4).astype(np.float32)
        g.initializer.extend([O.numpy_helper.from_array(s, "s"), O.numpy_helper.from_array(b, "b")])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
        m.ir_version = 8
        exe = anvil.compile(anvil.frontend.from_onnx(m), "llvm")
        for run_w in ([7, 33] if w == "W" else [w]):
            x = (rng.standard_normal((2, 4, 3, run_w)) * 2 + 1).astype(np.float32)
            xg = x.astype(np.float64).reshape(2, 2, -1)
            d = xg - xg.mean(axis=-1, keepdims=True)
            want = (d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5)).reshape(x.shape)
            want = want * s[None, :, None, None] + b[None, :, None, None]
            np.testing.assert_allclose(_run(exe, [x]), want, rtol=1e-5, atol=1e-5, err_msg=f"W={w} run at {run_w}")


def test_symbolic_length_softmax_vectorises(monkeypatch, capfd):
    # The TIR after vectorize and storage_flatten: the lane partials of the max and the sum of exps and the
    # output's full vectors are 16-lane ramps (vector loads, vector exp), only the tail scalar.
    _require()
    monkeypatch.setenv("ANVIL_DUMP_IR", "1")
    anvil.compile(anvil.frontend.from_onnx(_model("softmax", ["n", 12, "s"], "s")), "llvm")
    err = capfd.readouterr().err
    after = err.split("// ---- after storage_flatten")[1].split("// ---- after")[0]
    for store in ["softmax_max_lanes[ramp(", "softmax_sum_lanes[ramp(", "softmax[ramp("]:
        assert store in after, f"{store} not vectorised:\n{after[:4000]}"
    assert "exp(arg0[ramp(" in after, after[:4000]

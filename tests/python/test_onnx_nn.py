# The nn family's ONNX converters and kernels end to end: small models built with onnx.helper
# (Conv with auto_pad / groups / dilation / 1-d, ConvTranspose, Gemm forms, MatMul with a constant
# or a batched B, BatchNormalization, pools with ceil_mode / count_include_pad / SAME_LOWER,
# global pools, Softmax in opset 11 and 13, LogSoftmax, Layer/Instance/Group normalisation, LRN)
# imported by anvil.frontend.from_onnx, compiled for llvm, run on the VM and compared with ONNX
# Runtime on random inputs (seed SEED) within rtol 1e-4 / atol 1e-4; LayerNormalization's Mean and
# InvStdDev outputs (float32 and float16 inputs, stash_type float32) against numpy in float64; the
# spelled-out opset-14 LayerNorm, GELU (erf and tanh forms) and softmax recognised as one op each.
import numpy as np
import pytest

import anvil
from conftest import SEED, require

def _mods():
    try:
        import onnx as o
        import onnxruntime as r
        return o, r
    except ImportError:
        return None, None


O, ORT = _mods()


def _model(nodes, inputs, inits=(), opset=17):
    h = O.helper
    g = h.make_graph(nodes, "t", inputs, [h.make_tensor_value_info("y", O.TensorProto.FLOAT, None)],
                     initializer=[O.numpy_helper.from_array(a.astype(np.float32), n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _vi(name, shape):
    return O.helper.make_tensor_value_info(name, O.TensorProto.FLOAT, shape)


def _x(rng, *shape, scale=1.0):
    return (rng.uniform(-1, 1, shape) * scale).astype(np.float32)


def _cases(rng):
    n = O.helper.make_node
    x = lambda *s, scale=1.0: _x(rng, *s, scale=scale)  # noqa: E731
    return {
        "conv_same_upper_s2_bias": (_model([n("Conv", ["x", "w", "b"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])],
                                           [_vi("x", [1, 3, 9, 10])], [("w", x(8, 3, 3, 3)), ("b", x(8))]),
                                    {"x": x(1, 3, 9, 10)}),
        "conv_groups_pads_dilation": (_model([n("Conv", ["x", "w"], ["y"], group=2, pads=[1, 0, 2, 1], dilations=[2, 1])],
                                             [_vi("x", [2, 4, 11, 12])], [("w", x(6, 2, 3, 3))]), {"x": x(2, 4, 11, 12)}),
        "conv_depthwise_symbolic_batch": (_model([n("Conv", ["x", "w"], ["y"], group=16, pads=[1, 1, 1, 1], strides=[2, 2])],
                                                 [_vi("x", ["n", 16, 14, 14])], [("w", x(16, 1, 3, 3))]),
                                          {"x": x(3, 16, 14, 14)}),
        "conv_37_channels_7x7_s2": (_model([n("Conv", ["x", "w"], ["y"], pads=[3, 3, 3, 3], strides=[2, 2])],
                                           [_vi("x", ["n", 37, 19, 19])], [("w", x(32, 37, 7, 7))]), {"x": x(2, 37, 19, 19)}),
        "conv1d": (_model([n("Conv", ["x", "w", "b"], ["y"], pads=[2, 1], strides=[2])], [_vi("x", [2, 5, 17])],
                          [("w", x(7, 5, 4)), ("b", x(7))]), {"x": x(2, 5, 17)}),
        "conv_transpose_s2_output_padding": (
            _model([n("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])],
                   [_vi("x", [1, 4, 5, 6])], [("w", x(4, 3, 3, 3)), ("b", x(3))]), {"x": x(1, 4, 5, 6)}),
        "gemm_transb_alpha_beta": (_model([n("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transB=1)],
                                          [_vi("a", [5, 7])], [("b", x(9, 7)), ("c", x(9))]), {"a": x(5, 7)}),
        "gemm_transa_constant_b": (_model([n("Gemm", ["a", "b", "c"], ["y"], transA=1)], [_vi("a", [7, 5])],
                                          [("b", x(7, 9)), ("c", x(5, 9))]), {"a": x(7, 5)}),
        "matmul_constant_b_rank3_symbolic": (_model([n("MatMul", ["a", "b"], ["y"])], [_vi("a", ["n", 6, 20])],
                                                    [("b", x(20, 13))]), {"a": x(2, 6, 20)}),
        # A few static rows (batch 1): the unpacked tile schedule, columns not a vector multiple.
        "matmul_constant_b_three_rows": (_model([n("MatMul", ["a", "b"], ["y"])], [_vi("a", [3, 300])],
                                                [("b", x(300, 77))]), {"a": x(3, 300)}),
        "gemm_one_row_constant_b_bias": (_model([n("Gemm", ["a", "b", "c"], ["y"], transB=1)], [_vi("a", [1, 130])],
                                                [("b", x(50, 130)), ("c", x(50))]), {"a": x(1, 130)}),
        "matmul_batched": (_model([n("MatMul", ["a", "b"], ["y"])], [_vi("a", [2, 3, 6, 8]), _vi("b", [2, 3, 8, 5])]),
                           {"a": x(2, 3, 6, 8), "b": x(2, 3, 8, 5)}),
        "batch_norm": (_model([n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)],
                              [_vi("x", ["n", 6, 4, 5])],
                              [("s", x(6)), ("b", x(6)), ("m", x(6)), ("v", rng.uniform(0.5, 2, 6))]),
                       {"x": x(2, 6, 4, 5)}),
        "max_pool_ceil_mode": (_model([n("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                         ceil_mode=1)], [_vi("x", [1, 3, 12, 12])]), {"x": x(1, 3, 12, 12)}),
        "avg_pool_count_include_pad": (_model([n("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                                 pads=[1, 1, 1, 1], count_include_pad=1)], [_vi("x", [1, 3, 11, 11])]),
                                       {"x": x(1, 3, 11, 11)}),
        "avg_pool_ceil_mode": (_model([n("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
                                      [_vi("x", [1, 3, 12, 12])]), {"x": x(1, 3, 12, 12)}),
        "avg_pool_same_lower": (_model([n("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], auto_pad="SAME_LOWER")],
                                       [_vi("x", [1, 2, 5, 5])]), {"x": x(1, 2, 5, 5)}),
        "global_avg_pool": (_model([n("GlobalAveragePool", ["x"], ["y"])], [_vi("x", ["n", 8, 7, 7])]), {"x": x(2, 8, 7, 7)}),
        "global_max_pool": (_model([n("GlobalMaxPool", ["x"], ["y"])], [_vi("x", [1, 8, 5, 5])]), {"x": x(1, 8, 5, 5)}),
        "softmax_opset13": (_model([n("Softmax", ["x"], ["y"], axis=1)], [_vi("x", [3, 4, 5])], opset=13),
                            {"x": x(3, 4, 5, scale=10)}),
        "softmax_opset11_flattens": (_model([n("Softmax", ["x"], ["y"], axis=1)], [_vi("x", [3, 4, 5])], opset=11),
                                     {"x": x(3, 4, 5, scale=10)}),
        "log_softmax": (_model([n("LogSoftmax", ["x"], ["y"])], [_vi("x", [3, 40])], opset=13), {"x": x(3, 40, scale=10)}),
        "layer_norm": (_model([n("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1, epsilon=1e-5)],
                              [_vi("x", ["n", 5, 16])], [("s", x(16)), ("b", x(16))]), {"x": x(2, 5, 16)}),
        "instance_norm": (_model([n("InstanceNormalization", ["x", "s", "b"], ["y"])], [_vi("x", [2, 4, 5, 6])],
                                 [("s", x(4)), ("b", x(4))]), {"x": x(2, 4, 5, 6)}),
        "group_norm_opset21": (_model([n("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
                                      [_vi("x", [2, 4, 5, 6])], [("s", x(4)), ("b", x(4))], opset=21),
                               {"x": x(2, 4, 5, 6)}),
        "lrn": (_model([n("LRN", ["x"], ["y"], size=3, alpha=1e-2, beta=0.75, bias=1.0)], [_vi("x", [1, 6, 4, 4])]),
                {"x": x(1, 6, 4, 4)}),
    }


NAMES = ["conv_same_upper_s2_bias", "conv_groups_pads_dilation", "conv_depthwise_symbolic_batch",
         "conv_37_channels_7x7_s2", "conv1d", "conv_transpose_s2_output_padding", "gemm_transb_alpha_beta",
         "gemm_transa_constant_b", "matmul_constant_b_rank3_symbolic", "matmul_constant_b_three_rows",
         "gemm_one_row_constant_b_bias", "matmul_batched", "batch_norm",
         "max_pool_ceil_mode", "avg_pool_count_include_pad", "avg_pool_ceil_mode", "avg_pool_same_lower",
         "global_avg_pool", "global_max_pool", "softmax_opset13", "softmax_opset11_flattens", "log_softmax",
         "layer_norm", "instance_norm", "group_norm_opset21", "lrn"]


@pytest.mark.parametrize("name", NAMES)
def test_nn_model_matches_onnxruntime(name):
    require(O is not None and ORT is not None, "pip packages onnx and onnxruntime (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    rng = np.random.default_rng([SEED, NAMES.index(name)])
    model, feeds = _cases(rng)[name]
    want = ORT.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*[feeds[i.name] for i in model.graph.input])
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    assert got.shape == want.shape, f"{name} (seed {SEED}): shape {got.shape}, ONNX Runtime {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{name} (seed {SEED})")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_layer_norm_mean_and_inv_std_dev_outputs(dtype):
    # Y, Mean and InvStdDev over axis 1.. of a symbolic batch; the statistics in stash_type
    # float32 also for a float16 input (Y cast back), against numpy in float64.
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    h, T = O.helper, O.TensorProto
    et = T.FLOAT16 if dtype == np.float16 else T.FLOAT
    node = h.make_node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=1, epsilon=1e-3)
    g = h.make_graph([node], "t", [h.make_tensor_value_info("x", et, ["n", 5, 16])],
                     [h.make_tensor_value_info("y", et, None), h.make_tensor_value_info("mean", T.FLOAT, None),
                      h.make_tensor_value_info("inv", T.FLOAT, None)])
    rng = np.random.default_rng([SEED, 77])
    s, b = rng.uniform(0.5, 2, (5, 16)).astype(dtype), rng.uniform(-1, 1, (5, 16)).astype(dtype)
    g.initializer.extend([O.numpy_helper.from_array(s, "s"), O.numpy_helper.from_array(b, "b")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    x = (rng.uniform(-1, 1, (3, 5, 16)) * 4 + 1).astype(dtype)
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x)
    y, mean, inv = [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in got]
    x64 = x.astype(np.float64)
    want_mean = x64.mean(axis=(1, 2), keepdims=True)
    want_inv = 1 / np.sqrt(((x64 - want_mean) ** 2).mean(axis=(1, 2), keepdims=True) + 1e-3)
    want_y = (x64 - want_mean) * want_inv * s.astype(np.float64) + b.astype(np.float64)
    assert (y.dtype, mean.dtype, inv.dtype) == (dtype, np.float32, np.float32)
    assert mean.shape == inv.shape == (3, 1, 1) and y.shape == x.shape
    np.testing.assert_allclose(mean, want_mean, rtol=1e-5, atol=1e-6, err_msg=f"seed {SEED}")
    np.testing.assert_allclose(inv, want_inv, rtol=1e-5, err_msg=f"seed {SEED}")
    tol = 1e-5 if dtype == np.float32 else 4e-3  # float16 Y: its last bit, at |y| up to ~4
    np.testing.assert_allclose(y.astype(np.float64), want_y, rtol=tol, atol=tol, err_msg=f"seed {SEED}")


def test_spelled_out_layer_norm_becomes_one_kernel(tmp_path):
    # The opset-14 LayerNorm torch.onnx writes (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt,
    # Div, Mul gamma, Add beta) on a symbolic batch: recognize_layer_norm makes it one nn.layer_norm
    # (graph.optimized.txt), one kernel, and the result matches ONNX Runtime.
    require(O is not None and ORT is not None, "pip packages onnx and onnxruntime (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    n = O.helper.make_node
    rng = np.random.default_rng([SEED, 78])
    nodes = [n("ReduceMean", ["x"], ["m"], axes=[-1], keepdims=1), n("Sub", ["x", "m"], ["d"]),
             n("Pow", ["d", "two"], ["p"]), n("ReduceMean", ["p"], ["v"], axes=[-1], keepdims=1),
             n("Add", ["v", "eps"], ["e"]), n("Sqrt", ["e"], ["s"]), n("Div", ["d", "s"], ["q"]),
             n("Mul", ["q", "g"], ["gq"]), n("Add", ["gq", "b"], ["y"])]
    inits = [("two", np.array(2.0)), ("eps", np.array(1e-5)), ("g", rng.uniform(0.5, 1.5, 64)),
             ("b", rng.uniform(-0.1, 0.1, 64))]
    model = _model(nodes, [_vi("x", ["n", 7, 64])], inits, opset=13)
    x = (rng.uniform(-1, 1, (3, 7, 64)) * 3 + 0.5).astype(np.float32)
    want = ORT.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm", dump_ir=tmp_path)
    optimized = (tmp_path / "graph.optimized.txt").read_text()
    assert "nn.layer_norm(" in optimized and "power(" not in optimized and "mean(" not in optimized, optimized
    assert sorted(p.name for p in (tmp_path / "tir").iterdir()) == ["fused_nn_layer_norm.tir"]
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"seed {SEED}")


@pytest.mark.parametrize("form", ["erf", "tanh"])
def test_spelled_out_gelu_becomes_one_op(tmp_path, form):
    # GELU as torch.onnx writes it (BERT's erf form; GPT-2's tanh approximation with Pow 3):
    # recognize_gelu makes it one gelu call, and the result matches ONNX Runtime.
    require(O is not None and ORT is not None, "pip packages onnx and onnxruntime (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    n = O.helper.make_node
    if form == "erf":
        nodes = [n("Div", ["x", "sqrt2"], ["d"]), n("Erf", ["d"], ["e"]), n("Add", ["e", "one"], ["a"]),
                 n("Mul", ["x", "a"], ["m"]), n("Mul", ["m", "half"], ["y"])]
        inits = [("sqrt2", np.array(1.4142135381698608)), ("one", np.array(1.0)), ("half", np.array(0.5))]
    else:
        nodes = [n("Pow", ["x", "three"], ["c"]), n("Mul", ["c", "k"], ["kc"]), n("Add", ["x", "kc"], ["s"]),
                 n("Mul", ["s", "r"], ["t0"]), n("Tanh", ["t0"], ["t"]), n("Add", ["t", "one"], ["a"]),
                 n("Mul", ["half", "x"], ["h"]), n("Mul", ["h", "a"], ["y"])]
        inits = [("three", np.array(3.0)), ("k", np.array(0.044715)), ("r", np.array(np.sqrt(2 / np.pi))),
                 ("one", np.array(1.0)), ("half", np.array(0.5))]
    model = _model(nodes, [_vi("x", ["n", 96])], inits, opset=13)
    x = (np.random.default_rng([SEED, 79]).uniform(-1, 1, (5, 96)) * 4).astype(np.float32)
    want = ORT.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm", dump_ir=tmp_path)
    optimized = (tmp_path / "graph.optimized.txt").read_text()
    assert "gelu(" in optimized and "tanh(" not in optimized and "erf(" not in optimized, optimized
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{form} (seed {SEED})")


@pytest.mark.parametrize("stable", [True, False])
def test_spelled_out_softmax_becomes_one_op(tmp_path, stable):
    # Softmax over the last axis of [n, 12, 16, 64] attention scores written out (ReduceMax, Sub,
    # Exp, ReduceSum, Div; or without the max): recognize_softmax makes it one nn.softmax, which
    # matches ONNX Runtime on the spelled-out graph.
    require(O is not None and ORT is not None, "pip packages onnx and onnxruntime (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    n = O.helper.make_node
    nodes = [n("Exp", ["d" if stable else "x"], ["e"]), n("ReduceSum", ["e", "axes"], ["s"], keepdims=1),
             n("Div", ["e", "s"], ["y"])]
    if stable:
        nodes = [n("ReduceMax", ["x"], ["m"], axes=[-1], keepdims=1), n("Sub", ["x", "m"], ["d"])] + nodes
    model = _model(nodes, [_vi("x", ["n", 12, 16, 64])], [("axes", np.array([-1]))], opset=13)
    model.graph.initializer[0].CopyFrom(O.numpy_helper.from_array(np.array([-1], np.int64), "axes"))
    x = (np.random.default_rng([SEED, 80]).uniform(-1, 1, (2, 12, 16, 64)) * (8 if stable else 3)).astype(np.float32)
    want = ORT.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm", dump_ir=tmp_path)
    optimized = (tmp_path / "graph.optimized.txt").read_text()
    assert "nn.softmax(" in optimized and "exp(" not in optimized, optimized
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"seed {SEED}")

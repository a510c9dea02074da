# MobileNetV2's convolution schedules on shapes that do and do not divide their tiles: the 1x1
# pointwise GEMM tile (ops/cpu/conv2d_generic.cc: kt output channels x rows x 16-column vectors,
# a guarded last column tile when 16 does not divide the row) and the depthwise rows of 16-lane
# vectors, with the epilogues MobileNetV2 fuses
# (bias + Clip(0, 6), bias + a residual Add, bias alone), and the depthwise 3x3 stride 1 and 2.
# Each ONNX model is compiled for llvm, run on the VM on fresh random inputs and compared with a
# float64 numpy convolution within rtol 1e-4, atol 1e-4 * sqrt(reduction length).
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx
except ImportError:
    onnx = None


def conv_ref(x, w, b, stride, pad, groups):
    """float64 NCHW convolution, OIHW weight, symmetric padding."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    o, cg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - r) // stride + 1, (wd + 2 * pad - s) // stride + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for ry in range(r):
            for rx in range(s):
                win = xs[:, :, ry:ry + stride * oh:stride, rx:rx + stride * ow:stride]  # n, cg, oh, ow
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win, w[g * og:(g + 1) * og, :, ry, rx])
    return out + b.astype(np.float64)[None, :, None, None]


def run_conv(rng, n, c, h, wd, o, k, stride, groups, epilogue):
    h_ = onnx.helper
    pad = k // 2
    w = rng.uniform(-1, 1, (o, c // groups, k, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (o,)).astype(np.float32)
    x = rng.uniform(-1, 1, (n, c, h, wd)).astype(np.float32)
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    inputs = [h_.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(x.shape))]
    nodes = [h_.make_node("Conv", ["x", "w", "b"], ["c"], group=groups, kernel_shape=[k, k], strides=[stride] * 2,
                          pads=[pad] * 4)]
    inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b")]
    want = conv_ref(x, w, b, stride, pad, groups)
    feeds = [x]
    if epilogue == "relu6":
        nodes.append(h_.make_node("Clip", ["c", "lo", "hi"], ["y"]))
        inits += [onnx.numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  onnx.numpy_helper.from_array(np.array(6, np.float32), "hi")]
        want = np.clip(want, 0, 6)
    elif epilogue == "residual":
        r = rng.uniform(-1, 1, (n, o, oh, ow)).astype(np.float32)
        inputs.append(h_.make_tensor_value_info("r", onnx.TensorProto.FLOAT, list(r.shape)))
        nodes.append(h_.make_node("Add", ["c", "r"], ["y"]))
        want = want + r
        feeds.append(r)
    else:
        nodes.append(h_.make_node("Identity", ["c"], ["y"]))
    g = h_.make_graph(nodes, "conv", inputs, [h_.make_tensor_value_info("y", onnx.TensorProto.FLOAT, list(want.shape))],
                      initializer=inits)
    model = h_.make_model(g, opset_imports=[h_.make_opsetid("", 17)])
    model.ir_version = 8
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*feeds).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(c // groups * k * k))
    return exe


# (n, c, h, w, o, epilogue): rows of 112 (7 column vectors, two rows a tile) and 48 (one
# 48-column tile), rows of 56 / 28 / 29 / 30 (a guarded last tile of 8 / 12 / 13 / 14 columns),
# odd heights, output channels a multiple of 8 or only of 4, a batch of 2.
POINTWISE = [
    (1, 16, 112, 112, 96, "relu6"),
    (1, 24, 56, 56, 144, "relu6"),
    (1, 144, 56, 56, 24, "residual"),
    (1, 32, 28, 28, 192, "none"),
    (2, 5, 29, 29, 12, "relu6"),
    (1, 7, 31, 30, 20, "residual"),
    (2, 3, 33, 48, 8, "none"),
]


@pytest.mark.parametrize("n,c,h,w,o,epilogue", POINTWISE)
def test_pointwise_conv_matches_float64(rng, n, c, h, w, o, epilogue):
    require(onnx is not None, "pip package onnx (scripts/setup.sh)")
    run_conv(rng, n, c, h, w, o, 1, 1, 1, epilogue)


# Below the pointwise tile's plane (14x14, 7x7), odd output channel counts: other schedules.
@pytest.mark.parametrize("n,c,h,w,o", [(1, 64, 14, 14, 384), (1, 160, 7, 7, 96), (1, 8, 30, 30, 6)])
def test_pointwise_conv_other_shapes(rng, n, c, h, w, o):
    require(onnx is not None, "pip package onnx (scripts/setup.sh)")
    run_conv(rng, n, c, h, w, o, 1, 1, 1, "relu6")


# (n, c, h, w, stride, epilogue): output rows of 112 / 64 (vectors of 16), 56 and 50 (a guarded
# last vector of 8 / 2), an odd height and width (stride 2 of 101 -> 51), and the row-divisor
# schedule's rows of 28, 14 and 7.
DEPTHWISE = [
    (1, 32, 112, 112, 1, "relu6"),
    (1, 24, 112, 112, 2, "relu6"),
    (1, 16, 56, 56, 1, "residual"),
    (2, 5, 50, 50, 1, "none"),
    (1, 6, 33, 64, 1, "relu6"),
    (1, 7, 101, 101, 2, "relu6"),
    (1, 24, 28, 28, 1, "residual"),
    (1, 24, 28, 28, 2, "relu6"),
    (1, 40, 7, 7, 1, "relu6"),
]


@pytest.mark.parametrize("n,c,h,w,stride,epilogue", DEPTHWISE)
def test_depthwise_conv_matches_float64(rng, n, c, h, w, stride, epilogue):
    require(onnx is not None, "pip package onnx (scripts/setup.sh)")
    run_conv(rng, n, c, h, w, c, 3, stride, c, epilogue)

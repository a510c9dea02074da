# The row-vectorised KxK stride-1 convolution (ops/cpu/conv2d_rows.cc: a register tile of output
# channels x rows x column vectors along the NCHW row, padded rows made per block of output
# rows) on shapes that do and do not divide its tiles: rows of 64 (two 16-column vectors), 40, 45
# and 20 (a rounded-up last column tile), heights with and without a divisor in [4, 8], 3x3 and 5x5,
# no padding, output channels that do and do not divide the channel tile, a batch of 2, with no
# epilogue, bias + Relu and a residual Add; for the host target and for `llvm -mcpu=haswell`
# (8-lane vectors). Fresh random inputs, compared with a float64 numpy convolution within
# rtol 1e-4, atol 1e-4 * sqrt(reduction length).
import numpy as np
import pytest

import anvil
from conftest import require
from test_conv_schedules import conv_ref

try:
    import onnx
except ImportError:
    onnx = None

TARGETS = ["llvm", "llvm -mcpu=haswell"]

# (n, c, h, w, o, k, pad, epilogue)
SHAPES = [
    (1, 96, 40, 40, 24, 3, 1, "relu"),      # PP-OCRv4 det's 96 -> 24 (cut to 40x40)
    (2, 8, 32, 64, 12, 3, 1, "none"),       # whole tiles, a batch of 2
    (1, 16, 37, 45, 12, 3, 1, "residual"),  # odd height (no divisor in [4, 8]) and width
    (1, 6, 20, 33, 10, 5, 2, "relu"),       # 5x5, 5 channels a tile
    (1, 8, 12, 40, 6, 3, 0, "none"),        # no padding: output 10 x 38
    (1, 7, 9, 32, 7, 3, 1, "residual"),     # 7 channels (a tile of 7), 9 rows
    (1, 24, 20, 20, 20, 3, 1, "relu"),      # rows of 20: one 16-column vector + a rounded-up one
]


def run(rng, target, n, c, h, wd, o, k, pad, epilogue):
    hp = onnx.helper
    w = rng.uniform(-1, 1, (o, c, k, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (o,)).astype(np.float32)
    x = rng.uniform(-1, 1, (n, c, h, wd)).astype(np.float32)
    oh, ow = h + 2 * pad - k + 1, wd + 2 * pad - k + 1
    inputs = [hp.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(x.shape))]
    inits = [onnx.numpy_helper.from_array(w, "w")]
    conv_in = ["x", "w"]
    bias = np.zeros(o, np.float32)
    if epilogue != "none":
        conv_in.append("b")
        inits.append(onnx.numpy_helper.from_array(b, "b"))
        bias = b
    nodes = [hp.make_node("Conv", conv_in, ["c"], kernel_shape=[k, k], pads=[pad] * 4)]
    want = conv_ref(x, w, bias, 1, pad, 1)
    feeds = [x]
    if epilogue == "relu":
        nodes.append(hp.make_node("Relu", ["c"], ["y"]))
        want = np.maximum(want, 0)
    elif epilogue == "residual":
        r = rng.uniform(-1, 1, (n, o, oh, ow)).astype(np.float32)
        inputs.append(hp.make_tensor_value_info("r", onnx.TensorProto.FLOAT, list(r.shape)))
        nodes.append(hp.make_node("Add", ["c", "r"], ["y"]))
        want = want + r
        feeds.append(r)
    else:
        nodes.append(hp.make_node("Identity", ["c"], ["y"]))
    g = hp.make_graph(nodes, "conv", inputs, [hp.make_tensor_value_info("y", onnx.TensorProto.FLOAT, list(want.shape))],
                      initializer=inits)
    model = hp.make_model(g, opset_imports=[hp.make_opsetid("", 17)])
    model.ir_version = 8
    exe = anvil.compile(anvil.frontend.from_onnx(model), target)
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*feeds).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(c * k * k))
    return exe


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n,c,h,w,o,k,pad,epilogue", SHAPES)
def test_conv_rows_matches_float64(rng, target, n, c, h, w, o, k, pad, epilogue):
    require(onnx is not None, "pip package onnx (scripts/setup.sh)")
    exe = run(rng, target, n, c, h, w, o, k, pad, epilogue)
    if o % 8 != 0:  # not a whole vector of output channels on any x86 host: this kernel's stages
        assert "conv_rows" in exe.imports[0].get_source()


# ConvTranspose with stride equal to the kernel (PP-OCRv4 det's 24 -> 24 2x2/2 upsampling),
# computed per tap (conv2d_generic.cc transpose_by_taps) in tiles of output channels x taps x a
# vector of input columns: channels that do and do not divide the tile, rows of 40, 13 and 20.
# (n, c, h, w, o, k, epilogue)
TRANSPOSE = [
    (1, 24, 40, 40, 24, 2, "relu"),
    (2, 5, 7, 13, 6, 2, "none"),
    (1, 8, 9, 20, 7, 3, "relu"),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n,c,h,w,o,k,epilogue", TRANSPOSE)
def test_conv_transpose_by_taps_matches_float64(rng, target, n, c, h, w, o, k, epilogue):
    require(onnx is not None, "pip package onnx (scripts/setup.sh)")
    hp = onnx.helper
    wt = rng.uniform(-1, 1, (c, o, k, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (o,)).astype(np.float32)
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    # out[n, o, y*k + ry, x*k + rx] = sum_c x[n, c, y, x] * w[c, o, ry, rx] + b[o]
    want = np.einsum("ncyx,coij->noyixj", x.astype(np.float64), wt.astype(np.float64)).reshape(n, o, h * k, w * k)
    want = want + b.astype(np.float64)[None, :, None, None]
    nodes = [hp.make_node("ConvTranspose", ["x", "w", "b"], ["c"], kernel_shape=[k, k], strides=[k, k])]
    if epilogue == "relu":
        nodes.append(hp.make_node("Relu", ["c"], ["y"]))
        want = np.maximum(want, 0)
    else:
        nodes.append(hp.make_node("Identity", ["c"], ["y"]))
    g = hp.make_graph(nodes, "convt", [hp.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(x.shape))],
                      [hp.make_tensor_value_info("y", onnx.TensorProto.FLOAT, list(want.shape))],
                      initializer=[onnx.numpy_helper.from_array(wt, "w"), onnx.numpy_helper.from_array(b, "b")])
    model = hp.make_model(g, opset_imports=[hp.make_opsetid("", 17)])
    model.ir_version = 8
    exe = anvil.compile(anvil.frontend.from_onnx(model), target)
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(c))
    assert "conv2d_transpose_taps" in exe.imports[0].get_source()

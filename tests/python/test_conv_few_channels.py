# Convolutions over few input channels (ops/cpu/conv2d_few_channels.cc: the input row split into
# stride phases per block of output rows, a register tile of output channels x tile rows x one
# column vector, the grid rounded up to whole tiles and cropped): the three models' stems
# (MobileNetV2 3x224 -> 32 3x3/2 + Clip(0, 6), ResNet-18 3x224 -> 64 7x7/2 + Relu, PP-OCRv4 det
# 3x640 -> 16 3x3/2) and shapes that do not divide the tiles (odd planes, 5x5 and 7x7 kernels,
# stride 1 and 2 and mixed, with and without padding, asymmetric padding, 1/2/4 channels, output
# channel counts without a divisor of 8, batch 2), compiled for the host (AVX-512 here) and for
# llvm -mcpu=haswell (8 lanes), run on fresh random inputs and compared with a float64 numpy
# convolution within rtol 1e-4, atol 1e-4 * sqrt(C*R*S).
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx
except ImportError:
    onnx = None

TARGETS = ["llvm", "llvm -mcpu=haswell"]


def conv_ref(x, w, b, strides, pads):
    """float64 NCHW convolution, OIHW weight, pads (top, left, bottom, right)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    sh, sw = strides
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    o, c, r, s = w.shape
    oh, ow = (xp.shape[2] - r) // sh + 1, (xp.shape[3] - s) // sw + 1
    out = np.zeros((x.shape[0], o, oh, ow))
    for ry in range(r):
        for rx in range(s):
            win = xp[:, :, ry:ry + sh * (oh - 1) + 1:sh, rx:rx + sw * (ow - 1) + 1:sw]
            out += np.einsum("nchw,oc->nohw", win, w[:, :, ry, rx])
    return out + b.astype(np.float64)[None, :, None, None]


def run_conv(rng, target, n, c, h, wd, o, k, strides, pads, epilogue):
    hp = onnx.helper
    kh, kw = (k, k) if isinstance(k, int) else k
    w = rng.uniform(-1, 1, (o, c, kh, kw)).astype(np.float32)
    b = rng.uniform(-1, 1, (o,)).astype(np.float32)
    x = rng.uniform(-1, 1, (n, c, h, wd)).astype(np.float32)
    want = conv_ref(x, w, b, strides, pads)
    nodes = [hp.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[kh, kw], strides=list(strides),
                          pads=[pads[0], pads[1], pads[2], pads[3]])]
    inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b")]
    if epilogue == "relu6":
        nodes.append(hp.make_node("Clip", ["c", "lo", "hi"], ["y"]))
        inits += [onnx.numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  onnx.numpy_helper.from_array(np.array(6, np.float32), "hi")]
        want = np.clip(want, 0, 6)
    elif epilogue == "relu":
        nodes.append(hp.make_node("Relu", ["c"], ["y"]))
        want = np.maximum(want, 0)
    else:
        nodes.append(hp.make_node("Identity", ["c"], ["y"]))
    g = hp.make_graph(nodes, "conv", [hp.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(x.shape))],
                      [hp.make_tensor_value_info("y", onnx.TensorProto.FLOAT, list(want.shape))], initializer=inits)
    model = hp.make_model(g, opset_imports=[hp.make_opsetid("", 17)])
    model.ir_version = 8
    exe = anvil.compile(anvil.frontend.from_onnx(model), target)
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(c * kh * kw))


STEMS = [
    (1, 3, 224, 224, 32, 3, (2, 2), (1, 1, 1, 1), "relu6"),  # MobileNetV2
    (1, 3, 224, 224, 64, 7, (2, 2), (3, 3, 3, 3), "relu"),   # ResNet-18
    (1, 3, 640, 640, 16, 3, (2, 2), (1, 1, 1, 1), "none"),   # PP-OCRv4 det
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n,c,h,w,o,k,strides,pads,epilogue", STEMS)
def test_model_stems_match_float64(rng, target, n, c, h, w, o, k, strides, pads, epilogue):
    require(onnx is not None, "pip package onnx (scripts/setup.sh)")
    run_conv(rng, target, n, c, h, w, o, k, strides, pads, epilogue)


# Output grids that the tiles (16 / 8 columns, row blocks of 4..8, rows in pairs) do not divide:
# 19x27 (3x37x53, 5x5/2 pad 2), 33x49 (5x5/1 no pad), 37x53 (5x5/1 pad 2), 20x19 (one channel),
# 15x16 (4 channels, 7x7/2 pad 3, batch 2), mixed strides (2, 1) with asymmetric padding, a
# non-square kernel, 3 and 13 output channels (tiles of 3 and of 1 channel), and an output row
# narrower than a vector (5 columns).
ODD = [
    (1, 3, 37, 53, 8, 5, (2, 2), (2, 2, 2, 2), "relu6"),
    (1, 3, 37, 53, 12, 5, (1, 1), (0, 0, 0, 0), "none"),
    (1, 3, 37, 53, 16, 5, (1, 1), (2, 2, 2, 2), "relu"),
    (1, 1, 20, 19, 24, 3, (1, 1), (1, 1, 1, 1), "none"),
    (2, 4, 30, 31, 16, 7, (2, 2), (3, 3, 3, 3), "relu"),
    (1, 2, 23, 41, 3, 3, (2, 1), (1, 0, 2, 1), "none"),
    (2, 3, 29, 35, 13, (3, 5), (1, 2), (0, 2, 1, 2), "relu6"),
    (1, 3, 11, 9, 8, 3, (2, 2), (0, 0, 0, 0), "none"),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n,c,h,w,o,k,strides,pads,epilogue", ODD)
def test_odd_shapes_match_float64(rng, target, n, c, h, w, o, k, strides, pads, epilogue):
    require(onnx is not None, "pip package onnx (scripts/setup.sh)")
    run_conv(rng, target, n, c, h, w, o, k, strides, pads, epilogue)

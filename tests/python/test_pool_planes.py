# MaxPool and AveragePool over static planes (ops/cpu/pool.cc: each plane padded with -inf or 0
# just before its rows are pooled, the plane-window schedule of nn_util.h) on shapes that cover
# rows of 16-lane vectors with a peeled tail (50), short rows (28, 9, 7), strides 1-3 and unequal
# strides, dilation, ceil_mode, count_include_pad 0 and 1, no padding (the input read directly)
# and a batch of 2; for the host target and `llvm -mcpu=haswell` (8-lane vectors). Fresh random
# inputs against a float64 numpy loop over the windows (rtol 1e-6 for max, 1e-5 for avg).
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx
except ImportError:
    onnx = None

TARGETS = ["llvm", "llvm -mcpu=haswell"]

# (op, shape, kernel, strides, pads (top, left, bottom, right), dilations, ceil_mode, count_include_pad)
CASES = [
    ("MaxPool", (1, 3, 100, 100), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 0, 0),  # ResNet's, rows of 50
    ("MaxPool", (2, 4, 13, 17), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 1, 0),    # ceil_mode: 7 x 9
    ("MaxPool", (1, 3, 20, 33), (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 0, 0),    # dilation 2
    ("MaxPool", (1, 3, 16, 64), (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 0, 0),    # no padding
    ("AveragePool", (2, 6, 28, 28), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 0, 0),  # Inception's
    ("AveragePool", (1, 3, 31, 40), (5, 5), (3, 3), (2, 1, 2, 3), (1, 1), 0, 1),  # include pad
    ("AveragePool", (1, 3, 11, 11), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, 0),  # ceil_mode
    ("AveragePool", (1, 8, 6, 80), (3, 2), (3, 2), (0, 0, 0, 0), (1, 1), 0, 0),   # PP-OCRv4 rec's
]


def out_size(size, p0, p1, k, s, d, ceil):
    span = (size + p0 + p1 - ((k - 1) * d + 1)) / s
    o = int(np.ceil(span) if ceil else np.floor(span)) + 1
    if ceil and (o - 1) * s >= size + p0:  # the last window must start inside the input or its left pad
        o -= 1
    return o


def pool_ref(x, op, k, s, pads, d, ceil, include_pad):
    n, c, h, w = x.shape
    pt, pl, pb, pr = pads
    oh, ow = out_size(h, pt, pb, k[0], s[0], d[0], ceil), out_size(w, pl, pr, k[1], s[1], d[1], ceil)
    x = x.astype(np.float64)
    out = np.empty((n, c, oh, ow))
    for y in range(oh):
        ys = [y * s[0] - pt + i * d[0] for i in range(k[0])]
        for xo in range(ow):
            xs = [xo * s[1] - pl + j * d[1] for j in range(k[1])]
            iy, ix = [v for v in ys if 0 <= v < h], [v for v in xs if 0 <= v < w]
            win = x[:, :, iy][:, :, :, ix]
            if op == "MaxPool":
                out[:, :, y, xo] = win.max(axis=(2, 3))
            else:
                if include_pad:
                    count = sum(-pt <= v < h + pb for v in ys) * sum(-pl <= v < w + pr for v in xs)
                else:
                    count = len(iy) * len(ix)
                out[:, :, y, xo] = win.sum(axis=(2, 3)) / count
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op,shape,k,s,pads,d,ceil,include_pad", CASES)
def test_pool_planes_match_float64(rng, target, op, shape, k, s, pads, d, ceil, include_pad):
    require(onnx is not None, "pip package onnx (scripts/setup.sh)")
    hp = onnx.helper
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    attrs = {"kernel_shape": list(k), "strides": list(s), "pads": [pads[0], pads[1], pads[2], pads[3]],
             "ceil_mode": ceil}
    if op == "MaxPool":
        attrs["dilations"] = list(d)
    else:
        attrs["count_include_pad"] = include_pad
    # ONNX pads are [top, left, bottom, right] = [x1_begin, x2_begin, x1_end, x2_end].
    node = hp.make_node(op, ["x"], ["y"], **attrs)
    g = hp.make_graph([node], "pool", [hp.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(shape))],
                      [hp.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    model = hp.make_model(g, opset_imports=[hp.make_opsetid("", 19)])
    model.ir_version = 9
    want = pool_ref(x, op, k, s, pads, d, ceil, include_pad)
    exe = anvil.compile(anvil.frontend.from_onnx(model), target)
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6 if op == "MaxPool" else 1e-5, atol=1e-6)
    if any(pads) or ceil:
        assert "pool_padded" in exe.imports[0].get_source()

# The tensor IR's intrinsics for the ONNX operator library through te (TVM's names): trig and
# hyperbolic functions, log2/log10, trunc, round (half to even), copysign, isnan/isinf/isfinite
# (bool results) and the bitwise ops, built for "llvm" and "c" with a vectorized split of 37
# elements (vector body and tail both run), compared with numpy. Seed from conftest.rng.
import numpy as np
import pytest

import anvil
from anvil import te, tir

TARGETS = ["llvm", "c"]
N = 37  # 4 * 8 + 5

FLOAT_CASES = [  # (name, numpy reference, input range)
    ("sin", np.sin, (-20, 20)), ("cos", np.cos, (-20, 20)), ("tan", np.tan, (-1.5, 1.5)),
    ("asin", np.arcsin, (-1, 1)), ("acos", np.arccos, (-1, 1)), ("atan", np.arctan, (-50, 50)),
    ("sinh", np.sinh, (-10, 10)), ("cosh", np.cosh, (-10, 10)), ("asinh", np.arcsinh, (-50, 50)),
    ("acosh", np.arccosh, (1, 50)), ("atanh", np.arctanh, (-0.999, 0.999)),
    ("log2", np.log2, (1e-3, 1e3)), ("log10", np.log10, (1e-3, 1e3)), ("trunc", np.trunc, (-100, 100)),
]


def _build(fn, dtype_in, dtype_out, target, name, arity=1):
    ins = [te.placeholder((N,), dtype=dtype_in, name=f"X{k}") for k in range(arity)]
    out = te.compute((N,), lambda i: fn(*[x[i] for x in ins]), name="Y")
    assert out.dtype == dtype_out
    s = te.create_schedule(out.op)
    _, xi = s[out].split(out.op.axis[0], factor=8)
    s[out].vectorize(xi)
    return anvil.build(s, [*ins, out], target=target, name=name)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_intrinsics_match_numpy(target, dtype, rng):
    rtol = 1e-6 if dtype == "float32" else 1e-13
    for name, ref, (lo, hi) in FLOAT_CASES:
        mod = _build(getattr(te, name), dtype, dtype, target, name)
        x = rng.uniform(lo, hi, N).astype(dtype)
        y = np.zeros(N, dtype)
        mod[name](x, y)
        np.testing.assert_allclose(y, ref(x.astype("float64")), rtol=rtol, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("target", TARGETS)
def test_round_is_half_to_even_and_copysign(target, rng):
    assert tir.nearbyint is tir.round
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5] * 5, "float32")[:N]
    y = np.zeros(N, "float32")
    _build(te.round, "float32", "float32", target, "rnd")["rnd"](x, y)
    np.testing.assert_array_equal(y, np.round(x))  # numpy rounds half to even, like ONNX Round
    a = rng.uniform(-3, 3, N).astype("float32")
    b = rng.uniform(-3, 3, N).astype("float32")
    b[4] = -0.0
    c = np.zeros(N, "float32")
    _build(te.copysign, "float32", "float32", target, "cs", arity=2)["cs"](a, b, c)
    np.testing.assert_array_equal(c, np.copysign(a, b))


@pytest.mark.parametrize("target", TARGETS)
def test_classification_gives_bools(target, rng):
    x = rng.uniform(-1e3, 1e3, N).astype("float32")
    x[[0, 5, 9, 33]] = np.nan
    x[[1, 12, 35]] = np.inf
    x[[2, 36]] = -np.inf
    for name, ref in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
        mod = _build(getattr(te, name), "float32", "bool", target, name)
        y = np.zeros(N, "bool")
        mod[name](x, y)
        np.testing.assert_array_equal(y, ref(x), err_msg=name)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["int32", "uint8"])
def test_bitwise_ops_match_numpy(target, dtype, rng):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    k = rng.integers(0, info.bits, N).astype(dtype)  # in-range shift amounts (numpy's are UB past the width)
    cases = [("bitwise_and", np.bitwise_and, b), ("bitwise_or", np.bitwise_or, b),
             ("bitwise_xor", np.bitwise_xor, b), ("shift_left", np.left_shift, k),
             ("shift_right", np.right_shift, k)]
    for name, ref, other in cases:
        y = np.zeros(N, dtype)
        _build(getattr(te, name), dtype, dtype, target, name, arity=2)[name](a, other, y)
        np.testing.assert_array_equal(y, ref(a, other), err_msg=name)
    y = np.zeros(N, dtype)
    _build(te.bitwise_not, dtype, dtype, target, "bnot")["bnot"](a, y)
    np.testing.assert_array_equal(y, np.invert(a))


def test_dtype_errors_name_the_intrinsic():
    i = te.var("i")
    with pytest.raises(TypeError, match="Call sin: arguments must be float, got int32"):
        te.sin(i)
    x = te.var("x", dtype="float32")
    with pytest.raises(TypeError, match="Call shift_left: arguments must be int or uint, got float32"):
        te.shift_left(x, 1)
    assert te.isnan(x).dtype == "bool"
    assert str(tir.log2(x)) == "log2(x)"

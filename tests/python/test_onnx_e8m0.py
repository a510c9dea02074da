"""float8_e8m0fnu (ONNX FLOAT8E8M0, the MX formats' power-of-two scale): Cast to it under each
round_mode and saturate, bit for bit against ONNX Runtime and against the rules written out below
(the Cast text's table); Cast from it against ml_dtypes. onnx's reference evaluator agrees with
both on positive normal float32 inputs only (it keeps inf NaN when saturating, reads a negative as
its magnitude, rounds a float32 subnormal by its mantissa field and, without saturate, rounds
2^127 < x < 2^128 down to 2^127 where the table says NaN), so it is compared there, below 2^127."""
import numpy as np
import pytest

import anvil

onnx = pytest.importorskip("onnx")
ml_dtypes = pytest.importorskip("ml_dtypes")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

E8M0 = TensorProto.FLOAT8E8M0
MIN, MAX = 2.0 ** -127, 2.0 ** 127
MODES = ["up", "down", "nearest"]


def cast_model(src, dst, **attrs):
    node = helper.make_node("Cast", ["x"], ["y"], to=dst, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", src, [None])],
                              [helper.make_tensor_value_info("y", dst, [None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])


def run_anvil(model, x):
    exe = anvil.compile(anvil.frontend.from_onnx(model), target="llvm")
    return anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](anvil.tensor(x)).numpy()


def e8m0_bits(x, mode, saturate):
    """The code the Cast text gives: saturate clamps to [2^-127, 2^127] (NaN stays NaN), otherwise
    what lies outside is NaN (0xFF); inside, 2^e <= x < 2^(e+1) gives e (down), e + 1 unless x is
    2^e (up), e + 1 from 1.5 * 2^e on (nearest)."""
    x = np.asarray(x, np.float32).astype(np.float64)
    if saturate:
        x = np.where(x > MAX, MAX, x)
        x = np.where(x < MIN, MIN, x)
    inside = (x >= MIN) & (x <= MAX)
    m, e = np.frexp(np.where(inside, x, 1.0))  # x = m * 2^e, 0.5 <= m < 1
    frac, e = 2 * m, e - 1
    step = {"down": 0, "up": frac > 1, "nearest": frac >= 1.5}[mode]
    return np.where(inside, e + step + 127, 255).astype(np.uint8)


def special_and_random_floats(seed, n=4000):
    rng = np.random.default_rng(seed)
    f32 = np.finfo(np.float32)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, f32.max, -f32.max, f32.tiny, f32.smallest_subnormal,
               MIN, 1.5 * MIN, np.nextafter(np.float32(1.5 * MIN), 0), np.nextafter(np.float32(MIN), 1), 0.5 * MIN,
               2 * MIN, MAX, 1.5 * MAX, np.nextafter(np.float32(1.5 * MAX), 0), np.nextafter(np.float32(MAX), np.inf),
               1.0, 1.5, 3.0, 0.124, 1.1, -2.0, -1.5, 1e-45, 6e-39]
    ties = [1.5 * 2.0 ** e for e in range(-126, 127, 7)]
    # Random exponents across the whole float32 range (subnormals included), random mantissas, both signs.
    r = rng.uniform(1, 2, n) * np.exp2(rng.integers(-150, 129, n).astype(np.float64))
    r = np.where(rng.random(n) < 0.1, -r, r)
    with np.errstate(over="ignore"):
        return np.concatenate([np.array(special + ties, np.float64), r]).astype(np.float32)


def run_ort_bits(model, x):
    ort = pytest.importorskip("onnxruntime")
    import ctypes
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    io = session.io_binding()
    io.bind_cpu_input("x", x)
    io.bind_output("y")
    session.run_with_iobinding(io)
    out = io.get_outputs()[0]
    ptr = ctypes.cast(out.data_ptr(), ctypes.POINTER(ctypes.c_uint8))
    return np.ctypeslib.as_array(ptr, shape=(x.size,)).copy()


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("mode", MODES)
def test_cast_to_e8m0_matches_the_rules_and_onnxruntime(mode, saturate):
    x = special_and_random_floats(MODES.index(mode) * 2 + saturate)
    model = cast_model(TensorProto.FLOAT, E8M0, round_mode=mode, saturate=saturate)
    got = run_anvil(model, x).view(np.uint8)
    want = e8m0_bits(x, mode, saturate)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(x[i]), int(got[i]), int(want[i])) for i in bad[:8]]
    ort_bits = run_ort_bits(model, x)
    bad = np.nonzero(got != ort_bits)[0]
    assert bad.size == 0, [(float(x[i]), int(got[i]), int(ort_bits[i])) for i in bad[:8]]


@pytest.mark.parametrize("mode", MODES)
def test_cast_float16_to_e8m0_rounds_its_value(mode):
    with np.errstate(over="ignore"):
        x = special_and_random_floats(7).astype(np.float16)  # float16 is exact in float32
    got = run_anvil(cast_model(TensorProto.FLOAT16, E8M0, round_mode=mode), x).view(np.uint8)
    np.testing.assert_array_equal(got, e8m0_bits(x.astype(np.float32), mode, 1))


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("mode", MODES)
def test_cast_to_e8m0_matches_the_onnx_reference_on_positive_normal_floats(mode, saturate):
    rng = np.random.default_rng(11)
    # Exponent fields 1..253 (2^-126 <= x < 2^127), random mantissas, every tie, and 2^127 itself.
    fields = rng.integers(1, 254, 3000, dtype=np.uint32) << 23 | rng.integers(0, 1 << 23, 3000, dtype=np.uint32)
    ties = np.arange(1, 254, dtype=np.uint32) << 23 | 0x400000
    x = np.concatenate([fields, ties, [np.uint32(254 << 23)]]).view(np.float32)
    model = cast_model(TensorProto.FLOAT, E8M0, round_mode=mode, saturate=saturate)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0].view(np.uint8)
    np.testing.assert_array_equal(run_anvil(model, x).view(np.uint8), want)


@pytest.mark.parametrize("to, np_type", [(TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16),
                                         (TensorProto.DOUBLE, np.float64)])
def test_cast_from_e8m0_decodes_every_code_like_ml_dtypes(to, np_type):
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    got = run_anvil(cast_model(E8M0, to), codes)
    with np.errstate(over="ignore"):  # float16: 2^16 and up are inf
        want = codes.astype(np_type)
    np.testing.assert_array_equal(got, want)  # NaN (0xFF) matches NaN


def test_e8m0_arrays_round_trip_through_tensors():
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    t = anvil.tensor(codes)
    assert t.dtype == "float8_e8m0fnu"
    np.testing.assert_array_equal(t.numpy().view(np.uint8), codes.view(np.uint8))

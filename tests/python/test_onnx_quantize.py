# QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear end to end: one-node models (per
# tensor, per axis, blocked with a short last block, optional zero point, output_dtype, precision,
# float16, int8/uint8/int16/uint16 and int32 inputs, float8/float4/int4/int2 outputs and inputs
# (saturate on and off), a symbolic batch, a scale that is a graph
# input) imported by anvil.frontend.from_onnx, compiled for llvm, run on the VM and compared
# exactly with onnx's reference evaluator on random inputs that include halfway cases (round half
# to even) and values beyond the type's range (saturation).
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx as O
    from onnx.reference import ReferenceEvaluator
except ImportError:
    O = None

F32, F16 = "float32", "float16"


def _tp(dtype):
    return O.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _model(op, x, scale, zero, attrs, opset, x_shape=None, scale_input=False):
    h = O.helper
    names = ["x", "s"] + (["z"] if zero is not None else [])
    inputs = [h.make_tensor_value_info("x", _tp(x.dtype), x_shape or list(x.shape))]
    inits = [] if scale_input else [O.numpy_helper.from_array(scale, "s")]
    if scale_input:
        inputs.append(h.make_tensor_value_info("s", _tp(scale.dtype), list(scale.shape)))
    if zero is not None:
        inits.append(O.numpy_helper.from_array(zero, "z"))
    node = h.make_node(op, names, ["y"], **attrs)
    g = h.make_graph([node], "t", inputs, [h.make_tensor_value_info("y", 0, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _run(model, feeds):
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*[feeds[i.name] for i in model.graph.input])
    got = got[0] if isinstance(got, (list, tuple)) else got
    return got.numpy() if hasattr(got, "numpy") else np.asarray(got)


def _quantize_input(rng, shape, scale_b, dtype):
    # Multiples of half the scale (ties of every parity), random values and far-out ones.
    k = rng.integers(-600, 600, shape)
    x = (k * 0.5 * scale_b).astype(dtype)
    flat = x.reshape(-1)
    flat[::3] = rng.uniform(-300, 300, flat[::3].shape) * scale_b.reshape(-1)[0]
    # Beyond every range; in float16 x / scale stays finite (the reference casts an infinite
    # quotient through int32, which is undefined).
    flat[1::7] *= 1e3 if np.dtype(dtype) == np.float32 else 200
    return x


# name: (opset, x shape, x dtype, scale shape, zero point dtype or None, attributes)
Q_CASES = {
    "per_tensor_uint8_opset10": (10, (2, 3, 5), F32, (), np.uint8, {}),
    "per_tensor_int8_1elem_scale": (13, (4, 7), F32, (1,), np.int8, {}),
    "no_zero_point_default_uint8": (13, (3, 9), F32, (), None, {}),
    "per_axis_int8": (13, (2, 4, 3, 2), F32, (4,), np.int8, {"axis": 1}),
    "per_axis_negative_axis_uint8": (13, (3, 5, 6), F32, (6,), np.uint8, {"axis": -1}),
    "per_axis_float16_int16": (21, (5, 6), F16, (5,), np.int16, {"axis": 0}),
    "blocked_remainder_int16": (21, (3, 8), F32, (3, 3), np.int16, {"axis": 1, "block_size": 3}),
    "blocked_axis0_uint16": (21, (6, 4), F32, (2, 4), np.uint16, {"axis": 0, "block_size": 4}),
    "output_dtype_uint16": (21, (4, 5), F32, (), None, {"output_dtype": 4}),
    "output_dtype_int8": (21, (4, 5), F32, (5,), None, {"output_dtype": 3, "axis": 1}),
    "precision_float32_of_float16": (23, (4, 6), F16, (), np.int8, {"precision": 1}),
}


@pytest.mark.parametrize("name", sorted(Q_CASES))
def test_quantize_linear_matches_the_reference(name, rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    opset, shape, dtype, s_shape, zdt, attrs = Q_CASES[name]
    scale = rng.uniform(0.01, 0.2, s_shape).astype(dtype)
    if "block_size" in attrs:
        s_b = np.repeat(scale, attrs["block_size"], axis=attrs["axis"]).take(range(shape[attrs["axis"]]), axis=attrs["axis"])
    elif len(s_shape) == 1 and s_shape[0] > 1:
        dims = [1] * len(shape)
        dims[attrs.get("axis", 1)] = s_shape[0]
        s_b = np.broadcast_to(scale.reshape(dims), shape)
    else:
        s_b = np.broadcast_to(scale.reshape(()) if scale.size == 1 else scale, shape)
    x = _quantize_input(rng, shape, np.ascontiguousarray(s_b), dtype)
    zero = None
    if zdt is not None:
        info = np.iinfo(zdt)
        zero = rng.integers(max(info.min, -50), min(info.max, 50) + 1, s_shape).astype(zdt)
    model = _model("QuantizeLinear", x, scale, zero, attrs, opset)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = _run(model, {"x": x})
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_quantize_linear_symbolic_batch_and_scale_input(rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    scale = rng.uniform(0.05, 0.1, (3,)).astype(np.float32)
    x = _quantize_input(rng, (5, 3, 4), np.broadcast_to(scale.reshape(1, 3, 1), (5, 3, 4)).copy(), F32)
    zero = np.array([-3, 0, 7], np.int8)
    model = _model("QuantizeLinear", x, scale, zero, {"axis": 1}, 13, x_shape=["n", 3, 4], scale_input=True)
    want = ReferenceEvaluator(model).run(None, {"x": x, "s": scale})[0]
    np.testing.assert_array_equal(_run(model, {"x": x, "s": scale}), want)


# name: (opset, x shape, x dtype, scale shape, scale dtype, has zero point, attributes)
DQ_CASES = {
    "per_tensor_uint8_opset10": (10, (2, 3, 5), np.uint8, (), F32, True, {}),
    "per_tensor_int32_no_zero": (10, (4, 6), np.int32, (), F32, False, {}),
    "per_tensor_int32_zero": (21, (4, 6), np.int32, (), F32, True, {}),
    "per_axis_int8": (13, (2, 4, 3), np.int8, (4,), F32, True, {"axis": 1}),
    "per_axis_uint16_float16_scale": (21, (3, 5), np.uint16, (5,), F16, True, {"axis": -1}),
    "blocked_remainder_int16": (21, (7, 4), np.int16, (3, 4), F32, True, {"axis": 0, "block_size": 3}),
    "blocked_no_zero_uint8": (21, (2, 9), np.uint8, (2, 2), F32, False, {"axis": 1, "block_size": 5}),
    "output_dtype_float16": (23, (4, 5), np.int8, (), F32, True, {"output_dtype": 10}),
}


@pytest.mark.parametrize("name", sorted(DQ_CASES))
def test_dequantize_linear_matches_the_reference(name, rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    opset, shape, xdt, s_shape, sdt, has_zero, attrs = DQ_CASES[name]
    info = np.iinfo(xdt)
    lo, hi = max(info.min, -2**20), min(info.max, 2**20)
    x = rng.integers(lo, hi, shape, endpoint=True).astype(xdt)
    x.reshape(-1)[:2] = [info.min, info.max] if xdt != np.int32 else [lo, hi]
    scale = rng.uniform(0.001, 0.5, s_shape).astype(sdt)
    zero = rng.integers(max(lo, -100), min(hi, 100), s_shape, endpoint=True).astype(xdt) if has_zero else None
    model = _model("DequantizeLinear", x, scale, zero, attrs, opset)
    # The reference implements DequantizeLinear from opset 19 (10 and 13 define these forms alike).
    want = ReferenceEvaluator(_model("DequantizeLinear", x, scale, zero, attrs, max(opset, 19))).run(None, {"x": x})[0]
    got = _run(model, {"x": x})
    assert got.dtype == want.dtype and got.shape == want.shape
    # float32 products: the reference rounds once as well (float16 outputs: one cast more).
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6, atol=0)


def test_bad_forms_are_named():
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    x = np.zeros((2, 6), np.float32)
    model = _model("QuantizeLinear", x, np.ones((2, 2, 2), np.float32), None, {"axis": 1}, 13)
    with pytest.raises(ValueError, match="QuantizeLinear.*rank 3.*per-axis"):
        anvil.frontend.from_onnx(model)
    model = _model("QuantizeLinear", x, np.ones((2, 4), np.float32), None, {"axis": 1, "block_size": 4}, 21)
    with pytest.raises(ValueError, match="QuantizeLinear.*4 blocks along axis 1.*make 2"):
        anvil.frontend.from_onnx(model)


@pytest.mark.parametrize("kind", ["mixed", "positive", "negative", "zeros"])
def test_dynamic_quantize_linear_matches_the_reference(kind, rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    h = O.helper
    x = {"mixed": rng.uniform(-3, 5, (4, 7)), "positive": rng.uniform(0.5, 2, (4, 7)),
         "negative": rng.uniform(-9, -1, (4, 7)), "zeros": np.zeros((4, 7))}[kind].astype(np.float32)
    node = h.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    g = h.make_graph([node], "t", [h.make_tensor_value_info("x", O.TensorProto.FLOAT, ["n", 7])],
                     [h.make_tensor_value_info(o, 0, None) for o in ("y", "s", "z")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 11)])
    model.ir_version = 8
    want = ReferenceEvaluator(model).run(None, {"x": x})
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x)]
    for g_, w in zip(got, want):
        assert g_.dtype == w.dtype and g_.shape == w.shape
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-7)
    np.testing.assert_array_equal(got[2], want[2])


LOW_PRECISION = ["FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT4E2M1", "INT4", "UINT4",
                 "INT2", "UINT2"]


# saturate=0 matters for the float8 types only (inf/NaN there), so only they take both values.
LOW_PRECISION_CASES = [(t, s) for t in LOW_PRECISION for s in ([1, 0] if t.startswith("FLOAT8") else [1])]


@pytest.mark.parametrize("type_name,saturate", LOW_PRECISION_CASES)
def test_low_precision_quantize_and_dequantize_match_the_reference(type_name, saturate, rng):
    # QuantizeLinear to a float8/float4/int4/int2 output_dtype (per axis, values past the type's
    # range included), then DequantizeLinear of the result: bit-exact / float32-exact against
    # onnx's reference evaluator.
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    elem = getattr(O.TensorProto, type_name)
    is_float = type_name.startswith("FLOAT")
    scale = rng.uniform(0.05, 0.5, (4,)).astype(np.float32)
    x = (rng.standard_normal((3, 4, 5)) * 4).astype(np.float32)
    x.reshape(-1)[::11] *= 1e4  # past every range
    attrs = {"axis": 1, "output_dtype": elem}
    if is_float:
        attrs["saturate"] = saturate
    q_model = _model("QuantizeLinear", x, scale, None, attrs, 25)
    want_q = ReferenceEvaluator(q_model).run(None, {"x": x})[0]
    got_q = _run(q_model, {"x": x})
    assert got_q.dtype == want_q.dtype and got_q.shape == want_q.shape, (got_q.dtype, want_q.dtype)
    same = got_q.view(np.uint8) == want_q.view(np.uint8)
    if is_float:  # any NaN pattern is NaN
        same |= np.isnan(got_q.astype(np.float32)) & np.isnan(want_q.astype(np.float32))
    assert same.all(), f"{type_name}: {got_q[~same][:5]} vs {want_q[~same][:5]}"
    dq_model = _model("DequantizeLinear", want_q, scale, None, {"axis": 1}, 25)
    want = ReferenceEvaluator(dq_model).run(None, {"x": want_q})[0]
    np.testing.assert_array_equal(_run(dq_model, {"x": want_q}), want)

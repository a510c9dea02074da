"""ONNX models with bfloat16, float8, float4 and 4/2-bit integer tensors: initializers (packed
sub-byte data unpacked at import), graph inputs, Cast with saturate on and off and bfloat16
arithmetic, checked against onnx's reference evaluator (which converts with ml_dtypes)."""
import numpy as np
import pytest

import anvil

onnx = pytest.importorskip("onnx")
ml_dtypes = pytest.importorskip("ml_dtypes")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

FLOAT8 = {
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
}


def run_anvil(model, *inputs):
    exe = anvil.compile(anvil.frontend.from_onnx(model), target="llvm")
    feeds = [anvil.tensor(x) for x in inputs]
    return anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*feeds).numpy()


def model_of(nodes, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def bits(a):
    return np.asarray(a).view(f"uint{8 * np.asarray(a).itemsize}")


@pytest.mark.parametrize("array", [
    np.array([1.5, -448, 0.0625, 3, 0], dtype=ml_dtypes.float8_e4m3fn),
    np.array([[0.25, -57344], [1e-5, 7]], dtype=ml_dtypes.float8_e5m2),
    np.array([1, -8, 7, 3, -1], dtype=ml_dtypes.int4),         # odd count: the last byte half full
    np.array([[1, 15, 7], [3, 0, 9]], dtype=ml_dtypes.uint4),
    np.array([1, -2, 0, -1, 1], dtype=ml_dtypes.int2),
    np.array([0.5, -6, 1.5, 3, 4], dtype=ml_dtypes.float4_e2m1fn),
    np.array([1.5, -3.25e5, 0.0625], dtype=ml_dtypes.bfloat16),
], ids=lambda a: a.dtype.name)
def test_initializers_are_read_and_cast(array):
    w = numpy_helper.from_array(array, "w")
    model = model_of([helper.make_node("Cast", ["w"], ["c"], to=TensorProto.FLOAT), helper.make_node("Add", ["c", "x"], ["y"])],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(array.shape))],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(array.shape))], [w])
    x = np.linspace(-1, 1, array.size, dtype=np.float32).reshape(array.shape)
    np.testing.assert_array_equal(run_anvil(model, x), array.astype(np.float32) + x)


@pytest.mark.parametrize("to", list(FLOAT8), ids=lambda c: TensorProto.DataType.Name(c))
@pytest.mark.parametrize("saturate", [0, 1])
def test_cast_to_float8_matches_the_reference_bit_for_bit(to, saturate):
    rng = np.random.default_rng(to * 2 + saturate)
    x = np.concatenate([
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e9, -1e9, 448, 464, 465, 240, 248, 57344, 61440, 1e-9],
                 dtype=np.float32),
        (rng.standard_normal(500) * np.exp2(rng.uniform(-20, 18, 500))).astype(np.float32),
    ])
    model = model_of([helper.make_node("Cast", ["x"], ["y"], to=to, saturate=saturate)],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
                     [helper.make_tensor_value_info("y", to, [x.size])])
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = run_anvil(model, x)
    assert got.dtype == want.dtype
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    np.testing.assert_array_equal(bits(got)[~nan], bits(want)[~nan])


def test_float8_input_casts_to_float16_and_bfloat16_arithmetic_rounds_once_per_op():
    x = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e5m2)
    model = model_of([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT8E5M2, [256])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [256])])
    np.testing.assert_array_equal(run_anvil(model, x), x.astype(np.float16))

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((4, 33)).astype(ml_dtypes.bfloat16) for _ in range(2))
    model = model_of([helper.make_node("Mul", ["a", "b"], ["m"]), helper.make_node("Add", ["m", "a"], ["y"])],
                     [helper.make_tensor_value_info(n, TensorProto.BFLOAT16, [4, 33]) for n in "ab"],
                     [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [4, 33])])
    want = ((a.astype(np.float32) * b.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
            + a.astype(np.float32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(bits(run_anvil(model, a, b)), bits(want))

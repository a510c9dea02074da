# Small ONNX models compiled for target "vulkan" through the operator library's gpu rows
# (src/anvil/ops/gpu/), run on the machine's Vulkan device (lavapipe here and in CI) against
# numpy in float64: elementwise with broadcasting, a symbolic batch, softmax, layer norm, long
# reductions, pooling, conv2d with a fused epilogue. Fixed, printed seed.
import numpy as np
import onnx
import pytest

import anvil

SEED = 20261207
hp = onnx.helper


def _vulkan_or_skip():
    dev = anvil.vulkan(0)
    if not dev.exist:
        # scripts/setup.sh installs lavapipe, so under CI=true this must not pass by skipping.
        import os

        if os.environ.get("CI") == "true":
            pytest.fail("no Vulkan device under CI=true (scripts/setup.sh installs mesa-vulkan-drivers)")
        pytest.skip("no Vulkan device (scripts/setup.sh installs mesa-vulkan-drivers: lavapipe)")
    return dev


def _model(nodes, inputs, output, out_shape, inits=()):
    g = hp.make_graph(nodes, "m", [hp.make_tensor_value_info(n, onnx.TensorProto.FLOAT, s) for n, s in inputs],
                      [hp.make_tensor_value_info(output, onnx.TensorProto.FLOAT, out_shape)],
                      initializer=[onnx.numpy_helper.from_array(v, k) for k, v in inits])
    m = hp.make_model(g, opset_imports=[hp.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _run(model, *xs):
    dev = _vulkan_or_skip()
    exe = anvil.compile(anvil.frontend.from_onnx(model), "vulkan")
    vm = anvil.runtime.VirtualMachine(exe, dev)
    out = vm["main"](*[anvil.tensor(x, device=dev) for x in xs])
    return out.numpy()


@pytest.fixture
def rng():
    print(f"seed {SEED}")
    return np.random.default_rng(SEED)


@pytest.mark.parametrize("rows", [1, 37, 300])
def test_broadcast_elementwise_chain_symbolic_batch(rng, rows):
    b = rng.uniform(-1, 1, (70,)).astype(np.float32)
    m = _model([hp.make_node("Sub", ["x", "b"], ["t"]), hp.make_node("Exp", ["t"], ["u"]),
                hp.make_node("Mul", ["u", "x"], ["y"])], [("x", ["n", 70])], "y", ["n", 70], [("b", b)])
    x = rng.uniform(-1, 1, (rows, 70)).astype(np.float32)
    want = np.exp(x.astype(np.float64) - b) * x
    np.testing.assert_allclose(_run(m, x), want, rtol=1e-5, atol=1e-6)


def test_softmax_and_layer_norm_rows(rng):
    x = rng.uniform(-3, 3, (130, 33)).astype(np.float32)
    m = _model([hp.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", [130, 33])], "y", [130, 33])
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(-1, keepdims=True))
    np.testing.assert_allclose(_run(m, x), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    g = rng.uniform(0.5, 1.5, (33,)).astype(np.float32)
    bb = rng.uniform(-1, 1, (33,)).astype(np.float32)
    m = _model([hp.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
               [("x", [130, 33])], "y", [130, 33], [("g", g), ("b", bb)])
    mu = xd.mean(-1, keepdims=True)
    want = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * g + bb
    np.testing.assert_allclose(_run(m, x), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("k", [50, 1000])
def test_reduce_sum_and_max_innermost(rng, k):
    x = rng.uniform(-1, 1, (6, k)).astype(np.float32)
    m = _model([hp.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)], [("x", [6, k])], "y", [6],
               [("axes", np.array([1], np.int64))])
    np.testing.assert_allclose(_run(m, x), x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
    m = _model([hp.make_node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=1)], [("x", [6, k])], "y", [6, 1])
    np.testing.assert_allclose(_run(m, x), x.max(1, keepdims=True), rtol=0, atol=0)


def test_max_pool_and_conv_relu(rng):
    x = rng.uniform(-1, 1, (2, 3, 9, 9)).astype(np.float32)
    m = _model([hp.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2])], [("x", [2, 3, 9, 9])],
               "y", [2, 3, 4, 4])
    want = np.stack([[[[x[n, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max() for j in range(4)] for i in range(4)]
                      for c in range(3)] for n in range(2)])
    np.testing.assert_allclose(_run(m, x), want, rtol=0, atol=0)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (4,)).astype(np.float32)
    m = _model([hp.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                hp.make_node("Relu", ["c"], ["y"])], [("x", [2, 3, 9, 9])], "y", [2, 4, 9, 9], [("w", w), ("b", b)])
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((2, 4, 9, 9))
    for ry in range(3):
        for rx in range(3):
            ref += np.einsum("nchw,oc->nohw", xp[:, :, ry:ry + 9, rx:rx + 9], w[:, :, ry, rx])
    want = np.maximum(ref + b[None, :, None, None], 0)
    np.testing.assert_allclose(_run(m, x), want, rtol=1e-5, atol=1e-5)

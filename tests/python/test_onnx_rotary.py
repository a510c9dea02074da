# RotaryEmbedding (opset 23) against onnx's reference evaluator on random inputs: 4-d [B, H, S, D]
# and 3-d [B, S, H*D] inputs, interleaved or halves, a partial rotary_embedding_dim, position_ids
# as a graph input or absent (caches per batch and position), symbolic batch and sequence, float16.
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx as O
    from onnx.reference import ReferenceEvaluator
except ImportError:
    O = None

CASES = {
    # name: (x shape, x dims in the model, interleaved, rotary dim, num_heads, position ids, dtype)
    "4d_halves": ((2, 3, 5, 8), None, 0, 0, 0, True, np.float32),
    "4d_interleaved_symbolic": ((2, 3, 5, 8), ["b", 3, "s", 8], 1, 0, 0, True, np.float32),
    "4d_partial_dim": ((1, 2, 4, 12), None, 0, 6, 0, True, np.float32),
    "4d_interleaved_partial_no_ids": ((2, 2, 3, 10), None, 1, 4, 0, False, np.float32),
    "3d_halves": ((2, 6, 16), None, 0, 0, 4, True, np.float32),
    "3d_interleaved_partial_symbolic": ((3, 5, 24), ["b", "s", 24], 1, 4, 2, True, np.float32),
    "3d_no_ids_float16": ((2, 4, 12), None, 0, 0, 3, False, np.float16),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rotary_embedding_matches_the_reference(name, rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    shape, dims, interleaved, rot, heads, with_ids, dt = CASES[name]
    h, T = O.helper, O.TensorProto
    d = shape[-1] if len(shape) == 4 else shape[-1] // heads
    half = (rot or d) // 2
    b, s = shape[0], (shape[2] if len(shape) == 4 else shape[1])
    x = rng.uniform(-2, 2, shape).astype(dt)
    et = h.np_dtype_to_tensor_dtype(np.dtype(dt))
    if with_ids:
        max_pos = 11
        cache_shape, cache_dims = (max_pos, half), [max_pos, half]
        ids = rng.integers(0, max_pos, (b, s)).astype(np.int64)
    else:
        cache_shape = (b, s, half)
        cache_dims = ["b", "s", half] if dims else list(cache_shape)
    angles = rng.uniform(0, 6.3, cache_shape)
    cos, sin = np.cos(angles).astype(dt), np.sin(angles).astype(dt)
    inputs = [h.make_tensor_value_info("x", et, dims or list(shape)), h.make_tensor_value_info("cos", et, cache_dims),
              h.make_tensor_value_info("sin", et, cache_dims)]
    names = ["x", "cos", "sin"]
    feeds = {"x": x, "cos": cos, "sin": sin}
    if with_ids:
        inputs.append(h.make_tensor_value_info("ids", T.INT64, ["b", "s"] if dims else [b, s]))
        names.append("ids")
        feeds["ids"] = ids
    attrs = {"interleaved": interleaved, "rotary_embedding_dim": rot}
    if heads:
        attrs["num_heads"] = heads
    node = h.make_node("RotaryEmbedding", names, ["y"], **attrs)
    g = h.make_graph([node], "t", inputs, [h.make_tensor_value_info("y", et, None)])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 23)])
    model.ir_version = 10
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*[feeds[n] for n in names])
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-6 if dt == np.float32 else 2e-3
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)

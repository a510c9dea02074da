# The ONNX Attention operator (opset 23/24) end to end: models built with onnx.helper, imported by
# anvil.frontend.from_onnx, compiled for llvm, run on the VM and compared with a numpy float64
# reference of the operator's definition on random inputs (seed SEED): 3-d and 4-d inputs, GQA,
# past key/value with the present outputs, a bool or float mask (one shorter than the total
# length, also a symbolic one), is_causal, softcap, scale, nonpad_kv_seqlen, each
# qk_matmul_output_mode, a symbolic batch. LinearAttention (opset 27): the four update rules, GQA
# and MQA, per-key and per-head decay, per-head and scalar beta, past_state, scale, float16.
import numpy as np
import pytest

import anvil
from conftest import SEED, require

try:
    import onnx as O
except ImportError:
    O = None


def _reference(q, k, v, mask=None, past_k=None, past_v=None, nonpad=None, q_heads=None, kv_heads=None,
               scale=None, softcap=0.0, is_causal=False, mode=0):
    """Y, present_key, present_value, qk_matmul_output in float64, as the operator defines them."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    three_d = q.ndim == 3
    if three_d:
        b, s = q.shape[:2]
        q = q.reshape(b, s, q_heads, -1).transpose(0, 2, 1, 3)
        k = k.reshape(b, k.shape[1], kv_heads, -1).transpose(0, 2, 1, 3)
        v = v.reshape(b, v.shape[1], kv_heads, -1).transpose(0, 2, 1, 3)
    past = 0
    if past_k is not None:
        past = past_k.shape[2]
        k = np.concatenate([past_k.astype(np.float64), k], axis=2)
        v = np.concatenate([past_v.astype(np.float64), v], axis=2)
    present_k, present_v = k, v
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    qk = q @ k.transpose(0, 1, 3, 2) * scale
    stages = [qk]
    if softcap > 0:
        qk = softcap * np.tanh(qk / softcap)
    stages.append(qk)
    total = k.shape[2]
    bias = np.zeros(qk.shape[-2:])
    if mask is not None:
        m = np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask.astype(np.float64)
        pad = total - m.shape[-1]
        if pad > 0:
            m = np.concatenate([m, np.full(m.shape[:-1] + (pad,), -np.inf)], axis=-1)
        bias = bias + m
    if is_causal:
        rows, cols = np.arange(q.shape[2])[:, None] + past, np.arange(total)[None, :]
        bias = bias + np.where(rows < cols, -np.inf, 0.0)
    if nonpad is not None:
        keep = np.arange(total)[None, :] < nonpad[:, None]
        bias = bias + np.where(keep, 0.0, -np.inf)[:, None, None, :]
    qk = qk + bias
    stages.append(qk)
    e = np.exp(qk - qk.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    stages.append(p)
    y = p @ v
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return y, present_k, present_v, stages[mode]


def _run(inputs, outputs, attrs, opset=23, symbolic_batch=True, symbolic_kv=False):
    """Attention over `inputs` (name -> array or None for an omitted input) on anvil."""
    h, T = O.helper, O.TensorProto
    names = ["Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"]
    given = [n if inputs.get(n) is not None else "" for n in names]
    while given and not given[-1]:
        given.pop()
    infos = []
    for n in given:
        if not n:
            continue
        a = inputs[n]
        shape = list(a.shape)
        if symbolic_batch and n in ("Q", "K", "V", "past_key", "past_value"):
            shape[0] = "batch"
        if symbolic_kv and n in ("K", "V"):
            shape[-2] = "kv_len"
        infos.append(h.make_tensor_value_info(n, O.helper.np_dtype_to_tensor_dtype(a.dtype), shape))
    outs = [h.make_tensor_value_info(o, T.FLOAT, None) if o else "" for o in outputs]
    node = h.make_node("Attention", given, list(outputs), **attrs)
    g = h.make_graph([node], "t", infos, [o for o in outs if o])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 10
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*[inputs[n] for n in given if n])
    got = got if isinstance(got, (list, tuple)) else [got]
    return [g.numpy() if hasattr(g, "numpy") else np.asarray(g) for g in got]


CASES = {
    # name: (shapes and inputs, attributes, outputs)
    "4d_gqa_past_causal_bool_mask_qk_softmax": dict(
        q=(2, 6, 3, 8), k=(2, 2, 5, 8), v=(2, 2, 5, 4), past=7, mask=("bool", (3, 12)),
        attrs=dict(is_causal=1, qk_matmul_output_mode=3), outputs=["Y", "present_key", "present_value", "qk"]),
    "3d_gqa_softcap_scale_short_float_mask": dict(
        q=(2, 4, 24), k=(2, 6, 8), v=(2, 6, 20), mask=("float", (4, 4)),
        attrs=dict(q_num_heads=6, kv_num_heads=2, softcap=1.5, scale=0.3, qk_matmul_output_mode=1),
        outputs=["Y", "", "", "qk"]),
    "3d_past_mask_bias_mode2": dict(
        q=(1, 3, 16), k=(1, 3, 16), v=(1, 3, 8), past=2, mask=("float", (1, 2, 3, 5)),
        attrs=dict(q_num_heads=2, kv_num_heads=2, qk_matmul_output_mode=2),
        outputs=["Y", "present_key", "present_value", "qk"]),
    # The mask covers 3 of kv_len columns (kv_len symbolic): the rest masked, none when kv_len = 3.
    "4d_short_mask_symbolic_kv_len_5": dict(
        q=(1, 2, 3, 8), k=(1, 2, 5, 8), v=(1, 2, 5, 8), mask=("float", (3, 3)), symbolic_kv=True,
        attrs=dict(), outputs=["Y"]),
    "4d_short_mask_symbolic_kv_len_3": dict(
        q=(1, 2, 3, 8), k=(1, 2, 3, 8), v=(1, 2, 3, 8), mask=("float", (3, 3)), symbolic_kv=True,
        attrs=dict(), outputs=["Y"]),
    "4d_nonpad_kv_seqlen_opset24": dict(
        q=(2, 3, 4, 8), k=(2, 3, 6, 8), v=(2, 3, 6, 10), nonpad=[4, 6], opset=24,
        attrs=dict(), outputs=["Y"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_attention_matches_numpy(name):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    c = CASES[name]
    rng = np.random.default_rng([SEED, list(CASES).index(name)])
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    inputs = {"Q": f(*c["q"]), "K": f(*c["k"]), "V": f(*c["v"])}
    four_d = len(c["q"]) == 4
    kv_heads = c["k"][1] if four_d else c["attrs"]["kv_num_heads"]
    if "past" in c:
        b = c["q"][0]
        hk = c["k"][3] if four_d else c["k"][2] // kv_heads
        hv = c["v"][3] if four_d else c["v"][2] // kv_heads
        inputs["past_key"], inputs["past_value"] = f(b, kv_heads, c["past"], hk), f(b, kv_heads, c["past"], hv)
    if "mask" in c:
        kind, shape = c["mask"]
        inputs["attn_mask"] = rng.uniform(size=shape) > 0.3 if kind == "bool" else f(*shape)
        if kind == "bool":
            inputs["attn_mask"][..., 0] = True  # no fully masked row (a NaN row)
    if "nonpad" in c:
        inputs["nonpad_kv_seqlen"] = np.array(c["nonpad"], dtype=np.int64)
    got = _run(inputs, c["outputs"], c["attrs"], opset=c.get("opset", 23), symbolic_kv=c.get("symbolic_kv", False))
    want = _reference(inputs["Q"], inputs["K"], inputs["V"], inputs.get("attn_mask"), inputs.get("past_key"),
                      inputs.get("past_value"), inputs.get("nonpad_kv_seqlen"), c["attrs"].get("q_num_heads"),
                      c["attrs"].get("kv_num_heads"), c["attrs"].get("scale"), c["attrs"].get("softcap", 0.0),
                      bool(c["attrs"].get("is_causal", 0)), c["attrs"].get("qk_matmul_output_mode", 0))
    wanted = [w for w, o in zip(want, c["outputs"] + [""] * 4) if o]
    assert len(got) == len(wanted), f"{name}: {len(got)} outputs, expected {len(wanted)}"
    for i, (g, w) in enumerate(zip(got, wanted)):
        assert g.shape == w.shape, f"{name} output {i} (seed {SEED}): shape {g.shape}, expected {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{name} output {i} (seed {SEED})")


def _linear_reference(q, k, v, past, decay, beta, hq, hkv, rule, scale):
    """LinearAttention's recurrence token by token in float64: output [B, T, Hq*dv], the state."""
    b, steps = q.shape[:2]
    q = q.astype(np.float64).reshape(b, steps, hq, -1)
    k = k.astype(np.float64).reshape(b, steps, hkv, -1)
    v = v.astype(np.float64).reshape(b, steps, hkv, -1)
    dk, dv, g = q.shape[-1], v.shape[-1], hq // hkv
    s = np.zeros((b, hkv, dk, dv)) if past is None else past.astype(np.float64)
    scale = scale or 1 / np.sqrt(dk)
    out = []
    for t in range(steps):
        if rule in ("gated", "gated_delta"):
            s = s * np.exp(decay[:, t].astype(np.float64).reshape(b, hkv, -1))[..., None]
        if rule in ("delta", "gated_delta"):
            read = np.einsum("bhk,bhkv->bhv", k[:, t], s)
            write = beta[:, t].astype(np.float64).reshape(b, -1, 1) * (v[:, t] - read)
        else:
            write = v[:, t]
        s = s + k[:, t][..., None] * write[:, :, None, :]
        qt = q[:, t].reshape(b, hkv, g, dk)
        out.append(scale * np.einsum("bhgk,bhkv->bhgv", qt, s).reshape(b, hq * dv))
    return np.stack(out, axis=1), s


LINEAR = {
    # name: (update_rule, q_num_heads, kv_num_heads, d_k, d_v, T, decay width per kv head (0: none),
    #        beta width (0: none), past_state, scale, dtype)
    "linear_past": ("linear", 2, 2, 4, 3, 5, 0, 0, True, 0.0, np.float32),
    "gated_per_key_gqa": ("gated", 4, 2, 4, 6, 3, 4, 0, False, 0.0, np.float32),
    "delta_scalar_beta_scale": ("delta", 2, 2, 5, 4, 4, 0, 1, True, 0.5, np.float32),
    "gated_delta_per_head_decay_mqa": ("gated_delta", 4, 1, 4, 4, 6, 1, 1, False, 0.0, np.float32),
    "gated_delta_float16_decode": ("gated_delta", 2, 2, 8, 8, 1, 8, 2, True, 0.0, np.float16),
}


@pytest.mark.parametrize("name", list(LINEAR))
def test_linear_attention_matches_numpy(name):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    rule, hq, hkv, dk, dv, steps, dw, bw, with_past, scale, dtype = LINEAR[name]
    rng = np.random.default_rng([SEED, 100 + list(LINEAR).index(name)])
    b = 2
    f = lambda *s, lo=-1, hi=1: rng.uniform(lo, hi, s).astype(dtype)  # noqa: E731
    k = f(b, steps, hkv, dk).astype(np.float64)
    k = (k / np.linalg.norm(k, axis=-1, keepdims=True)).reshape(b, steps, hkv * dk).astype(dtype)  # delta: L2 rows
    inputs = {"query": f(b, steps, hq * dk), "key": k, "value": f(b, steps, hkv * dv)}
    if with_past:
        inputs["past_state"] = f(b, hkv, dk, dv)
    if dw:
        inputs["decay"] = f(b, steps, hkv * dw, lo=-1, hi=0)
    if bw:
        inputs["beta"] = f(b, steps, hkv if bw == 2 else 1, lo=0, hi=1)
    h, T = O.helper, O.TensorProto
    names = ["query", "key", "value", "past_state", "decay", "beta"]
    given = [n if n in inputs else "" for n in names]
    while not given[-1]:
        given.pop()
    et = O.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    infos = [h.make_tensor_value_info(n, et, ["batch"] + list(inputs[n].shape[1:])) for n in given if n]
    attrs = dict(update_rule=rule, q_num_heads=hq, kv_num_heads=hkv)
    if scale:
        attrs["scale"] = scale
    node = h.make_node("LinearAttention", given, ["output", "present_state"], **attrs)
    g = h.make_graph([node], "t", infos, [h.make_tensor_value_info(o, et, None) for o in ("output", "present_state")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 27)])
    model.ir_version = 10
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*[inputs[n] for n in given if n])
    got = [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in got]
    want = _linear_reference(inputs["query"], inputs["key"], inputs["value"], inputs.get("past_state"),
                             inputs.get("decay"), inputs.get("beta"), hq, hkv, rule, scale)
    tol = 1e-5 if dtype == np.float32 else 2e-3
    for i, (o, w) in enumerate(zip(got, want)):
        assert o.dtype == dtype and o.shape == w.shape, f"{name} output {i}: {o.dtype} {o.shape}, expected {w.shape}"
        np.testing.assert_allclose(o.astype(np.float64), w, rtol=tol, atol=tol, err_msg=f"{name} output {i} (seed {SEED})")


@pytest.mark.parametrize("total", [7, 4])
def test_function_body_pads_the_mask_to_a_symbolic_total_length(total):
    # Attention's function body: Pad(mask, [0, T - L], -inf, axes=[-1]) with T a symbolic dim
    # (the importer pads by amounts known only as dims; 0 when T == L).
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    h, T = O.helper, O.TensorProto
    nodes = [h.make_node("Shape", ["k"], ["total"], start=-2, end=-1), h.make_node("Shape", ["mask"], ["len"], start=-1),
             h.make_node("Sub", ["total", "len"], ["missing"]), h.make_node("Concat", ["zero", "missing"], ["pads"], axis=0),
             h.make_node("Pad", ["mask", "pads", "neg_inf", "last"], ["y"])]
    inits = [O.numpy_helper.from_array(np.array([0], np.int64), "zero"),
             O.numpy_helper.from_array(np.array([-1], np.int64), "last"),
             O.numpy_helper.from_array(np.array(-np.inf, np.float32), "neg_inf")]
    g = h.make_graph(nodes, "t", [h.make_tensor_value_info("mask", T.FLOAT, [3, "L"]),
                                  h.make_tensor_value_info("k", T.FLOAT, [1, "T", 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], initializer=inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 8
    rng = np.random.default_rng([SEED, 200 + total])
    mask, k = rng.uniform(-1, 1, (3, 4)).astype(np.float32), np.zeros((1, total, 8), np.float32)
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](mask, k)
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    want = np.concatenate([mask, np.full((3, total - 4), -np.inf, np.float32)], axis=1)
    np.testing.assert_array_equal(got, want)

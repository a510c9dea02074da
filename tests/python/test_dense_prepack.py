# Dense layers with a constant weight (issue 12): ONNX MatMul / Gemm(transB) with an initializer
# weight are compiled with the weight packed once at compile time (prepack_weights:
# nn.dense(x, nn.dense_pack_weight(w), weight_layout="packed") folded to a constant in the
# GEMM's [N/nr, K, nr] panels), so no kernel packs B per call; 1..8 static rows take the GEMV-like
# schedule ("gemv" in the TIR), more or symbolic rows the GEMM on the panels ("gemm_panels").
# Checked against numpy float64 on fresh random inputs: |got - ref| <= 1e-5 * (|x|·|W|) + 1e-6
# (float32 rounding of K-term sums, K <= 4096, is well inside it).
import os
import pathlib

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import anvil  # noqa: E402

h = onnx.helper
RTOL = 1e-5


def _model(op, m, n, k, w, bias=None, lead=()):
    node = h.make_node("MatMul", ["x", "w"], ["y"]) if op == "matmul" else \
        h.make_node("Gemm", ["x", "w"] + (["b"] if bias is not None else []), ["y"], transB=1)
    inits = [onnx.numpy_helper.from_array(w, "w")]
    if bias is not None:
        inits.append(onnx.numpy_helper.from_array(bias, "b"))
    nodes = [node]
    out = "y"
    if bias is not None:
        nodes.append(h.make_node("Relu", ["y"], ["r"]))
        out = "r"
    g = h.make_graph(nodes, op, [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [*lead, m, k])],
                     [h.make_tensor_value_info(out, onnx.TensorProto.FLOAT, [*lead, m, n])], initializer=inits)
    md = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    md.ir_version = 8
    return md


def _compile(md, tmp_path):
    dump = tmp_path / "ir"
    exe = anvil.compile(anvil.frontend.from_onnx(md), "llvm", dump_ir=str(dump))
    tir = "\n".join(p.read_text() for p in sorted((dump / "tir").glob("*.tir")))
    graph = (dump / "graph.optimized.txt").read_text()
    return anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"], graph, tir


def _check(got, x, wk, bias=None):
    ref = x.astype(np.float64) @ wk
    scale = np.abs(x).astype(np.float64) @ np.abs(wk)
    if bias is not None:
        ref = np.maximum(ref + bias.astype(np.float64), 0)
        scale = scale + np.abs(bias)
    err = np.abs(got.astype(np.float64) - ref)
    assert np.all(err <= RTOL * scale + 1e-6), float(np.max(err / (scale + 1e-30)))


# (M, N, K): tiles of 32 (AVX-512) or 16 columns, 128-deep k blocks: dividing and not.
SHAPES = [(1, 384, 384), (1, 33, 7), (3, 100, 129), (8, 64, 256), (5, 1000, 70), (8, 17, 300), (128, 96, 384),
          (37, 45, 300)]


@pytest.mark.parametrize("op", ["matmul", "gemm"])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_constant_weight_is_packed_at_compile_time(op, m, n, k, tmp_path):
    rng = np.random.default_rng(m * 7919 + n * 31 + k)
    w = rng.uniform(-1, 1, size=(k, n) if op == "matmul" else (n, k)).astype(np.float32)
    fn, graph, tir = _compile(_model(op, m, n, k, w), tmp_path)
    assert 'weight_layout="packed"' in graph and "dense_pack_weight" not in graph  # folded
    assert "B_packed" not in tir
    assert ("gemv" in tir) == (m <= 8)
    wk = w.astype(np.float64) if op == "matmul" else w.astype(np.float64).T
    for _ in range(2):  # fresh inputs each call, the same packed weight
        x = rng.uniform(-1, 1, size=(m, k)).astype(np.float32)
        _check(fn(x).numpy(), x, wk)


@pytest.mark.parametrize("op", ["matmul", "gemm"])
def test_symbolic_rows_on_packed_weight(op, tmp_path):
    n, k = 70, 300
    rng = np.random.default_rng(20261202)
    w = rng.uniform(-1, 1, size=(k, n) if op == "matmul" else (n, k)).astype(np.float32)
    fn, graph, tir = _compile(_model(op, "M", n, k, w), tmp_path)
    assert 'weight_layout="packed"' in graph and "B_packed" not in tir and "gemm_panels" in tir
    wk = w.astype(np.float64) if op == "matmul" else w.astype(np.float64).T
    for m in [1, 5, 8, 33, 130]:
        x = rng.uniform(-1, 1, size=(m, k)).astype(np.float32)
        _check(fn(x).numpy(), x, wk)


def test_batched_symbolic_matmul_with_constant_weight(tmp_path):
    # [B, S, K] @ [K, N], B and S symbolic (an encoder's linear layer): one GEMM over B*S rows.
    n, k = 96, 160
    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, size=(k, n)).astype(np.float32)
    fn, graph, tir = _compile(_model("matmul", "S", n, k, w, lead=("B",)), tmp_path)
    assert 'weight_layout="packed"' in graph and "B_packed" not in tir
    for b, s in [(1, 1), (2, 7), (3, 50)]:
        x = rng.uniform(-1, 1, size=(b, s, k)).astype(np.float32)
        got = fn(x).numpy()
        _check(got.reshape(b * s, n), x.reshape(b * s, k), w.astype(np.float64))


@pytest.mark.parametrize("m", [1, 8, 64])
def test_gemm_bias_relu_epilogue_on_packed_weight(m, tmp_path):
    n, k = 200, 130
    rng = np.random.default_rng(m)
    w = rng.uniform(-1, 1, size=(n, k)).astype(np.float32)
    bias = rng.uniform(-1, 1, size=(n,)).astype(np.float32)
    fn, graph, tir = _compile(_model("gemm", m, n, k, w, bias=bias), tmp_path)
    assert "B_packed" not in tir
    x = rng.uniform(-1, 1, size=(m, k)).astype(np.float32)
    _check(fn(x).numpy(), x, w.astype(np.float64).T, bias)


def test_non_constant_weight_is_not_prepacked(tmp_path):
    # B a graph input: nothing to fold, the kernel keeps its own packing.
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                     [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [16, 40]),
                      h.make_tensor_value_info("w", onnx.TensorProto.FLOAT, [40, 24])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [16, 24])])
    md = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    md.ir_version = 8
    dump = tmp_path / "ir"
    exe = anvil.compile(anvil.frontend.from_onnx(md), "llvm", dump_ir=str(dump))
    assert "packed" not in (dump / "graph.optimized.txt").read_text()
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(16, 40)).astype(np.float32)
    w = rng.uniform(-1, 1, size=(40, 24)).astype(np.float32)
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](x, w).numpy()
    _check(got, x, w.astype(np.float64))

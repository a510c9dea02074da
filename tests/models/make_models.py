#!/usr/bin/env python3
"""Builds the model tests' ONNX models with seeded random weights, laid out as torch.onnx exports
them (issue 11, item 10): ResNet-18 (BatchNorm folded into Conv biases), MobileNetV2 (depthwise
convolutions, ReLU6 as Clip, a few BatchNormalization nodes left for a fold pass) and a MiniLM-L6
style encoder (the opset-14 LayerNorm, GELU and attention sub-graphs torch writes). Every model
has a symbolic batch dimension "batch"; the encoder's sequence is "sequence" too.

    python3 tests/models/make_models.py OUTDIR [--models resnet18,...] [--verify]

`--verify` runs onnx.checker and ONNX Runtime at batch 1 and 4 on random inputs and prints the
output spread. The weights come from fixed seeds, so the files are the same byte for byte on
every run. As a module: build(name) -> ModelProto, save(name, outdir) -> path,
random_inputs(name, batch, rng) -> {input name: array}.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from onnx_builder import FLOAT, INT64, GraphBuilder, check  # noqa: E402

SEEDS = {"resnet18": 1801, "mobilenetv2": 2002, "minilm": 606}


# -- ResNet-18 (torchvision layout) --------------------------------------------------------------
def resnet18(seed=SEEDS["resnet18"]):
    g = GraphBuilder(seed)
    x = g.input("input", FLOAT, ["batch", 3, 224, 224])
    x = g.node("Relu", [g.conv(x, "conv1", 3, 64, 7, stride=2, pad=3)], "/relu")
    x = g.node("MaxPool", [x], "/maxpool", ceil_mode=0, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512], start=1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            p = f"layer{stage}.{block}"
            y = g.node("Relu", [g.conv(x, f"{p}.conv1", cin, cout, 3, stride)], f"/layer{stage}/{p}/relu")
            # The branch's last conv starts small, as a trained residual branch is, so the sum
            # of eight blocks does not grow without bound.
            y = g.conv(y, f"{p}.conv2", cout, cout, 3, gain=0.5)
            short = x if stride == 1 and cin == cout else g.conv(x, f"{p}.downsample.0", cin, cout, 1, stride, gain=1.0)
            x = g.node("Relu", [g.node("Add", [y, short], f"/layer{stage}/{p}")], f"/layer{stage}/{p}/relu_1")
            cin = cout
    x = g.node("GlobalAveragePool", [x], "/avgpool")
    x = g.node("Flatten", [x], "", axis=1)
    g.gemm(x, "fc", 512, 1000)
    g.output("output", FLOAT, ["batch", 1000])
    return g.model("torch_jit", 13, "ResNet-18, random weights, BatchNorm folded (torch.onnx layout)")


# -- MobileNetV2 (torchvision layout) ------------------------------------------------------------
def _relu6(g, x, scope):
    lo = g.constant(scope, 0.0, np.float32)
    hi = g.constant(scope, 6.0, np.float32)
    return g.node("Clip", [x, lo, hi], scope)


def _conv_bn_relu6(g, x, prefix, cin, cout, k, stride=1, group=1, unfolded=False, act=True):
    """features.N: Conv, BatchNorm, ReLU6; `unfolded` keeps the BatchNormalization node."""
    gain = 2.0 if act else 1.0
    if unfolded:
        x = g.conv(x, f"{prefix}.0", cin, cout, k, stride, group=group, gain=gain, bias=False)
        x = g.batch_norm(x, f"{prefix}.1", cout)
    else:
        x = g.conv(x, f"{prefix}.0", cin, cout, k, stride, group=group, gain=gain)
    return _relu6(g, x, "/" + prefix.replace(".", "/") + "/2") if act else x


def mobilenetv2(seed=SEEDS["mobilenetv2"]):
    g = GraphBuilder(seed)
    x = g.input("input", FLOAT, ["batch", 3, 224, 224])
    x = _conv_bn_relu6(g, x, "features.0", 3, 32, 3, 2, unfolded=True)
    cin, index = 32, 1
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                (6, 320, 1, 1)]
    for t, c, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            p = f"features.{index}.conv"
            # The 64-channel stage keeps its BatchNorms unfolded: a fold pass has work to do.
            unfolded = c == 64
            y, j = x, 0
            if t != 1:
                y = _conv_bn_relu6(g, y, f"{p}.{j}", cin, hidden, 1, unfolded=unfolded)
                j += 1
            y = _conv_bn_relu6(g, y, f"{p}.{j}", hidden, hidden, 3, stride, group=hidden, unfolded=unfolded)
            residual = stride == 1 and cin == c
            y = g.conv(y, f"{p}.{j + 1}", hidden, c, 1, gain=0.5 if residual else 1.0, bias=not unfolded)
            if unfolded:
                y = g.batch_norm(y, f"{p}.{j + 2}", c)
            x = g.node("Add", [x, y], f"/features/features.{index}") if residual else y
            cin, index = c, index + 1
    x = _conv_bn_relu6(g, x, f"features.{index}", cin, 1280, 1, unfolded=True)
    x = g.node("GlobalAveragePool", [x], "")
    # x.view(x.size(0), -1): the shape sub-graph torch writes for a view with a dynamic batch.
    (batch,) = g.dims(x, "", [0])
    shape = g.node("Concat", [batch, g.constant("", [-1])], "", axis=0)
    x = g.node("Reshape", [x, shape], "")
    g.gemm(x, "classifier.1", 1280, 1000)
    g.output("output", FLOAT, ["batch", 1000])
    return g.model("torch_jit", 13, "MobileNetV2, random weights, some BatchNorm unfolded (torch.onnx layout)")


# -- MiniLM-L6 style BERT encoder (Hugging Face BertModel as torch.onnx writes it at opset 14) ----
HIDDEN, HEADS, LAYERS, INTERMEDIATE, MAX_POSITIONS = 384, 12, 6, 1536, 512


def _layer_norm(g, x, prefix, eps):
    """LayerNorm before opset 17: mean, centred, variance, divide by sqrt, then scale and shift."""
    s = "/" + prefix.replace(".", "/")
    mean = g.node("ReduceMean", [x], s, axes=[-1], keepdims=1)
    d = g.node("Sub", [x, mean], s)
    var = g.node("ReduceMean", [g.node("Pow", [d, g.constant(s, 2.0, np.float32)], s)], s, axes=[-1], keepdims=1)
    std = g.node("Sqrt", [g.node("Add", [var, g.constant(s, eps, np.float32)], s)], s)
    y = g.node("Div", [d, std], s)
    y = g.node("Mul", [y, g.weight(f"{prefix}.weight", g.uniform((HIDDEN,), 0.5, 1.5))], s)
    return g.node("Add", [y, g.weight(f"{prefix}.bias", g.normal((HIDDEN,), 0.1))], s)


def _split_heads(g, x, scope, perm):
    """x.view(b, s, heads, d).permute(...): the Shape/Gather/Unsqueeze/Concat/Reshape pattern."""
    b, s = g.dims(x, scope, [0, 1])
    shape = g.node("Concat", [b, s, g.constant(scope, [HEADS]), g.constant(scope, [HIDDEN // HEADS])], scope, axis=0)
    return g.node("Transpose", [g.node("Reshape", [x, shape], scope)], scope, perm=perm)


def _attention(g, h, mask, p):
    scope = f"/encoder/layer.{p}/attention/self"
    q = _split_heads(g, g.linear3d(h, f"encoder.layer.{p}.attention.self.query", HIDDEN, HIDDEN), scope, [0, 2, 1, 3])
    # key.transpose(-1, -2) after the permute: torch's peephole fuses both into one Transpose.
    k = _split_heads(g, g.linear3d(h, f"encoder.layer.{p}.attention.self.key", HIDDEN, HIDDEN), scope, [0, 2, 3, 1])
    v = _split_heads(g, g.linear3d(h, f"encoder.layer.{p}.attention.self.value", HIDDEN, HIDDEN), scope, [0, 2, 1, 3])
    scores = g.node("MatMul", [q, k], scope)
    scores = g.node("Div", [scores, g.constant(scope, np.sqrt(HIDDEN // HEADS), np.float32)], scope)
    probs = g.node("Softmax", [g.node("Add", [scores, mask], scope)], scope, axis=-1)
    ctx = g.node("Transpose", [g.node("MatMul", [probs, v], scope)], scope, perm=[0, 2, 1, 3])
    b, s = g.dims(ctx, scope, [0, 1])
    ctx = g.node("Reshape", [ctx, g.node("Concat", [b, s, g.constant(scope, [HIDDEN])], scope, axis=0)], scope)
    out = g.linear3d(ctx, f"encoder.layer.{p}.attention.output.dense", HIDDEN, HIDDEN)
    out = g.node("Add", [out, h], f"/encoder/layer.{p}/attention/output")
    return _layer_norm(g, out, f"encoder.layer.{p}.attention.output.LayerNorm", 1e-12)


def _gelu(g, x, scope):
    """x * 0.5 * (1 + erf(x / sqrt(2))) in the order torch writes it."""
    e = g.node("Erf", [g.node("Div", [x, g.constant(scope, 1.4142135381698608, np.float32)], scope)], scope)
    e = g.node("Add", [e, g.constant(scope, 1.0, np.float32)], scope)
    return g.node("Mul", [g.node("Mul", [x, e], scope), g.constant(scope, 0.5, np.float32)], scope)


def minilm(seed=SEEDS["minilm"], vocab=30522):
    g = GraphBuilder(seed)
    ids = g.input("input_ids", INT64, ["batch", "sequence"])
    mask = g.input("attention_mask", INT64, ["batch", "sequence"])
    # Embeddings: words, plus position ids and token types sliced from registered buffers.
    s = "/embeddings"
    (seq,) = g.dims(ids, s, [1])
    zero, one = g.constant(s, [0]), g.constant(s, [1])
    positions = g.weight("embeddings.position_ids", np.arange(MAX_POSITIONS, dtype=np.int64)[None, :])
    pos_ids = g.node("Slice", [positions, zero, seq, one], s)
    types = g.weight("embeddings.token_type_ids", np.zeros((1, MAX_POSITIONS), dtype=np.int64))
    type_ids = g.node("Expand", [g.node("Slice", [types, zero, seq, one], s), g.node("Shape", [ids], s)], s)
    e = g.node("Gather", [g.weight("embeddings.word_embeddings.weight", g.normal((vocab, HIDDEN), 1.0)), ids], s)
    t = g.node("Gather", [g.weight("embeddings.token_type_embeddings.weight", g.normal((2, HIDDEN), 0.5)), type_ids], s)
    e = g.node("Add", [e, t], s)
    pe = g.weight("embeddings.position_embeddings.weight", g.normal((MAX_POSITIONS, HIDDEN), 0.5))
    h = _layer_norm(g, g.node("Add", [e, g.node("Gather", [pe, pos_ids], s)], s), "embeddings.LayerNorm", 1e-12)
    # Extended attention mask: (1 - mask[:, None, None, :]) * finfo(float32).min.
    m = g.node("Unsqueeze", [mask, g.constant("", [1])], "")
    m = g.node("Cast", [g.node("Unsqueeze", [m, g.constant("", [2])], "")], "", to=FLOAT)
    m = g.node("Sub", [g.constant("", 1.0, np.float32), m], "")
    m = g.node("Mul", [m, g.constant("", np.finfo(np.float32).min, np.float32)], "")
    for p in range(LAYERS):
        h = _attention(g, h, m, p)
        ff = g.linear3d(h, f"encoder.layer.{p}.intermediate.dense", HIDDEN, INTERMEDIATE)
        ff = _gelu(g, ff, f"/encoder/layer.{p}/intermediate/intermediate_act_fn")
        ff = g.linear3d(ff, f"encoder.layer.{p}.output.dense", INTERMEDIATE, HIDDEN)
        ff = g.node("Add", [ff, h], f"/encoder/layer.{p}/output")
        h = _layer_norm(g, ff, f"encoder.layer.{p}.output.LayerNorm", 1e-12)
    g.output("last_hidden_state", FLOAT, ["batch", "sequence", HIDDEN])
    return g.model("main_graph", 14, "MiniLM-L6 style encoder, random weights (torch.onnx opset 14 layout)")


BUILDERS = {"resnet18": resnet18, "mobilenetv2": mobilenetv2, "minilm": minilm}
SEQUENCE = 128  # the encoder's test sequence length (issue 11)


def build(name):
    return BUILDERS[name]()


def save(name, outdir):
    path = Path(outdir) / f"{name}.onnx"
    onnx.save(build(name), path)
    return path


def random_inputs(name, batch, rng):
    """Fresh inputs for `name`: images in [-1, 1); token ids with a padded tail in the mask."""
    if name != "minilm":
        return {"input": rng.uniform(-1.0, 1.0, size=(batch, 3, 224, 224)).astype(np.float32)}
    ids = rng.integers(1, 30522, size=(batch, SEQUENCE), dtype=np.int64)
    mask = np.ones((batch, SEQUENCE), dtype=np.int64)
    for row in range(batch):  # each row keeps a different number of real tokens
        mask[row, rng.integers(SEQUENCE // 2, SEQUENCE + 1):] = 0
    return {"input_ids": ids, "attention_mask": mask}


def verify(path, name, seed=0):
    """checker, then ORT at batch 1 and 4: outputs finite with a real spread. Returns the stats."""
    import onnxruntime as ort

    check(onnx.load(path))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    stats = []
    for batch in (1, 4):
        (out,) = session.run(None, random_inputs(name, batch, np.random.default_rng(seed + batch)))
        if not np.isfinite(out).all() or out.std() < 1e-2 or out.std() > 1e3:
            raise AssertionError(f"{name} at batch {batch}: outputs not finite or degenerate "
                                 f"(std {out.std():.3g}, max |x| {np.abs(out).max():.3g})")
        stats.append((batch, out.shape, float(out.mean()), float(out.std()), float(np.abs(out).max())))
    return stats


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--models", default=",".join(BUILDERS), help="comma-separated: " + ", ".join(BUILDERS))
    parser.add_argument("--verify", action="store_true", help="checker + ONNX Runtime at batch 1 and 4")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    for name in args.models.split(","):
        start = time.perf_counter()
        path = save(name, args.outdir)
        print(f"{name:12s} {path}  {path.stat().st_size / 1e6:.1f} MB  seed {SEEDS[name]}  "
              f"{time.perf_counter() - start:.1f} s")
        if args.verify:
            for batch, shape, mean, std, peak in verify(path, name):
                print(f"  ort batch {batch}: output {list(shape)} mean {mean:+.3f} std {std:.3f} max|x| {peak:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

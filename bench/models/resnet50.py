# ResNet-50 for issue 12's compile-time target: onnx's `light` ResNet-50 graph (shipped in the onnx
# wheel under backend/test/data/light; opset 9, Caffe2's export) with random weights. The light
# file keeps the graph but not the weights: each weight is a ConstantOfShape of its shape filled
# with 0.02. Here every such node becomes a real initializer of that shape with seeded random
# values (He-scaled convolution and dense weights, batch-norm scales and variances around 1), so
# the compiler sees what a trained model gives it: dense constant tensors, not broadcast fills it
# could fold away.
"""onnx's light ResNet-50 graph with seeded random weights, as a model file."""
import os
from pathlib import Path

import numpy as np


def light_path():
    import onnx
    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the onnx wheel's light ResNet-50 graph is missing (pip package onnx)")
    return path


def _weight(name, shape, rng):
    shape = tuple(int(d) for d in shape)
    low = name.lower()
    # Caffe2 names: *_w (conv/dense weight), *_b (bias), *_bn_s / *_bn_b (scale/shift), *_bn_rm / *_bn_riv
    # (running mean / running variance).
    if low.endswith("_riv_0") or low.endswith("_s_0"):
        return rng.uniform(0.5, 1.5, size=shape).astype(np.float32)
    if low.endswith("_w_0") and len(shape) >= 2:
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return (rng.standard_normal(shape) * 0.05).astype(np.float32)


def save(outdir, seed=0):
    """(path, input name, {input: [1, 3, 224, 224] float32}) of the randomised light ResNet-50."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(light_path()))
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    rng = np.random.default_rng(seed)
    keep_nodes, weights, used_shapes = [], [], set()
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input and node.input[0] in inits:
            shape = numpy_helper.to_array(inits[node.input[0]])
            weights.append(numpy_helper.from_array(_weight(node.output[0], shape, rng), node.output[0]))
            used_shapes.add(node.input[0])
        else:
            keep_nodes.append(node)
    if not weights:
        raise ValueError(f"{light_path()}: no ConstantOfShape weights found; the light graph's format changed")
    del graph.node[:]
    graph.node.extend(keep_nodes)
    consumed = {name for node in keep_nodes for name in node.input}
    remaining = [t for t in graph.initializer if t.name not in used_shapes and t.name in consumed]
    del graph.initializer[:]
    graph.initializer.extend(remaining + weights)
    # The shape tensors were listed as graph inputs too (opset-9 style): only the image is an input now.
    init_names = set(inits) | {t.name for t in weights}
    inputs = [i for i in graph.input if i.name not in init_names]
    del graph.input[:]
    graph.input.extend(inputs)
    (data,) = inputs
    model.ir_version = max(model.ir_version, 4)  # IR 3 required every initializer to be a graph input
    path = Path(outdir) / "resnet50.onnx"
    onnx.save(model, str(path))
    x = rng.uniform(-1.0, 1.0, size=(1, 3, 224, 224)).astype(np.float32)
    return str(path), data.name, {data.name: x}


if __name__ == "__main__":
    import sys
    out = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    print(save(out)[0])

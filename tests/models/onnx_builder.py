# A small graph builder over onnx.helper for tests/models/make_models.py: nodes and values are
# named the way torch.onnx names them ("/layer1/layer1.0/conv1/Conv", "..._output_0"), weights
# are seeded random initializers, and the small constants torch writes as Constant nodes (Gather
# indices, Clip bounds, Concat pieces of a shape) are Constant nodes here too, so an importer
# meets both forms of a weight.
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# torch.onnx writes IR version 8 for the opsets used here; ORT and onnx.checker accept it.
IR_VERSION = 8


class GraphBuilder:
    """Collects nodes, initializers and graph inputs/outputs; `rng` draws every weight."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.outputs = []
        self._names = {}

    # -- naming ------------------------------------------------------------------------------
    def _node_name(self, scope, op):
        # torch numbers repeated ops of one module scope: /Shape, /Shape_1, /Shape_2 ...
        base = f"{scope}/{op}"
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    # -- values ------------------------------------------------------------------------------
    def input(self, name, elem_type, shape):
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def output(self, name, elem_type, shape):
        """Renames the last node's output to `name` (torch names graph outputs so) and declares it."""
        self.nodes[-1].output[0] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def weight(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def constant(self, scope, value, dtype=np.int64):
        """A Constant node holding `value` (a scalar gives a 0-d tensor, as torch's indices)."""
        array = np.asarray(value, dtype=dtype)
        return self.node("Constant", [], scope, value=numpy_helper.from_array(array))

    def node(self, op, inputs, scope, outputs=1, **attrs):
        """Adds one node; returns its output name (or the list of names when outputs > 1)."""
        name = self._node_name(scope, op)
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    # -- random weights (fan-in scaled so activations keep a unit-ish spread) ----------------
    def normal(self, shape, std):
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def uniform(self, shape, low, high):
        return self.rng.uniform(low, high, size=shape).astype(np.float32)

    def conv_weight(self, cout, cin_per_group, k, gain=2.0):
        # He initialisation: variance gain / fan_in (gain 2 before a ReLU, 1 before nothing).
        fan_in = cin_per_group * k * k
        return self.normal((cout, cin_per_group, k, k), np.sqrt(gain / fan_in))

    def bias(self, n, std=0.05):
        return self.normal((n,), std)

    # -- common layers -----------------------------------------------------------------------
    def conv(self, x, prefix, cin, cout, k, stride=1, pad=None, group=1, gain=2.0, bias=True):
        """A Conv; with bias it stands for a Conv+BatchNorm torch folded at export."""
        pad = k // 2 if pad is None else pad
        w = self.weight(f"{prefix}.weight", self.conv_weight(cout, cin // group, k, gain))
        ins = [x, w]
        if bias:
            ins.append(self.weight(f"{prefix}.bias", self.bias(cout)))
        return self.node("Conv", ins, "/" + prefix.replace(".", "/"), dilations=[1, 1], group=group,
                         kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])

    def batch_norm(self, x, prefix, c):
        """An unfolded BatchNormalization (inference form, one output)."""
        scale = self.weight(f"{prefix}.weight", self.uniform((c,), 0.5, 1.5))
        shift = self.weight(f"{prefix}.bias", self.normal((c,), 0.1))
        mean = self.weight(f"{prefix}.running_mean", self.normal((c,), 0.1))
        var = self.weight(f"{prefix}.running_var", self.uniform((c,), 0.5, 1.5))
        return self.node("BatchNormalization", [x, scale, shift, mean, var], "/" + prefix.replace(".", "/"),
                         epsilon=1e-5, momentum=0.9)

    def gemm(self, x, prefix, cin, cout):
        """torch's nn.Linear on a 2-D input: Gemm with the weight as stored ([out, in], transB)."""
        w = self.weight(f"{prefix}.weight", self.normal((cout, cin), np.sqrt(1.0 / cin)))
        b = self.weight(f"{prefix}.bias", self.bias(cout))
        return self.node("Gemm", [x, w, b], "/" + prefix, alpha=1.0, beta=1.0, transB=1)

    def linear3d(self, x, prefix, cin, cout, std=None):
        """torch's nn.Linear on a 3-D input: MatMul by the transposed weight, then Add the bias."""
        scope = "/" + prefix.replace(".", "/")
        w = self.weight(f"onnx::MatMul_{prefix}", self.normal((cin, cout), std or np.sqrt(1.0 / cin)))
        y = self.node("MatMul", [x, w], scope)
        b = self.weight(f"{prefix}.bias", self.bias(cout))
        return self.node("Add", [b, y], scope)  # torch puts the bias first

    def dims(self, x, scope, indices):
        """Shape(x)[i] for each i as a 1-element tensor: Shape -> Gather(0-d) -> Unsqueeze."""
        shape = self.node("Shape", [x], scope)
        out = []
        for i in indices:
            d = self.node("Gather", [shape, self.constant(scope, i)], scope, axis=0)
            out.append(self.node("Unsqueeze", [d, self.constant(scope, [0])], scope))
        return out

    # -- the model ---------------------------------------------------------------------------
    def model(self, graph_name, opset, doc):
        graph = helper.make_graph(self.nodes, graph_name, self.inputs, self.outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="anvil tests/models/make_models.py", producer_version="1",
                                  doc_string=doc)
        model.ir_version = IR_VERSION
        return model


FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


def check(model):
    """onnx.checker with full shape inference: the model is well formed."""
    onnx.checker.check_model(model, full_check=True)

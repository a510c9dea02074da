# The ONNX backend test cases as tests/conformance/run_node_tests.py sees them: discovery (node
# tests and the nine `light` model graphs), which operator a test is about, whether it is
# "planned" (every operator in issue 11's list), loading its data sets, and onnx's own comparison
# (onnx.backend.test.runner.Runner.assert_similar_outputs: same count, shape and dtype, then
# assert_allclose with rtol 1e-3, atol 1e-7 unless the case says otherwise).
import glob
import os
import re
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

# Issue 11's operator list, copied from its text ("Resize/Upsample" is both; "the recurrent LSTM
# and GRU" and "If/Loop" name four). A test is planned when all its operators are in here.
PLANNED_OPS = {
    "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Sqrt", "Exp", "Log", "Sin", "Cos", "Abs", "Neg", "Reciprocal",
    "Floor", "Ceil", "Round", "Sign", "IsNaN", "IsInf", "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu",
    "Sigmoid", "HardSigmoid", "HardSwish", "Mish", "Softsign", "ThresholdedRelu", "Tanh", "Erf", "Gelu",
    "Softplus", "Clip", "Min", "Max", "Sum", "Mean", "Softmax", "LogSoftmax", "MatMul", "Gemm", "Conv",
    "ConvTranspose", "BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
    "RMSNormalization", "LRN", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Flatten",
    "Reshape", "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND", "ScatterND",
    "ScatterElements", "Squeeze", "Unsqueeze", "Expand", "Tile", "Pad", "Trilu", "OneHot", "Shape", "Size",
    "Cast", "CastLike", "Constant", "ConstantOfShape", "Identity", "Dropout", "ReduceMean", "ReduceSum",
    "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp",
    "ArgMax", "ArgMin", "Where", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And",
    "Or", "Xor", "Range", "Resize", "Upsample", "DepthToSpace", "SpaceToDepth", "Einsum", "CumSum", "TopK",
    "NonZero", "QuantizeLinear", "DequantizeLinear", "LSTM", "GRU", "If", "Loop",
}

# The light models' tolerances (onnx.backend.test.case.model.collect_testcases).
LIGHT_RTOL = {"densenet121": 2e-3}
RTOL, ATOL = 1e-3, 1e-7


@dataclass
class Case:
    name: str
    kind: str  # "node" or "light"
    model: str  # path of the .onnx file
    op: str = ""  # the operator under test (the doc's per-operator table)
    ops: list = field(default_factory=list)  # every operator, subgraphs included
    planned: bool = False
    rtol: float = RTOL


def _graph_ops(graph):
    ops = set()
    for node in graph.node:
        ops.add(node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}")
        for attr in node.attribute:
            for sub in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                ops |= _graph_ops(sub)
    return ops


def _describe(case):
    model = onnx.load(case.model, load_external_data=False)
    case.ops = sorted(_graph_ops(model.graph))
    case.planned = bool(case.ops) and all(op in PLANNED_OPS for op in case.ops)
    top = {n.op_type for n in model.graph.node if n.op_type != "Constant"} or {n.op_type for n in model.graph.node}
    return sorted(top)


def discover(data_dir, pattern=None):
    """The cases under data_dir (node/ and light/ of the onnx wheel), sorted, filtered by `pattern`."""
    regex = re.compile(pattern) if pattern else None
    cases, tops = [], {}
    for model in sorted(glob.glob(os.path.join(data_dir, "node", "*", "model.onnx"))):
        cases.append(Case(os.path.basename(os.path.dirname(model)), "node", model))
    for model in sorted(glob.glob(os.path.join(data_dir, "light", "light_*.onnx"))):
        stem = os.path.basename(model)[:-len(".onnx")]
        cases.append(Case(stem, "light", model, rtol=LIGHT_RTOL.get(stem[len("light_"):], RTOL)))
    for case in cases:
        tops[case.name] = _describe(case)
    for case in cases:
        # An expanded test (a function body spelled out) counts under the operator it expands.
        base = re.sub(r"_expanded(_ver\d+)?$", "", case.name)
        top = tops.get(base, tops[case.name]) if base != case.name else tops[case.name]
        case.op = top[0] if len(top) == 1 else ("(model)" if case.kind == "light" else "+".join(top)[:48])
    return [c for c in cases if regex is None or regex.search(c.name)]


def _load(path, type_proto):
    with open(path, "rb") as f:
        data = f.read()
    if type_proto.HasField("sequence_type"):
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return numpy_helper.to_list(seq)
    if type_proto.HasField("optional_type"):
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        return numpy_helper.to_optional(opt)
    tensor = onnx.TensorProto()
    tensor.ParseFromString(data)
    return numpy_helper.to_array(tensor)


def _light_input(value_info):
    # onnx's Runner.generate_dummy_data(random=False): arange(n) / n in the declared shape.
    shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in value_info.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


def data_sets(case):
    """(input names, [(inputs, expected outputs), ...]) of a case, inputs in graph-input order."""
    model = onnx.load(case.model, load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in inits]
    names = [i.name for i in graph_inputs]
    if case.kind == "light":
        expected = case.model[:-len(".onnx")] + "_output_0.pb"
        return names, [([_light_input(i) for i in graph_inputs], [_load(expected, model.graph.output[0].type)])]
    sets = []
    for d in sorted(glob.glob(os.path.join(os.path.dirname(case.model), "test_data_set_*"))):
        n_in = len(glob.glob(os.path.join(d, "input_*.pb")))
        n_out = len(glob.glob(os.path.join(d, "output_*.pb")))
        inputs = [_load(os.path.join(d, f"input_{i}.pb"), model.graph.input[i].type) for i in range(n_in)]
        outputs = [_load(os.path.join(d, f"output_{i}.pb"), model.graph.output[i].type) for i in range(n_out)]
        sets.append((inputs, outputs))
    return names[:max((len(s[0]) for s in sets), default=0)], sets


def compare(expected, actual, rtol, atol=ATOL, where="output"):
    """None when `actual` matches `expected` by onnx's rule, else a one-line reason."""
    if isinstance(expected, list) or isinstance(actual, list):
        if not isinstance(expected, list) or not isinstance(actual, list):
            return f"{where}: expected {type(expected).__name__}, got {type(actual).__name__}"
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} values, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            reason = compare(e, a, rtol, atol, f"{where}[{i}]")
            if reason:
                return reason
        return None
    if expected is None or actual is None:
        return None if expected is None and actual is None else f"{where}: optional presence differs"
    actual = np.asarray(actual)
    if actual.shape != expected.shape:
        return f"{where}: shape {list(actual.shape)}, expected {list(expected.shape)}"
    if expected.dtype == object:
        return None if np.array_equal(actual, expected) else f"{where}: strings differ"
    if actual.dtype != expected.dtype:
        return f"{where}: dtype {actual.dtype}, expected {expected.dtype}"
    if expected.dtype.name == "bfloat16":
        actual, expected, rtol = actual.astype(np.float32), expected.astype(np.float32), max(rtol, 2 ** -6)
    try:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)
    except AssertionError as e:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip().startswith(("Mismatched", "Max "))]
        return f"{where}: " + "; ".join(lines)[:200]
    return None


def check_outputs(expected, actual, rtol):
    if len(actual) != len(expected):
        return f"{len(actual)} outputs, expected {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        reason = compare(e, a, rtol, where=f"output {i}")
        if reason:
            return reason
    return None

# Which graph input an import failure asks for. Many node tests feed an operator's shape-like
# argument (ReduceSum axes, Reshape shape, Pad pads, TopK k, Slice starts, Trilu k) as a graph
# input, while the importer needs it at import ("must be known at import"). The runner then binds
# that input to the test's value (from_onnx(..., input_values=...)) and compiles again; such a pass
# is reported apart ("pass with the shape input bound at compile time"), so the totals stay honest.
# Only integer graph inputs are bound, and only the one the importer's message names.
import re

import onnx

_INTEGER = {onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
            onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64}

# Messages that say which value is missing by the converter's own words, not by input index:
# (op type, words) -> input index of the node.
_NAMED = {
    ("Trilu", "k"): 1,
    ("OneHot", "depth"): 1,
    ("Range", "start"): 0,
    ("Range", "limit"): 1,
    ("Range", "delta"): 2,
    ("Resize", "sizes"): 3,
}

_NODE = re.compile(r"onnx: node (?:(\d+)|'([^']*)') \((?:[\w.]+\.)?(\w+), opset \d+\): (.*)")
_INPUT = re.compile(r"input (\d+) \([^)]*\) must be known at import(?:: '([^']*)')?")
_WORDS = re.compile(r"^(\w+) with (?:a |an )?(\w+)(?: or (\w+))? not known at import")


def _node(graph, index, name):
    if index is not None:
        i = int(index)
        return graph.node[i] if i < len(graph.node) else None
    return next((n for n in graph.node if n.name == name), None)


def _candidates(graph, message):
    """The value names the importer's message says must be known at import (maybe none)."""
    m = _NODE.search(message)
    if not m:
        return []
    node = _node(graph, m.group(1), m.group(2))
    if node is None:
        return []
    op, rest = m.group(3), m.group(4)
    found = _INPUT.search(rest)
    if found:
        if found.group(2):
            return [found.group(2)]
        i = int(found.group(1))
        return [node.input[i]] if i < len(node.input) else []
    words = _WORDS.search(rest)
    if words:
        out = []
        for word in filter(None, words.group(2, 3)):
            i = _NAMED.get((op, word))
            if i is not None and i < len(node.input):
                out.append(node.input[i])
        return out
    return []


def import_time_input(model, message, names, bound):
    """The name of an integer graph input (one of `names`, not yet in `bound`) that the import
    failure `message` asks for, else None."""
    graph = model.graph
    declared = {i.name: i for i in graph.input}
    for name in _candidates(graph, message):
        info = declared.get(name)
        if name in bound or name not in names or info is None:
            continue
        if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type in _INTEGER:
            return name
    return None

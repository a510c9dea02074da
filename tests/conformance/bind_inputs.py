# Which graph input an import failure asks for. Many node tests feed an operator's shape-like
# argument (ReduceSum axes, Reshape shape, Pad pads, TopK k, Slice starts, Trilu k) as a graph
# input, while the importer needs it at import ("must be known at import"). The runner then binds
# that input to the test's value (from_onnx(..., input_values=...)) and compiles again; such a pass
# is reported apart ("pass with the shape input bound at compile time"), so the totals stay honest.
# Only the graph input the importer's message names is bound: an integer one, or a small float
# one where the operator's own words name it (Resize scales, OneHot depth, Range start/limit/
# delta: values a real model has as constants, and that set the output's shape). When the named
# value is computed from graph inputs (a window's Range(0, Cast(size), 1), CenterCropPad's pads
# from Max(Shape(x), shape)), the integer graph inputs it is computed from are bound instead.
# A node inside an If/Loop subgraph is found through the attribute its message names.
import re

import onnx

_FLOAT = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16}
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
    ("Resize", "scales"): 2,  # 1 for Resize-10 (inputs X, scales)
    ("Upsample", "scales"): 1,
}
# Float inputs are bound only when they are at most this many elements (scales, a scalar).
_MAX_FLOAT_ELEMENTS = 8

_NODE = re.compile(r"onnx: node (?:(\d+)|'([^']*)') \((?:[\w.]+\.)?(\w+), opset \d+\): (.*)")
_INPUT = re.compile(r"input (\d+) \([^)]*\) must be known at import(?:: '([^']*)')?")
_SUBGRAPH = re.compile(r"(\w+) '[^']*': (onnx: node .*)", re.S)
_WORDS = re.compile(r"^(\w+) with (?:a |an )?(\w+)(?: or (\w+))? not known at import")


def _node(graph, index, name):
    if index is not None:
        i = int(index)
        return graph.node[i] if i < len(graph.node) else None
    return next((n for n in graph.node if n.name == name), None)


def _candidates(graph, message):
    """The value names the importer's message says must be known at import (maybe none), and
    whether the operator's own words named them (then small float inputs may be bound too)."""
    m = _NODE.search(message)
    if not m:
        return [], False
    node = _node(graph, m.group(1), m.group(2))
    if node is None:
        return [], False
    op, rest = m.group(3), m.group(4)
    # A node inside an If/Loop subgraph: "then_branch 'g1': onnx: node 4 (Expand, ...): ...".
    sub = _SUBGRAPH.match(rest)
    if sub:
        inner = next((a.g for a in node.attribute if a.name == sub.group(1) and a.HasField("g")), None)
        return _candidates(inner, sub.group(2)) if inner is not None else ([], False)
    found = _INPUT.search(rest)
    if found:
        if found.group(2):
            return [found.group(2)], False
        i = int(found.group(1))
        return ([node.input[i]] if i < len(node.input) else []), False
    words = _WORDS.search(rest)
    if words:
        out = []
        for word in filter(None, words.group(2, 3)):
            i = _NAMED.get((op, word))
            if (op, word) == ("Resize", "scales") and len(node.input) == 2:
                i = 1
            if i is not None and i < len(node.input):
                out.append(node.input[i])
        return out, True
    return [], False


# Ops whose output depends only on their input's shape, not its values: not followed.
_SHAPE_ONLY = {"Shape", "Size"}


def _all_nodes(graph):
    """The graph's nodes and those of its If/Loop subgraphs (value names are unique across them)."""
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.HasField("g"):
                yield from _all_nodes(a.g)
            for g in a.graphs:
                yield from _all_nodes(g)


def _sources(graph, name):
    """The graph inputs whose values the value `name` is computed from (through the nodes that
    produce it; a Shape or Size reads only its input's shape)."""
    producer = {o: n for n in _all_nodes(graph) for o in n.output}
    seen, todo, out = set(), [name], []
    while todo:
        v = todo.pop()
        if v in seen or not v:
            continue
        seen.add(v)
        if v in producer:
            if producer[v].op_type not in _SHAPE_ONLY:
                todo.extend(producer[v].input)
                # An If/Loop output comes from its subgraphs' outputs (which read outer values).
                for a in producer[v].attribute:
                    for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                        todo.extend(o.name for o in g.output)
        else:
            out.append(v)
    return out


def import_time_input(model, message, names, bound):
    """The name of an integer graph input (one of `names`, not yet in `bound`) that the import
    failure `message` asks for, else None."""
    graph = model.graph
    declared = {i.name: i for i in graph.input}
    names_, named = _candidates(graph, message)
    for name in names_:
        info = declared.get(name)
        if info is None and name not in {i.name for i in graph.initializer}:
            # A value computed from graph inputs: bind the integer ones it comes from.
            for source in _sources(graph, name):
                if source not in bound and source in names and _elem_type(declared.get(source)) in _INTEGER:
                    return source
            continue
        if name in bound or name not in names:
            continue
        elem = _elem_type(info)
        if elem in _INTEGER or (named and elem in _FLOAT and _small(info)):
            return name
    return None


def _elem_type(info):
    if info is None or not info.type.HasField("tensor_type"):
        return None
    return info.type.tensor_type.elem_type


def _small(info):
    n = 1
    for d in info.type.tensor_type.shape.dim:
        if not d.HasField("dim_value"):
            return False
        n *= d.dim_value
    return n <= _MAX_FLOAT_ELEMENTS

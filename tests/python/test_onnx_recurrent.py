# ONNX RNN / GRU / LSTM (convert_recurrent.cc: unrolled over a static sequence length) end to end:
# one-node models built with onnx.helper, covering forward / reverse / bidirectional, layout 0
# and 1, sequence_lens (a runtime input, with an empty row), initial states, peepholes, clip,
# input_forget, GRU linear_before_reset and non-default activations with alpha/beta; imported by
# anvil.frontend.from_onnx, compiled for llvm, run on the VM, every output compared with ONNX
# Runtime on random inputs (seed SEED) within rtol 1e-4 / atol 1e-4 (layout 1 against ONNX Runtime's
# layout-0 result on transposed tensors, as its CPU GRU and RNN lack layout 1); a symbolic batch
# at two sizes; opset-7 models. A symbolic sequence length fails naming the op.
import numpy as np
import pytest

import anvil
from conftest import SEED, require


def _mods():
    try:
        import onnx as o
        import onnxruntime as r
        return o, r
    except ImportError:
        return None, None


O, ORT = _mods()
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}

# name: (op, T, B, I, H, attrs, optional inputs given, outputs)
CASES = {
    "lstm_forward_all_outputs": ("LSTM", 5, 3, 4, 6, {}, ["B"], ["Y", "Y_h", "Y_c"]),
    "lstm_bidirectional_full": ("LSTM", 4, 3, 5, 4, {"direction": "bidirectional"},
                                ["B", "sequence_lens", "initial_h", "initial_c", "P"], ["Y", "Y_h", "Y_c"]),
    "lstm_reverse_clip_input_forget": ("LSTM", 4, 2, 3, 5, {"direction": "reverse", "clip": 0.7, "input_forget": 1},
                                       ["B", "initial_h"], ["Y", "Y_c"]),
    "lstm_layout1_bidirectional": ("LSTM", 3, 2, 4, 3, {"direction": "bidirectional", "layout": 1},
                                   ["B", "sequence_lens", "initial_h", "initial_c"], ["Y", "Y_h", "Y_c"]),
    "lstm_activations": ("LSTM", 4, 2, 3, 4, {"activations": ["HardSigmoid", "ScaledTanh", "Softsign"],
                                              "activation_alpha": [0.3, 0.9], "activation_beta": [0.4, 1.1]},
                         ["B"], ["Y", "Y_h"]),
    "gru_bidirectional_linear_before_reset": ("GRU", 5, 3, 4, 5,
                                              {"direction": "bidirectional", "linear_before_reset": 1},
                                              ["B", "initial_h"], ["Y", "Y_h"]),
    "gru_sequence_lens_reverse": ("GRU", 5, 4, 3, 4, {"direction": "reverse"}, ["B", "sequence_lens"], ["Y", "Y_h"]),
    "gru_layout1_linear_before_reset": ("GRU", 4, 2, 3, 4, {"layout": 1, "linear_before_reset": 1},
                                        ["B", "sequence_lens", "initial_h"], ["Y", "Y_h"]),
    "gru_activations_clip": ("GRU", 3, 2, 3, 4, {"activations": ["Sigmoid", "LeakyRelu"], "activation_alpha": [0.2],
                                                 "clip": 1.5}, ["B"], ["Y_h"]),
    "rnn_bidirectional_sequence_lens": ("RNN", 5, 3, 4, 5, {"direction": "bidirectional",
                                                            "activations": ["Tanh", "Affine"],
                                                            "activation_alpha": [0.5], "activation_beta": [0.1]},
                                        ["B", "sequence_lens", "initial_h"], ["Y", "Y_h"]),
    "rnn_layout1": ("RNN", 4, 2, 3, 4, {"layout": 1}, ["B"], ["Y", "Y_h"]),
}
NAMES = sorted(CASES)
SLOTS = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]


def _values(name, rng):
    op, T, B, I, H, attrs, given, outs = CASES[name]
    D = 2 if attrs.get("direction") == "bidirectional" else 1
    G = GATES[op]
    batchwise = attrs.get("layout", 0) == 1
    lens = rng.integers(1, T + 1, B).astype(np.int32)
    lens[0] = T
    if B > 2:
        lens[1] = 0  # an empty row: zero Y rows and zero final states
    values = {
        "X": rng.standard_normal((B, T, I) if batchwise else (T, B, I)),
        "W": rng.uniform(-0.6, 0.6, (D, G * H, I)),
        "R": rng.uniform(-0.6, 0.6, (D, G * H, H)),
        "B": rng.uniform(-0.5, 0.5, (D, 2 * G * H)),
        "sequence_lens": lens,
        "initial_h": rng.uniform(-1, 1, (B, D, H) if batchwise else (D, B, H)),
        "initial_c": rng.uniform(-1, 1, (B, D, H) if batchwise else (D, B, H)),
        "P": rng.uniform(-0.5, 0.5, (D, 3 * H)),
    }
    used = ["X", "W", "R"] + given
    return {s: (values[s] if values[s].dtype == np.int32 else values[s].astype(np.float32)) for s in used}


def _model(name, feeds, layout, opset=22):
    op, T, B, I, H, attrs, given, outs = CASES[name]
    h, TP = O.helper, O.TensorProto
    attrs = dict(attrs, layout=layout) if layout else {k: v for k, v in attrs.items() if k != "layout"}
    used = list(feeds)
    last = max(SLOTS.index(s) for s in used)
    ins = [s if s in used else "" for s in SLOTS[:last + 1]]
    out_slots = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    last_out = max(out_slots.index(s) for s in outs)
    node_outs = [s if s in outs else "" for s in out_slots[:last_out + 1]]
    node = h.make_node(op, ins, node_outs, hidden_size=H, **attrs)
    inputs = [h.make_tensor_value_info(s, TP.INT32 if s == "sequence_lens" else TP.FLOAT, feeds[s].shape)
              for s in used]
    g = h.make_graph([node], "t", inputs, [h.make_tensor_value_info(s, TP.FLOAT, None) for s in outs])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _onnxruntime(name, feeds):
    # ONNX Runtime's CPU GRU / RNN reject layout 1: the layout-0 model on transposed tensors then.
    layout = CASES[name][5].get("layout", 0)
    if layout == 1:
        feeds = {k: (v.transpose(1, 0, 2) if k in ("X", "initial_h", "initial_c") else v) for k, v in feeds.items()}
    model = _model(name, feeds, 0)
    outs = ORT.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    if layout == 1:
        outs = [o.transpose(2, 0, 1, 3) if o.ndim == 4 else o.transpose(1, 0, 2) for o in outs]
    return outs


@pytest.mark.parametrize("name", NAMES)
def test_recurrent_matches_onnxruntime(name):
    require(O is not None and ORT is not None, "pip packages onnx and onnxruntime (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    rng = np.random.default_rng([SEED, NAMES.index(name)])
    feeds = _values(name, rng)
    want = _onnxruntime(name, feeds)
    model = _model(name, feeds, CASES[name][5].get("layout", 0))
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*[feeds[i.name] for i in model.graph.input])
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(want)
    for o, g, w in zip(model.graph.output, got, want):
        g = g.numpy() if hasattr(g, "numpy") else np.asarray(g)
        assert g.shape == w.shape, f"{name} {o.name} (seed {SEED}): shape {g.shape}, ONNX Runtime {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=f"{name} {o.name} (seed {SEED})")


@pytest.mark.parametrize("name", ["rnn_bidirectional_sequence_lens", "gru_bidirectional_linear_before_reset",
                                  "lstm_bidirectional_full"])
def test_opset7_models_import(name):
    # Opset 7's RNN, GRU and LSTM are the definitions of opset 9 to 13 (the importer's opset-9 rule).
    require(O is not None and ORT is not None, "pip packages onnx and onnxruntime (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    feeds = _values(name, np.random.default_rng([SEED, 7, NAMES.index(name)]))
    model = _model(name, feeds, 0, opset=7)
    want = ORT.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    f = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), "llvm"), anvil.cpu())["main"]
    for o, g, w in zip(model.graph.output, f(*[feeds[i.name] for i in model.graph.input]), want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-4, err_msg=f"{name} {o.name} (seed {SEED})")


def test_symbolic_batch_runs_at_two_sizes():
    # A bidirectional GRU (linear_before_reset) whose batch is a dim_param: one module, batches 1 and 3.
    require(O is not None and ORT is not None, "pip packages onnx and onnxruntime (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    h, TP = O.helper, O.TensorProto
    T, I, H = 4, 5, 6
    rng = np.random.default_rng([SEED, 99])
    w = rng.uniform(-0.5, 0.5, (2, 3 * H, I)).astype(np.float32)
    r = rng.uniform(-0.5, 0.5, (2, 3 * H, H)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, (2, 6 * H)).astype(np.float32)
    node = h.make_node("GRU", ["X", "W", "R", "B"], ["Y", "Y_h"], hidden_size=H, direction="bidirectional",
                       linear_before_reset=1)
    g = h.make_graph([node], "t", [h.make_tensor_value_info("X", TP.FLOAT, (T, "n", I))],
                     [h.make_tensor_value_info("Y", TP.FLOAT, None), h.make_tensor_value_info("Y_h", TP.FLOAT, None)],
                     initializer=[O.numpy_helper.from_array(a, n) for n, a in (("W", w), ("R", r), ("B", b))])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    f = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), "llvm"), anvil.cpu())["main"]
    sess = ORT.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 3):
        x = rng.standard_normal((T, n, I)).astype(np.float32)
        for name, g_out, w_out in zip(("Y", "Y_h"), f(x), sess.run(None, {"X": x})):
            np.testing.assert_allclose(g_out.numpy(), w_out, rtol=1e-4, atol=1e-4, err_msg=f"{name} batch {n}")


def test_symbolic_sequence_length_is_a_clear_error():
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    h, TP = O.helper, O.TensorProto
    node = h.make_node("LSTM", ["X", "W", "R"], ["", "Y_h"], hidden_size=3)
    g = h.make_graph([node], "t", [h.make_tensor_value_info("X", TP.FLOAT, ["seq", 2, 4])],
                     [h.make_tensor_value_info("Y_h", TP.FLOAT, None)],
                     initializer=[O.numpy_helper.from_array(np.zeros((1, 12, 4), np.float32), "W"),
                                  O.numpy_helper.from_array(np.zeros((1, 12, 3), np.float32), "R")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    with pytest.raises(Exception, match="LSTM.*symbolic sequence length"):
        anvil.frontend.from_onnx(model)

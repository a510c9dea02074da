# Dropout in training mode (opset 12+) against onnx's reference evaluator, whose mask is numpy's
# RandomState(seed).uniform(0, 1, shape) >= ratio: the same MT19937 stream drawn at import, for
# several seeds and shapes, a constant or a run-time ratio and training_mode, the mask output,
# ratio 0 and 1, float32 and float64; inference forms stay the identity.
import numpy as np
import pytest

import anvil
from conftest import require

try:
    import onnx as O
    from onnx.reference import ReferenceEvaluator
except ImportError:
    O = None


def _model(x, ratio, training, seed, with_mask, runtime=(), opset=22):
    h = O.helper
    t = h.np_dtype_to_tensor_dtype(x.dtype)
    inputs = [h.make_tensor_value_info("x", t, list(x.shape))]
    inits = []
    for name, v in (("r", ratio), ("t", training)):
        if name in runtime:
            inputs.append(h.make_tensor_value_info(name, h.np_dtype_to_tensor_dtype(v.dtype), []))
        else:
            inits.append(O.numpy_helper.from_array(v, name))
    attrs = {} if seed is None else {"seed": seed}
    outs = ["y", "mask"] if with_mask else ["y"]
    node = h.make_node("Dropout", ["x", "r", "t"], outs, **attrs)
    g = h.make_graph([node], "t", inputs, [h.make_tensor_value_info(o, 0, None) for o in outs], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _run(model, feeds):
    exe = anvil.compile(anvil.frontend.from_onnx(model), "llvm")
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*[feeds[i.name] for i in model.graph.input])
    got = got if isinstance(got, (list, tuple)) else [got]
    return [g.numpy() if hasattr(g, "numpy") else np.asarray(g) for g in got]


CASES = {
    # name: (shape, dtype, ratio, training, seed, mask output, run-time inputs)
    "seed0_ratio075": ((3, 4, 5), np.float32, 0.75, True, 0, True, ()),
    "seed7_default_ratio": ((17, 33), np.float32, 0.5, True, 7, True, ()),
    "seed12345_float64": ((2, 3, 50), np.float64, 0.3, True, 12345, False, ()),
    "runtime_ratio": ((6, 40), np.float32, 0.4, True, 3, True, ("r",)),
    "runtime_training_true": ((5, 9), np.float32, 0.6, True, 11, True, ("t",)),
    "runtime_training_false": ((5, 9), np.float32, 0.6, False, 11, True, ("t",)),
    "runtime_both": ((4, 25), np.float32, 0.2, True, 99, True, ("r", "t")),
    "ratio_zero": ((3, 8), np.float32, 0.0, True, 5, True, ()),
    "ratio_one": ((3, 8), np.float32, 1.0, True, 5, True, ()),
    "constant_inference": ((3, 8), np.float32, 0.5, False, 5, True, ()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dropout_matches_the_reference(name, rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    shape, dtype, ratio, training, seed, with_mask, runtime = CASES[name]
    x = rng.uniform(-3, 3, shape).astype(dtype)
    r, t = np.array(ratio, dtype), np.array(training)
    model = _model(x, r, t, seed, with_mask, runtime)
    feeds = {"x": x, "r": r, "t": t}
    want = ReferenceEvaluator(model).run(None, {k: feeds[k] for k in ["x", *runtime]})
    if ratio == 1:  # the reference's mask * x * inf is NaN; every element is dropped: 0
        want[0] = np.zeros_like(x)
    got = _run(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=0)


def test_no_seed_drops_about_ratio_of_the_elements(rng):
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    x = rng.uniform(1, 2, (100, 100)).astype(np.float32)
    model = _model(x, np.array(0.25, np.float32), np.array(True), None, True)
    y, mask = _run(model, {"x": x})
    assert 0.22 < 1 - mask.mean() < 0.28
    np.testing.assert_allclose(y, np.where(mask, x / np.float32(0.75), 0), rtol=1e-6)


def test_training_mode_on_a_symbolic_shape_is_named():
    require(O is not None, "pip package onnx (scripts/setup.sh)")
    require(hasattr(anvil, "frontend"), "anvil.frontend (the ONNX importer)")
    model = _model(np.zeros((2, 3), np.float32), np.array(0.5, np.float32), np.array(True), 0, False)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "n"
    with pytest.raises(NotImplementedError, match="Dropout.*symbolic shape"):
        anvil.frontend.from_onnx(model)

"""ONNX Resize / Upsample whose scales or sizes are graph inputs known only at run time: each
model is compiled ONCE (no input bound at compile time) and run for several values on fresh
random data against onnxruntime, rtol = atol = 1e-5 (the kernels compute in float32 as ORT
does); align_corners with scales against onnx's reference evaluator instead, as ORT maps by
(out - 1) / (in - 1) there while the spec uses the given scale. Bad values (a non-positive scale, a resized N or C) raise a ValueError naming them; a
wrong length is rejected by the VM's argument check.
"""
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

import anvil

ort = pytest.importorskip("onnxruntime")

TOL = dict(rtol=1e-5, atol=1e-5)


def build(node, x_shape, extra, opset, reference="ort"):
    inputs = [helper.make_tensor_value_info("x", TP.FLOAT, x_shape)]
    inputs += [helper.make_tensor_value_info(n, t, s) for n, t, s in extra]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TP.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    vm = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(model), target="llvm"), anvil.cpu())
    if reference == "ort":
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    else:
        from onnx.reference import ReferenceEvaluator
        sess = ReferenceEvaluator(model)
    names = ["x"] + [n for n, _, _ in extra]
    return (lambda *a: vm["main"](*a).numpy()), (lambda *a: sess.run(None, dict(zip(names, a)))[0])


def check(ours, ref, x, *values):
    y, want = ours(x, *values), ref(x, *values)
    assert y.shape == want.shape, (values, y.shape, want.shape)
    np.testing.assert_allclose(y, want, **TOL)


SCALES = [[1, 1, 2.0, 3.0], [1, 1, 0.5, 0.75], [1, 1, 1.7, 0.6], [1, 1, 1.0, 1.0], [1, 1, 3.3, 2.25]]


@pytest.mark.parametrize("mode,ct", [("nearest", "asymmetric"), ("nearest", "half_pixel"), ("linear", "half_pixel"),
                                     ("linear", "align_corners"), ("linear", "pytorch_half_pixel"),
                                     ("linear", "half_pixel_symmetric"), ("cubic", "half_pixel"),
                                     ("cubic", "asymmetric"), ("cubic", "align_corners")])
def test_run_time_scales(mode, ct):
    rng = np.random.default_rng(0)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, coordinate_transformation_mode=ct)
    ours, ref = build(node, [2, 3, 5, 7], [("scales", TP.FLOAT, [4])], 19, "onnx" if ct == "align_corners" else "ort")
    for s in SCALES:
        check(ours, ref, rng.standard_normal((2, 3, 5, 7)).astype("float32"), np.array(s, dtype="float32"))


def test_run_time_scales_cubic_exclude_outside_and_axes():
    rng = np.random.default_rng(1)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1,
                            axes=[3, 2])
    ours, ref = build(node, [1, 2, 6, 5], [("scales", TP.FLOAT, [2])], 19)
    for s in ([2.0, 0.5], [0.8, 1.6], [1.25, 3.0]):
        check(ours, ref, rng.standard_normal((1, 2, 6, 5)).astype("float32"), np.array(s, dtype="float32"))


@pytest.mark.parametrize("mode,ct,nm", [("nearest", "half_pixel", "round_prefer_floor"), ("nearest", "asymmetric", "floor"),
                                        ("nearest", "align_corners", "ceil"), ("linear", "pytorch_half_pixel", "floor"),
                                        ("cubic", "half_pixel", "floor")])
def test_run_time_sizes(mode, ct, nm):
    rng = np.random.default_rng(2)
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode, coordinate_transformation_mode=ct,
                            nearest_mode=nm)
    ours, ref = build(node, [2, 3, 5, 7], [("sizes", TP.INT64, [4])], 19)
    for s in ([2, 3, 10, 14], [2, 3, 3, 4], [2, 3, 1, 9], [2, 3, 5, 7], [2, 3, 17, 2]):
        check(ours, ref, rng.standard_normal((2, 3, 5, 7)).astype("float32"), np.array(s, dtype=np.int64))


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("axes", [[2, 3], [3, 2]])
def test_run_time_sizes_keep_aspect_ratio(policy, axes):
    rng = np.random.default_rng(3)
    attrs = dict(mode="linear", keep_aspect_ratio_policy=policy)
    if axes:
        attrs["axes"] = axes
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)
    ours, ref = build(node, [1, 2, 6, 8], [("sizes", TP.INT64, [2])], 19)
    for hw in ([3, 3], [12, 5], [7, 20], [6, 8]):
        v = [dict(zip([2, 3], hw))[a] for a in axes]
        check(ours, ref, rng.standard_normal((1, 2, 6, 8)).astype("float32"), np.array(v, dtype=np.int64))


def test_run_time_sizes_tf_crop_and_resize_with_run_time_roi():
    rng = np.random.default_rng(4)
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0, axes=[2, 3])
    ours, ref = build(node, [1, 1, 4, 5], [("roi", TP.FLOAT, [4]), ("sizes", TP.INT64, [2])], 19)
    for roi, s in (([0.4, 0.6, 0.6, 0.8], [3, 3]), ([-0.2, 0.1, 1.3, 0.9], [5, 7]), ([0, 0, 1, 1], [2, 8])):
        check(ours, ref, rng.standard_normal((1, 1, 4, 5)).astype("float32"), np.array(roi, dtype="float32"),
              np.array(s, dtype=np.int64))


def test_upsample_and_resize10_run_time_scales():
    rng = np.random.default_rng(5)
    up, up_ref = build(helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest"), [1, 2, 3, 4],
                       [("scales", TP.FLOAT, [4])], 9)
    r10, r10_ref = build(helper.make_node("Resize", ["x", "scales"], ["y"], mode="linear"), [1, 2, 3, 4],
                         [("scales", TP.FLOAT, [4])], 10)
    for s in ([1, 1, 2, 3], [1, 1, 1.5, 2.5], [1, 1, 1, 1]):
        x = rng.standard_normal((1, 2, 3, 4)).astype("float32")
        check(up, up_ref, x, np.array(s, dtype="float32"))
        check(r10, r10_ref, x, np.array(s, dtype="float32"))
    r10n, r10n_ref = build(helper.make_node("Resize", ["x", "scales"], ["y"], mode="nearest"), [1, 2, 6, 8],
                           [("scales", TP.FLOAT, [4])], 10)
    for s in ([1, 1, 0.5, 0.5], [1, 1, 0.6, 0.3], [1, 1, 2, 1.5]):
        check(r10n, r10n_ref, rng.standard_normal((1, 2, 6, 8)).astype("float32"), np.array(s, dtype="float32"))


def test_bad_run_time_values_raise():
    x = np.zeros((1, 2, 3, 4), dtype="float32")
    scaled, _ = build(helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear"), [1, 2, 3, 4],
                      [("scales", TP.FLOAT, [4])], 13)
    with pytest.raises(ValueError, match=r"Resize 'y': scales must be positive.*; got \[1, 1, -2.5, 2\]"):
        scaled(x, np.array([1, 1, -2.5, 2], dtype="float32"))
    with pytest.raises(ValueError, match=r"scales must be positive, and 1 for N and C"):
        scaled(x, np.array([1, 2, 2, 2], dtype="float32"))
    with pytest.raises(ValueError, match=r"scales"):
        scaled(x, np.array([1, 1, 2], dtype="float32"))  # wrong length: the argument check names the input
    sized, _ = build(helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest"), [1, 2, 3, 4],
                     [("sizes", TP.INT64, [4])], 13)
    with pytest.raises(ValueError, match=r"Resize 'y': sizes must be positive.*; got \[1, 2, 0, 5\]"):
        sized(x, np.array([1, 2, 0, 5], dtype=np.int64))
    with pytest.raises(ValueError, match=r"N's and C's sizes the input's"):
        sized(x, np.array([1, 3, 4, 5], dtype=np.int64))
    up, _ = build(helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest"), [1, 2, 3, 4],
                  [("scales", TP.FLOAT, [4])], 9)
    with pytest.raises(ValueError, match=r"cannot scale H up and W down"):
        up(x, np.array([1, 1, 2, 0.5], dtype="float32"))


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_run_time_antialias(mode):
    """The filter's tap count follows the run-time scale (a fresh Var per axis)."""
    rng = np.random.default_rng(6)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, antialias=1)
    ours, ref = build(node, [1, 2, 12, 10], [("scales", TP.FLOAT, [4])], 18)
    for s in ([1, 1, 0.5, 0.5], [1, 1, 0.3, 0.8], [1, 1, 0.17, 1.5], [1, 1, 2.0, 0.6]):
        check(ours, ref, rng.standard_normal((1, 2, 12, 10)).astype("float32"), np.array(s, dtype="float32"))
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode, antialias=1, axes=[2, 3])
    ours, ref = build(node, [1, 2, 12, 10], [("sizes", TP.INT64, [2])], 18)
    for s in ([6, 5], [3, 9], [2, 15], [12, 10]):
        check(ours, ref, rng.standard_normal((1, 2, 12, 10)).astype("float32"), np.array(s, dtype=np.int64))


def test_run_time_scales_and_sizes_with_a_dynamic_batch():
    rng = np.random.default_rng(7)
    scaled, scaled_ref = build(helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear"), ["n", 3, 5, 7],
                               [("scales", TP.FLOAT, [4])], 13)
    sized, sized_ref = build(helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="cubic"), ["n", 3, 5, 7],
                             [("sizes", TP.INT64, [4])], 13)
    for n, s, z in ((1, [1, 1, 1.5, 0.5], [1, 3, 8, 3]), (3, [1, 1, 0.4, 2.0], [3, 3, 2, 11])):
        x = rng.standard_normal((n, 3, 5, 7)).astype("float32")
        check(scaled, scaled_ref, x, np.array(s, dtype="float32"))
        check(sized, sized_ref, x, np.array(z, dtype=np.int64))
    with pytest.raises(ValueError, match=r"scales must be positive, and 1 for N and C"):
        scaled(rng.standard_normal((2, 3, 5, 7)).astype("float32"), np.array([2, 1, 1, 1], dtype="float32"))

# anvil.build: tensor-expression kernels compiled for the "llvm" target (JIT in this process) and
# the "c" target (C source, compiled by the system C compiler on first call) and run on numpy
# data. References are float64 numpy computations; float32 results are compared with
# assert_allclose at the tolerance stated per test. Inputs are random from the per-test seed that
# conftest.rng prints. Also: export_library + load_module, get_source, time_evaluator, and the
# errors of calls with wrong arguments.
import numpy as np
import pytest

import anvil
from anvil import te

TARGETS = ["llvm", "c"]


def f64(x):
    return np.asarray(x, dtype="float64")


def run(mod, name, *arrays):
    mod[name](*arrays)


@pytest.mark.parametrize("target", TARGETS)
def test_elementwise_with_math(target, rng):
    n = 37
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: te.exp(A[i]) * B[i] + te.tanh(B[i]) - te.sigmoid(A[i]) / 2.0, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)        # 37 = 4 * 8 + 5: a tail
    s[C].vectorize(xi)
    mod = anvil.build(s, [A, B, C], target=target, name="ew")
    a = rng.uniform(-2, 2, n).astype("float32")
    b = rng.uniform(-2, 2, n).astype("float32")
    c = np.zeros(n, "float32")
    run(mod, "ew", a, b, c)
    want = np.exp(f64(a)) * f64(b) + np.tanh(f64(b)) - 1 / (1 + np.exp(-f64(a))) / 2
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_broadcast_bias_add_relu(target, rng):
    m, n = 9, 13
    X = te.placeholder((m, n), name="X")
    bias = te.placeholder((n,), name="bias")
    Y = te.compute((m, n), lambda i, j: te.max(X[i, j] + bias[j], 0.0), name="Y")
    s = te.create_schedule(Y.op)
    s[Y].parallel(Y.op.axis[0])
    jo, ji = s[Y].split(Y.op.axis[1], factor=4)
    s[Y].vectorize(ji)
    mod = anvil.build(s, [X, bias, Y], target=target, name="bias_relu")
    x = rng.uniform(-1, 1, (m, n)).astype("float32")
    b = rng.uniform(-1, 1, n).astype("float32")
    y = np.zeros((m, n), "float32")
    run(mod, "bias_relu", x, b, y)
    np.testing.assert_allclose(y, np.maximum(f64(x) + f64(b), 0), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_row_reductions_sum_max_min(target, rng):
    m, n = 7, 50
    A = te.placeholder((m, n), name="A")
    k1, k2, k3 = (te.reduce_axis((0, n), name=f"k{i}") for i in range(3))
    S = te.compute((m,), lambda i: te.sum(A[i, k1], axis=k1), name="S")
    M = te.compute((m,), lambda i: te.max(A[i, k2], axis=k2), name="M")
    N = te.compute((m,), lambda i: te.min(A[i, k3], axis=[k3]), name="N")
    s = te.create_schedule([S.op, M.op, N.op])
    ko, ki = s[S].split(S.op.reduce_axis[0], factor=16)
    mod = anvil.build(s, [A, S, M, N], target=target, name="reduce_rows")
    a = rng.uniform(-1, 1, (m, n)).astype("float32")
    out = [np.zeros(m, "float32") for _ in range(3)]
    run(mod, "reduce_rows", a, *out)
    np.testing.assert_allclose(out[0], f64(a).sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[1], a.max(axis=1))
    np.testing.assert_array_equal(out[2], a.min(axis=1))


def softmax(n, m):
    A = te.placeholder((n, m), name="A")
    k1 = te.reduce_axis((0, m), name="k1")
    k2 = te.reduce_axis((0, m), name="k2")
    M = te.compute((n,), lambda i: te.max(A[i, k1], axis=k1), name="M")
    E = te.compute((n, m), lambda i, j: te.exp(A[i, j] - M[i]), name="E")
    S = te.compute((n,), lambda i: te.sum(E[i, k2], axis=k2), name="S")
    Y = te.compute((n, m), lambda i, j: E[i, j] / S[i], name="Y")
    return A, M, E, S, Y


@pytest.mark.parametrize("target", TARGETS)
def test_softmax_computed_per_row(target, rng):
    n, m = 6, 21
    A, M, E, S, Y = softmax(n, m)
    s = te.create_schedule(Y.op)
    s[Y].parallel(Y.op.axis[0])
    for t in (M, E, S):
        s[t].compute_at(s[Y], Y.op.axis[0])
    jo, ji = s[Y].split(Y.op.axis[1], factor=8)
    s[Y].vectorize(ji)
    mod = anvil.build(s, [A, Y], target=target, name="softmax")
    a = rng.uniform(-4, 4, (n, m)).astype("float32")
    y = np.zeros((n, m), "float32")
    run(mod, "softmax", a, y)
    e = np.exp(f64(a) - f64(a).max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def matmul(m, n, k_extent):
    A = te.placeholder((m, k_extent), name="A")
    B = te.placeholder((k_extent, n), name="B")
    k = te.reduce_axis((0, k_extent), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def schedule_matmul(C, bn, kf):
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=kf)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    s[C].vectorize(yi)
    s[C].parallel(xo)
    return s


def schedule_matmul_cached(C, bn):
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "local")
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    s[C].parallel(xo)
    s[CC].compute_at(s[C], yo)
    ko, ki = s[CC].split(CC.op.reduce_axis[0], factor=4)
    s[CC].reorder(ko, CC.op.axis[0], ki, CC.op.axis[1])
    s[CC].vectorize(CC.op.axis[1])
    s[C].vectorize(yi)
    return s


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(64, 64, 64), (45, 37, 29)], ids=["divisible", "not-divisible"])
@pytest.mark.parametrize("cached", [False, True], ids=["tiled", "cache_write"])
def test_matmul_schedules(target, shape, cached, rng):
    m, n, k_extent = shape
    A, B, C = matmul(m, n, k_extent)
    s = schedule_matmul_cached(C, 8) if cached else schedule_matmul(C, 8, 4)
    mod = anvil.build(s, [A, B, C], target=target, name="matmul")
    a = rng.uniform(-1, 1, (m, k_extent)).astype("float32")
    b = rng.uniform(-1, 1, (k_extent, n)).astype("float32")
    c = anvil.empty((m, n), "float32")
    mod["matmul"](anvil.tensor(a), anvil.tensor(b), c)
    # float32 accumulation over k <= 64 terms of magnitude <= 1
    np.testing.assert_allclose(c.numpy(), f64(a) @ f64(b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_symbolic_shape_kernel_at_several_sizes(target, rng):
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] * 2.0 + te.const(1.0), name="B")
    k = te.reduce_axis((0, n), name="k")
    T = te.compute((3,), lambda j: te.sum(B[k, j], axis=k), name="T")
    s = te.create_schedule(T.op)
    io, ii = s[B].split(B.op.axis[0], factor=4)
    mod = anvil.build(s, [A, T], target=target, name="sym")
    for size in (1, 4, 7, 100):
        a = rng.uniform(-1, 1, (size, 3)).astype("float32")
        t = np.zeros(3, "float32")
        mod["sym"](a, t)
        np.testing.assert_allclose(t, (f64(a) * 2 + 1).sum(axis=0), rtol=1e-5, atol=1e-5, err_msg=f"n={size}")


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_float_param_scales_by_alpha(target, rng):
    n = te.var("n")
    alpha = te.var("alpha", dtype="float32")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * alpha, name="B")
    s = te.create_schedule(B.op)
    f = anvil.lower(s, [A, alpha, B], name="scale")
    assert [p.name for p in f.params] == ["A", "alpha", "B"]
    mod = anvil.build(s, [A, alpha, B], target=target, name="scale")
    for size, value in [(33, 2.5), (8, -0.75)]:
        a = rng.uniform(-1, 1, size).astype("float32")
        b = np.zeros(size, "float32")
        mod["scale"](a, value, b)
        np.testing.assert_allclose(b, f64(a) * value, rtol=1e-6, atol=1e-7)
    b = np.zeros(8, "float32")
    mod["scale"](a, 3, b)                                # an int for a float param
    np.testing.assert_allclose(b, f64(a) * 3, rtol=1e-6)
    with pytest.raises(TypeError, match="alpha"):
        mod["scale"](a, a, b)                            # a tensor for the scalar


@pytest.mark.parametrize("target", TARGETS)
def test_listed_shape_var_is_a_param_checked_against_the_shapes(target, rng):
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    mod = anvil.build(s, [A, n, B], target=target, name="inc")
    a = rng.uniform(-1, 1, 10).astype("float32")
    b = np.zeros(10, "float32")
    mod["inc"](a, 10, b)
    np.testing.assert_allclose(b, f64(a) + 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match=r"inc: argument 'n' is 9 but A\.shape\[0\] is 10 \(A has shape \[n\]\)"):
        mod["inc"](a, 9, b)                              # an assert at the top of the body names n
    with pytest.raises(ValueError, match=r"argument 'n' is 10 but B\.shape\[0\] is 8"):
        mod["inc"](a, 10, np.zeros(8, "float32"))
    f = anvil.lower(s, [A, n, B], name="inc")
    with pytest.raises(ValueError, match=r"argument 'n' is 9 but A\.shape\[0\] is 10"):
        f.interpret(a, 9, b)                             # the reference interpreter checks it too
    b[:] = 0
    mod["inc"](a, 10, b)                                 # the process and the module survive
    np.testing.assert_allclose(b, f64(a) + 1.0, rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_int_scalar_param_in_an_index_expression(target, rng):
    off = te.var("off")                                  # int32, as TVM
    A = te.placeholder((20,), name="A")
    B = te.compute((12,), lambda i: A[i + off], name="B")
    s = te.create_schedule(B.op)
    mod = anvil.build(s, [A, B, off], target=target, name="shift")
    a = rng.uniform(-1, 1, 20).astype("float32")
    for shift in (0, 5, 8):
        b = np.zeros(12, "float32")
        mod["shift"](a, b, shift)
        np.testing.assert_array_equal(b, a[shift:shift + 12])
    f = anvil.lower(s, [A, B, off])
    b = np.zeros(12, "float32")
    f.interpret(a, b, 3)                                 # the reference interpreter takes it too
    np.testing.assert_array_equal(b, a[3:15])


def test_unlisted_free_var_is_an_error_at_lower_time():
    alpha = te.var("alpha", dtype="float32")
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * alpha, name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(ValueError, match="'alpha'.*neither an argument nor a shape variable"):
        anvil.lower(s, [A, B])
    with pytest.raises(ValueError, match="'alpha'"):
        anvil.build(s, [A, B], target="c")
    with pytest.raises(TypeError, match="te.Tensor or a scalar te.var"):
        anvil.lower(s, [A, 2.0, B])
    with pytest.raises(ValueError, match="given twice"):
        anvil.lower(s, [A, alpha, alpha, B])


def test_int32_kernel_floor_division(rng):
    A = te.placeholder((20,), dtype="int32", name="A")
    B = te.compute((20,), lambda i: A[i] // 3 + A[i] % 3 + i, name="B")
    s = te.create_schedule(B.op)
    for target in TARGETS:
        mod = anvil.build(s, [A, B], target=target, name="idiv")
        a = rng.integers(-50, 50, 20).astype("int32")
        b = np.zeros(20, "int32")
        mod["idiv"](a, b)
        np.testing.assert_array_equal(b, a // 3 + a % 3 + np.arange(20), err_msg=target)


def test_build_from_lowered_prim_funcs(rng):
    A = te.placeholder((10,), name="A")
    B = te.compute((10,), lambda i: A[i] * 3.0, name="B")
    C = te.compute((10,), lambda i: A[i] - 1.0, name="C")
    f = anvil.lower(te.create_schedule(B.op), [A, B], name="triple")
    g = anvil.lower(te.create_schedule(C.op), [A, C], name="dec")
    mod = anvil.build([f, g], target="llvm")
    a = rng.uniform(-1, 1, 10).astype("float32")
    b, c = np.zeros(10, "float32"), np.zeros(10, "float32")
    mod["triple"](a, b)
    mod["dec"](a, c)
    np.testing.assert_allclose(b, f64(a) * 3, rtol=1e-6)
    np.testing.assert_allclose(c, f64(a) - 1, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="triple"):
        anvil.build([f, f])


# ---- modules: export, sources, timing, errors ----------------------------------------------


def vector_add(n=64):
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=16)
    s[C].vectorize(xi)
    return s, [A, B, C]


@pytest.mark.parametrize("target", TARGETS)
def test_export_library_and_load_module_round_trip(target, tmp_path, rng):
    s, args = vector_add()
    mod = anvil.build(s, args, target=target, name="vadd")
    path = tmp_path / f"vadd_{target}.so"
    mod.export_library(path)
    loaded = anvil.runtime.load_module(path)
    a, b = rng.uniform(-1, 1, 64).astype("float32"), rng.uniform(-1, 1, 64).astype("float32")
    c = np.zeros(64, "float32")
    loaded["vadd"](a, b, c)
    np.testing.assert_allclose(c, f64(a) + f64(b), rtol=1e-6)


def test_get_source_llvm_ir_asm_and_c():
    s, args = vector_add()
    mod = anvil.build(s, args, target="llvm", name="vadd")
    assert mod.kind == "llvm"
    ll = mod.get_source("ll")
    assert "define" in ll and "vadd" in ll
    assert mod.get_source() == ll
    asm = mod.get_source("asm")
    assert "vadd" in asm
    csrc = anvil.build(s, args, target="c", name="vadd").get_source("c")
    assert "__anvil_fn_vadd" in csrc and "#include" in csrc
    with pytest.raises(ValueError):
        mod.get_source("ptx")


def test_get_source_is_the_global_function_runtime_module_get_source():
    # TVM's name: reachable by name from C++, Python and whatever holds the registry.
    get_source = anvil.get_global_func("runtime.ModuleGetSource")
    s, args = vector_add()
    mod = anvil.build(s, args, target="llvm", name="vadd")
    assert get_source(mod, "ll") == mod.get_source("ll")
    assert get_source(mod, "") == mod.get_source()
    cmod = anvil.build(s, args, target="c", name="vadd")
    assert get_source(cmod, "c") == cmod.get_source()
    with pytest.raises(ValueError, match="has C source only"):
        get_source(cmod, "ll")


@pytest.mark.parametrize("target", TARGETS)
def test_time_evaluator_results_are_positive(target, rng):
    s, args = vector_add(1024)
    mod = anvil.build(s, args, target=target, name="vadd")
    a, b = rng.uniform(-1, 1, 1024).astype("float32"), rng.uniform(-1, 1, 1024).astype("float32")
    c = np.zeros(1024, "float32")
    res = mod.time_evaluator("vadd", anvil.cpu(0), number=5, repeat=3)(a, b, c)
    assert len(res.results) == 3 and all(r > 0 for r in res.results)
    assert res.min <= res.median <= res.max and res.mean > 0 and res.std >= 0
    np.testing.assert_allclose(c, f64(a) + f64(b), rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_wrong_arguments_are_type_and_value_errors(target):
    s, args = vector_add(64)
    f = anvil.build(s, args, target=target, name="vadd")["vadd"]
    x = np.zeros(64, "float32")
    with pytest.raises(TypeError, match="expected 3 arguments"):
        f(x, x)
    with pytest.raises(TypeError, match="dtype"):
        f(x, np.zeros(64, "float64"), x)
    with pytest.raises(ValueError, match="shape"):
        f(x, np.zeros(32, "float32"), x)
    with pytest.raises(TypeError):
        f(x, 3, x)


def test_bad_targets_and_inputs():
    s, args = vector_add()
    with pytest.raises(ValueError):
        anvil.build(s, args, target="nosuchtarget")
    with pytest.raises(ValueError):
        anvil.build(s, args, target="llvm -nosuchoption=1")
    with pytest.raises(TypeError):
        anvil.build("not a schedule", args)
    with pytest.raises(TypeError):
        anvil.build(s)


def test_target_with_a_host_parses_prints_and_compares():
    from anvil.target import Target

    t = Target("vulkan -from_device=0", host="llvm -mcpu=znver4")
    assert t.kind.name == "vulkan"
    assert str(t) == "vulkan -from_device=0 -host=llvm -mcpu=znver4"
    assert t.host == Target("llvm -mcpu=znver4") and t.host.kind.name == "llvm"
    assert t.attrs == {"from_device": 0}
    assert Target(str(t)) == t and hash(Target(str(t))) == hash(t)
    assert Target("vulkan", host="llvm") != Target("vulkan")  # the host is part of the target
    assert Target("vulkan").host is None  # TVM: None when not given (its code is built for llvm)
    assert Target("llvm").host is None and Target("llvm", host="llvm") == Target("llvm")
    assert t.with_host("c").host == Target("c") and t.with_host(None) == Target("vulkan -from_device=0")
    assert Target({"kind": "vulkan", "host": {"kind": "llvm", "mcpu": "znver4"}}).host == Target("llvm -mcpu=znver4")
    assert Target({"kind": "llvm", "fast-math": True, "mattr": ["+avx2", "+fma"]}).attrs == {
        "mattr": ["+avx2", "+fma"],
        "fast-math": True,
    }
    assert "vulkan" in Target.list_kinds()
    with pytest.raises(ValueError, match="host kind"):
        Target("vulkan", host="cuda")
    with pytest.raises(ValueError, match="its own host"):
        Target("llvm", host="c")
    with pytest.raises(TypeError):
        Target(3)


def test_build_takes_targets_with_hosts_and_names_device_kinds_without_a_generator():
    from anvil.target import Target

    s, args = vector_add(16)
    for target in ("c", Target("c"), Target("llvm -opt-level=2")):
        mod = anvil.build(s, args, target=target, name="vadd")
        assert mod.kind == str(target).split()[0]
    a, b, c = (np.arange(16, dtype="float32") for _ in range(3))
    anvil.build(s, args, target="llvm", target_host="llvm", name="vadd")["vadd"](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")  # one serial invocation (no thread axes)
    device_build = anvil.build(te.create_schedule(B.op), [A, B], target=Target("vulkan", host="llvm"), name="inc")
    assert device_build.kind == "llvm" and [m.kind for m in device_build.imported_modules] == ["vulkan"]
    with pytest.raises(NotImplementedError, match="no code generator for target kind 'opencl' yet"):
        anvil.build(s, args, target=Target("opencl", host="llvm"), name="vadd")
    with pytest.raises(NotImplementedError, match="no code generator for target kind 'cuda' yet"):
        anvil.build(s, args, target="cuda", target_host="llvm", name="vadd")
    with pytest.raises(ValueError, match="its own host"):
        anvil.build(s, args, target="llvm", target_host="c", name="vadd")


def test_onnx_model_compiles_and_runs_for_the_c_target(tmp_path):
    """The c target (C source built by cc at export) takes the operator library's schedules too:
    a MatMul, Relu and Softmax model, exported, loaded and run against numpy float64 (rtol 1e-5)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(11)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["r"]),
             helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    anvil.compile(anvil.frontend.from_onnx(model), target="c").export_library(str(tmp_path / "model.so"))
    x = rng.standard_normal((3, 16)).astype(np.float32)
    lib = anvil.runtime.load_module(str(tmp_path / "model.so"))
    y = anvil.runtime.VirtualMachine(lib, anvil.cpu())["main"](x).numpy()
    r = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)
    e = np.exp(r - r.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-6)

# anvil.te / anvil.tir / anvil.lower: expressions and their operators, tensors and schedules,
# lowering (printed TIR, the reference interpreter against numpy) and the errors users meet.
# Numeric references are computed in float64 and compared with float32 results at the stated
# tolerances; inputs are random with the printed per-test seed (conftest.rng).
import numpy as np
import pytest

import anvil
from anvil import te, tir


# ---- expressions ---------------------------------------------------------------------------


def test_operators_build_expressions_with_promoted_dtypes():
    n = te.var("n")
    e = (n + 1) * 2 - n // 3 + n % 4
    assert isinstance(e, tir.PrimExpr)
    assert e.dtype == "int32"
    text = str(e)
    assert "n" in text and "//" in text and "%" in text
    x = te.var("x", "float32")
    assert (x * 0.5 + 1).dtype == "float32"          # literals adopt the expression's dtype
    assert (2 * x).dtype == "float32"
    assert (x / 2).dtype == "float32"
    assert (n < 3).dtype == "bool"
    assert te.var("w", "int64").dtype == "int64"
    assert (n + te.var("w", "int64")).dtype == "int64"  # the narrower integer widens
    assert n.astype("float32").dtype == "float32"
    assert te.exp(x).dtype == "float32" and "exp" in str(te.exp(x))
    assert te.max(x, 1.0).dtype == "float32"          # two expressions: element-wise
    assert tir.const(3).value == 3 and tir.const(1.5, "float64").dtype == "float64"
    assert int(tir.const(7)) == 7
    assert tir.max_value("float32").value == pytest.approx(np.finfo(np.float32).max)


def test_integer_true_division_and_float_literals_on_integers_are_type_errors():
    n = te.var("n")
    with pytest.raises(TypeError, match="ambiguous"):
        n / 2
    with pytest.raises(TypeError):
        n * 0.5
    assert str(tir.truncdiv(n, 2)) != str(tir.floordiv(n, 2))


def test_expressions_are_not_python_bools():
    n = te.var("n")
    with pytest.raises(ValueError, match="te.all"):
        bool(n < 3)
    with pytest.raises(ValueError):
        if n > 1:
            pass
    assert n in [te.var("m"), n]                       # == on expressions is identity for bool()
    assert n != te.var("n")
    assert bool(tir.const(1) == 1)
    assert (te.all(n > 1, n < 5)).dtype == "bool"


def test_tensor_and_axis_properties():
    n = te.var("n")
    A = te.placeholder((n, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k] * 2.0, axis=k), name="B")
    assert A.name == "A" and A.dtype == "float32" and A.ndim == 2
    assert str(A.shape[0]) == "n" and int(A.shape[1]) == 8
    assert B.op.name == "B" and B.op is not None and B.op == B
    assert len(B.op.axis) == 1 and B.op.axis[0].var.name == "i"
    assert [iv.name for iv in B.op.reduce_axis] == ["k"]
    assert k.iter_type == "reduce" and int(k.dom[1]) == 8
    assert B.op.input_tensors == [A]
    assert A[1][2].dtype == "float32"                  # A[i][j] as in TVM
    R = te.compute((n, 8), lambda row, col: A[row, col] + 1.0, name="R")
    assert [iv.var.name for iv in R.op.axis] == ["row", "col"]     # named after the lambda's parameters
    assert [iv.var.name for iv in te.compute((2, 2), lambda *ij: A[ij[0], ij[1]]).op.axis] == ["i", "j"]
    C = te.placeholder(16, dtype="int8", name="C")
    assert C.dtype == "int8" and int(C.shape[0]) == 16
    s = te.create_schedule(B.op)
    assert s[B].same_as(s[B.op])
    assert [t.name for t in s.outputs] == ["B"]
    assert {B: 1}[B.op] == 1                            # tensors hash by identity


def test_compute_arity_and_nested_reductions_are_value_errors():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(ValueError, match="fcompute"):
        te.compute((4, 4), lambda i: A[i, i], name="bad")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(ValueError):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) * 2.0, name="nested")
    with pytest.raises(ValueError):
        A[1, 2, 3]


def test_python_exceptions_in_fcompute_pass_through():
    def boom(i):
        raise KeyError("from the lambda")

    with pytest.raises(KeyError, match="from the lambda"):
        te.compute((4,), boom, name="boom")


# ---- schedules and lowering ----------------------------------------------------------------


def _matmul(m, n, k_extent, dtype="float32"):
    A = te.placeholder((m, k_extent), dtype=dtype, name="A")
    B = te.placeholder((k_extent, n), dtype=dtype, name="B")
    k = te.reduce_axis((0, k_extent), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def test_lower_prints_loop_level_ir():
    A, B, C = _matmul(32, 32, 16)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[C].parallel(xo)
    f = anvil.lower(s, [A, B, C], name="mm", simple_mode=True)
    text = str(f)
    assert f.name == "mm" and text == f.script()
    assert "func mm(" in text and "parallel" in text and "for" in text
    assert len(f.params) == 3


def test_illegal_schedules_raise_value_errors():
    A, B, C = _matmul(16, 16, 16)
    s = te.create_schedule(C.op)
    i = C.op.axis[0]
    s[C].split(i, factor=4)
    with pytest.raises(ValueError, match="C"):
        s[C].split(i, factor=2)                          # no longer a leaf
    with pytest.raises(ValueError):
        s[C].vectorize(C.op.reduce_axis[0])              # a reduction axis
    with pytest.raises(ValueError):
        s[C].split(C.op.axis[1], factor=2, nparts=2)
    with pytest.raises(ValueError):
        s[A].compute_inline()                            # a placeholder
    with pytest.raises(ValueError):
        anvil.lower(s, [A, C])                           # B is read but not an argument
    with pytest.raises(TypeError, match="te.Tensor or a scalar te.var"):
        anvil.lower(te.create_schedule(C.op), [A, B, C, "n"])


def test_lowered_functions_run_in_the_interpreter(rng):
    A, B, C = _matmul(6, 5, 7)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[1], factor=2)
    s[C].reorder(xo, C.op.reduce_axis[0], xi)
    f = anvil.lower(s, [A, B, C])
    a = rng.uniform(-1, 1, (6, 7)).astype("float32")
    b = rng.uniform(-1, 1, (7, 5)).astype("float32")
    c = np.zeros((6, 5), "float32")
    f.interpret(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-5, atol=1e-5)


def test_dump_ir_prints_every_stage(capfd):
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    anvil.lower(te.create_schedule(B.op), [A, B], dump_ir=True)
    err = capfd.readouterr().err
    for stage in ("te::lower", "simplify", "loop_partition", "vectorize", "storage_flatten", "lower_parallel"):
        assert f"after {stage}" in err


def test_more_primitives_run_correctly(rng):
    # cache_read, compute_inline, fuse, split by nparts, unroll, pragma, storage_align: checked
    # in the interpreter and through the llvm build (float64 reference, tolerance 1e-5).
    m, n = 12, 10
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((m, n), lambda i, j: B[i, j] + 1.0, name="C")
    D = te.compute((m, n), lambda i, j: te.sqrt(te.abs(C[i, j])) + C[i, j], name="D")
    s = te.create_schedule(D.op)
    AL = s.cache_read(A, "local", [B])
    s[B].compute_inline()
    s[C].storage_align(C.op.axis[0], 16, 1)
    fo, fi = s[D].split(s[D].fuse(D.op.axis[0], D.op.axis[1]), nparts=5)
    s[D].pragma(fo, "auto_unroll_max_step", 16)
    s[C].compute_at(s[D], fo)
    s[AL].compute_at(s[D], fo)
    co, ci = s[C].split(C.op.axis[1], factor=5)
    s[C].unroll(ci)
    f = anvil.lower(s, [A, D], name="prims")
    a = rng.uniform(-2, 2, (m, n)).astype("float32")
    c64 = a.astype("float64") * 2 + 1
    want = np.sqrt(np.abs(c64)) + c64
    d = np.zeros((m, n), "float32")
    f.interpret(a, d)
    np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-5)
    d2 = np.zeros((m, n), "float32")
    anvil.build(s, [A, D], target="llvm", name="prims")["prims"](a, d2)
    np.testing.assert_allclose(d2, want, rtol=1e-5, atol=1e-5)


def test_bind_to_thread_axes_is_recorded_but_not_built_for_cpu():
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=16)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    assert "threadIdx.x" in str(anvil.lower(s, [A, B]))
    with pytest.raises(NotImplementedError):
        anvil.build(s, [A, B], target="llvm")


def test_bad_shapes_and_dtypes_are_value_and_type_errors():
    with pytest.raises(TypeError, match="not an integer"):
        te.placeholder((2.5, 3))
    with pytest.raises(ValueError, match="negative"):
        te.placeholder((-1, 3), name="neg")
    with pytest.raises(ValueError, match="floaty"):
        te.placeholder((2, 3), dtype="floaty")
    with pytest.raises(TypeError):
        te.reduce_axis(5)
    with pytest.raises(TypeError):
        te.compute((3,), lambda i: "not an expression")
    with pytest.raises(TypeError):
        te.sum(te.var("x", "float32"), axis=te.var("n"))

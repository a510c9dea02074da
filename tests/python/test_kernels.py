# Calling the hand-written kernel library tests/data/test_kernels.c through the kernel ABI:
# tensors in, results out, the thread pool, return values and reported errors.
# Float32 kernels are compared with numpy in float64 (rtol 1e-6: one float32 rounding).
import numpy as np
import pytest

import anvil

RTOL = 1e-6


def test_library_module_shape(kernels):
    assert kernels.kind == "library" and kernels.type_key == "library"
    assert kernels.imports == []
    assert kernels.list_functions() == ["add_one", "vector_add", "scale_parallel", "sum_ints", "fail_always",
                                        "describe"]
    assert kernels.implements_function("add_one")
    assert not kernels.implements_function("nope")


def test_add_one(kernels, make_random):
    x = make_random((3, 17), "float32")
    y = anvil.empty((3, 17), "float32")
    assert kernels["add_one"](anvil.tensor(x), y) is None
    np.testing.assert_allclose(y.numpy(), x.astype(np.float64) + 1.0, rtol=RTOL)


def test_add_one_writes_into_numpy_arrays_directly(kernels, make_random):
    x = make_random((64,), "float32")
    y = np.empty_like(x)
    kernels.get_function("add_one")(x, y)  # numpy arguments travel without a copy
    np.testing.assert_allclose(y, x.astype(np.float64) + 1.0, rtol=RTOL)


def test_vector_add(kernels, make_random):
    a, b = make_random((1000,), "float32"), make_random((1000,), "float32")
    c = anvil.empty((1000,), "float32")
    kernels["vector_add"](anvil.tensor(a), anvil.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), a.astype(np.float64) + b.astype(np.float64), rtol=RTOL)


@pytest.mark.parametrize("alpha", [2.5, 3])
def test_scale_parallel_uses_the_thread_pool(kernels, make_random, alpha):
    assert anvil.runtime.num_threads() >= 1
    x = make_random((100_003,), "float32")
    y = np.empty_like(x)
    kernels["scale_parallel"](x, y, alpha)
    np.testing.assert_allclose(y, x.astype(np.float64) * alpha, rtol=RTOL)


def test_sum_ints_returns_a_value(kernels, rng):
    a, b = (int(v) for v in rng.integers(-(2**40), 2**40, size=2))
    assert kernels["sum_ints"](a, b) == a + b


def test_describe_returns_a_float(kernels, make_random):
    x = make_random((50,), "float32")
    got = kernels["describe"](x)
    assert isinstance(got, float)
    np.testing.assert_allclose(got, x.astype(np.float64).sum(), rtol=1e-6, atol=1e-6)


def test_fail_always_raises_value_error_with_the_message(kernels):
    with pytest.raises(ValueError, match="kernel 'fail_always' failed: fail_always: deliberate failure for tests"):
        kernels["fail_always"]()


def test_wrong_argument_count_is_type_error(kernels):
    with pytest.raises(TypeError, match="add_one expects 2 arguments"):
        kernels["add_one"](anvil.empty((2,), "float32"))


def test_wrong_argument_types_are_type_errors(kernels):
    with pytest.raises(TypeError, match="expected a float32 tensor"):
        kernels["add_one"](anvil.empty((2,), "int32"), anvil.empty((2,), "float32"))
    with pytest.raises(TypeError, match="expected a tensor argument"):
        kernels["add_one"](1.0, anvil.empty((2,), "float32"))
    with pytest.raises(TypeError, match="sum_ints expects 2 int arguments"):
        kernels["sum_ints"](1.5, 2)


def test_array_argument_cannot_reach_a_kernel(kernels):
    with pytest.raises(TypeError, match="cannot be passed to a compiled kernel"):
        kernels["sum_ints"]([1], 2)


def test_strided_numpy_argument_reaches_the_kernel_as_strided(kernels, make_random):
    x = make_random((20,), "float32")
    with pytest.raises(ValueError, match="expected a compact tensor"):
        kernels["describe"](x[::2])


def test_size_mismatch_is_value_error(kernels):
    with pytest.raises(ValueError, match="differ in size"):
        kernels["add_one"](anvil.empty((2,), "float32"), anvil.empty((3,), "float32"))


def test_missing_function_is_value_error(kernels):
    with pytest.raises(ValueError, match="no_such_kernel"):
        kernels["no_such_kernel"]


def test_function_outlives_its_module(kernels_path, make_random):
    mod = anvil.runtime.load_module(kernels_path)
    f = mod["sum_ints"]
    del mod
    assert f(2, 3) == 5
    assert "sum_ints" in repr(f)

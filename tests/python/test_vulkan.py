# Kernels built for `--target vulkan` from Python, run on the machine's Vulkan device (Mesa's
# lavapipe here and in CI, which scripts/setup.sh installs) against numpy in float64: the
# elementwise dtypes, symbolic lengths, a row reduction, scalars, an exported library loaded back,
# the SPIR-V text, and the errors a user meets (a CPU tensor, a wrong shape).
import numpy as np
import pytest

import anvil
from anvil import te

SEED = 20261207


def _vulkan_or_skip():
    dev = anvil.vulkan(0)
    if not dev.exist:
        # Not "not applicable here": scripts/setup.sh installs lavapipe, so under CI=true this fails.
        pytest.skip("no Vulkan device (scripts/setup.sh installs mesa-vulkan-drivers: lavapipe)")
    return dev


def _bind_1d(s, out, threads=64):
    bx, tx = s[out].split(out.op.axis[0], factor=threads)
    s[out].bind(bx, te.thread_axis("blockIdx.x"))
    s[out].bind(tx, te.thread_axis("threadIdx.x"))


def _rand(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-2, 2, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "int64", "int8", "uint8", "int16"])
def test_elementwise_over_dtypes_matches_numpy(dtype):
    dev = _vulkan_or_skip()
    n = 1000  # not a multiple of the 64-thread workgroup: the guard matters
    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    C = te.compute((n,), lambda i: A[i] * B[i] + A[i], name="C")
    s = te.create_schedule(C.op)
    _bind_1d(s, C)
    mod = anvil.build(s, [A, B, C], target="vulkan")
    rng = np.random.default_rng(SEED)
    a, b = _rand(rng, n, dtype), _rand(rng, n, dtype)
    ta, tb = anvil.tensor(a, device=dev), anvil.tensor(b, device=dev)
    tc = anvil.empty((n,), dtype, device=dev)
    mod["main"](ta, tb, tc)
    expect = a * b + a  # the dtype's own wrap-around / rounding, as the kernel computes it
    if np.dtype(dtype).kind == "f":
        ref = a.astype(np.float64) * b + a
        tol = {"float16": 2e-2, "float32": 1e-6, "float64": 1e-12}[dtype]
        np.testing.assert_allclose(tc.numpy().astype(np.float64), ref, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(tc.numpy(), expect)


def test_symbolic_length_and_scalar_argument():
    dev = _vulkan_or_skip()
    n = te.var("n")
    alpha = te.var("alpha", dtype="float32")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: te.exp(A[i]) * alpha, name="B")
    s = te.create_schedule(B.op)
    _bind_1d(s, B, threads=128)
    mod = anvil.build(s, [A, B, alpha], target="vulkan")
    rng = np.random.default_rng(SEED + 1)
    for length in (1, 127, 4099):
        a = rng.uniform(-3, 3, size=length).astype("float32")
        tb = anvil.empty((length,), "float32", device=dev)
        mod["main"](anvil.tensor(a, device=dev), tb, 0.75)
        np.testing.assert_allclose(tb.numpy(), np.exp(a.astype(np.float64)) * 0.75, rtol=1e-5, atol=1e-6)


def test_row_sum_one_thread_per_row():
    dev = _vulkan_or_skip()
    rows, cols = 300, 77
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, cols), name="k")
    B = te.compute((rows,), lambda i: te.sum(A[i, k] * A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    _bind_1d(s, B, threads=32)
    mod = anvil.build(s, [A, B], target="vulkan")
    a = np.random.default_rng(SEED + 2).standard_normal((rows, cols)).astype("float32")
    tb = anvil.empty((rows,), "float32", device=dev)
    mod["main"](anvil.tensor(a, device=dev), tb)
    np.testing.assert_allclose(tb.numpy(), (a.astype(np.float64) ** 2).sum(axis=1), rtol=1e-5)


def _add_one_module():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    _bind_1d(s, B)
    return anvil.build(s, [A, B], target="vulkan", name="add_one")


def test_exported_library_round_trip_and_spirv_source(tmp_path):
    dev = _vulkan_or_skip()
    mod = _add_one_module()
    assert [m.type_key for m in mod.imported_modules] == ["vulkan"]  # host module + device kernels, as TVM
    text = mod.imported_modules[0].get_source("spirv")
    assert "OpEntryPoint GLCompute" in text and "OpCapability Shader" in text
    path = str(tmp_path / "add_one.so")
    mod.export_library(path)
    loaded = anvil.runtime.load_module(path)
    a = np.random.default_rng(SEED + 3).standard_normal(333).astype("float32")
    tb = anvil.empty((333,), "float32", device=dev)
    loaded["add_one"](anvil.tensor(a, device=dev), tb)
    np.testing.assert_allclose(tb.numpy(), a + 1.0, rtol=1e-6)


def test_bad_arguments_name_what_is_wrong():
    dev = _vulkan_or_skip()
    mod = _add_one_module()
    a = np.ones(16, "float32")
    with pytest.raises(ValueError, match="(?i)vulkan"):
        mod["add_one"](anvil.tensor(a), anvil.empty((16,), "float32", device=dev))  # a CPU tensor
    with pytest.raises(ValueError, match="(?i)dtype|float32"):
        mod["add_one"](anvil.tensor(a.astype("float64"), device=dev), anvil.empty((16,), "float32", device=dev))
    with pytest.raises(ValueError, match="n|shape|dimension"):
        mod["add_one"](anvil.tensor(a, device=dev), anvil.empty((17,), "float32", device=dev))


def test_vulkan_tensors_travel_by_dlpack_and_report_device_attributes():
    dev = _vulkan_or_skip()
    x = np.random.default_rng(SEED + 4).standard_normal((3, 5)).astype("float32")
    t = anvil.tensor(x, device=dev)
    assert t.__dlpack_device__() == (7, 0)  # kDLVulkan, as DLPack numbers it
    back = anvil.from_dlpack(t)  # zero-copy: the same device memory
    assert back.device == dev
    np.testing.assert_array_equal(back.numpy(), x)
    assert dev.device_name and dev.max_threads_per_block >= 128 and dev.warp_size >= 1

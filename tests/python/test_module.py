# Modules: load_module failures, C source + params trees exported to a shared library and loaded
# back, params save/load round trips and the allocator queries.
import ctypes

import numpy as np
import pytest

import anvil
from anvil import runtime

from conftest import KERNEL_NAMES, KERNEL_SOURCE


def test_load_missing_file_is_os_error(tmp_path):
    with pytest.raises(OSError, match="cannot open"):
        runtime.load_module(tmp_path / "missing.so")


def test_load_non_library_is_os_error(tmp_path):
    bogus = tmp_path / "not_a_library.so"
    bogus.write_text("this is not ELF\n")
    with pytest.raises(OSError, match="not a loadable shared library"):
        runtime.load_module(bogus)
    with pytest.raises(OSError, match="not a regular file"):
        runtime.load_module(tmp_path)


def test_c_source_module_cannot_run_before_export():
    mod = runtime.c_source_module(KERNEL_SOURCE, KERNEL_NAMES)
    assert mod.kind == "c" and mod.list_functions() == KERNEL_NAMES
    with pytest.raises(NotImplementedError, match="export_library"):
        mod["square"]


def test_exported_tree_comes_back(exported):
    assert exported.kind == "library"
    assert [m.kind for m in exported.imports] == ["params"]
    assert exported.list_functions() == KERNEL_NAMES
    assert "get_param" in exported.imports[0].list_functions()
    assert exported.implements_function("get_param", query_imports=True)
    assert not exported.implements_function("get_param")


def test_exported_kernel_runs(exported, make_random):
    x = make_random((3, 5), "float32")
    y = anvil.empty((3, 5), "float32")
    exported["square"](x, y)
    np.testing.assert_allclose(y.numpy(), x.astype(np.float64) ** 2, rtol=1e-6)


def test_exported_params_are_readable(exported, weights):
    assert exported["num_params"]() == 2
    assert sorted(exported["list_params"]()) == ["bias", "weight"]
    for name, value in weights.items():
        got = exported.get_function("get_param", query_imports=True)(name)
        assert got.dtype == value.dtype.name
        np.testing.assert_array_equal(got.numpy(), value)
    with pytest.raises(ValueError, match="no parameter named 'nope'"):
        exported["get_param"]("nope")
    with pytest.raises(ValueError):
        exported.get_function("get_param", query_imports=False)


def test_export_without_host_code_is_value_error(tmp_path, weights):
    with pytest.raises(ValueError, match="no host code"):
        runtime.params_module(weights).export_library(tmp_path / "x.so")


def test_export_with_broken_source_is_runtime_error(tmp_path):
    with pytest.raises(RuntimeError, match="compiling"):
        runtime.c_source_module("this is not C", ["x"]).export_library(tmp_path / "x.so")


def test_python_callback_through_the_kernel_abi(exported):
    assert exported["call_back"](lambda v: v * 3, 14) == 42


@pytest.mark.parametrize("exc_type", [ValueError, TypeError, IndexError, NotImplementedError, OSError])
def test_python_exception_through_the_kernel_abi_keeps_its_kind(exported, exc_type):
    def fail(v):
        raise exc_type(f"callback saw {v}")

    with pytest.raises(exc_type, match="callback saw 5"):
        exported["call_back"](fail, 5)


def test_python_callback_from_pool_threads(exported):
    seen = []
    assert exported["parallel_call_back"](seen.append) == 4
    assert sorted(seen) == [0, 1, 2, 3]


def test_params_round_trip(make_random):
    params = {dtype: make_random((3, 2), dtype) for dtype in
              ["float16", "float32", "float64", "int8", "uint64", "bool"]}
    params["tensor"] = anvil.tensor(make_random((5,), "int32"))
    data = runtime.save_params(params)
    assert isinstance(data, bytes) and data[:8] == b"ANVLPARM"
    back = runtime.load_params(data)
    assert sorted(back) == sorted(params)
    for name, value in params.items():
        expected = value.numpy() if isinstance(value, anvil.Tensor) else value
        assert back[name].dtype == expected.dtype.name
        np.testing.assert_array_equal(back[name].numpy(), expected)


def test_corrupt_params_are_value_errors():
    with pytest.raises(ValueError):
        runtime.load_params(b"garbage")
    data = runtime.save_params({"w": np.arange(1, 5, dtype=np.float32)})
    with pytest.raises(ValueError):
        runtime.load_params(data[:-3])


def test_params_need_a_dict_of_tensors():
    with pytest.raises(TypeError, match="dict"):
        runtime.save_params([1, 2])
    with pytest.raises(TypeError, match="'w' must be a Tensor"):
        runtime.save_params({"w": 3})


def test_allocator_queries():
    # A VM program allocating one storage block through the allocator under test: the bytes held
    # grow by at least its size while it lives; afterwards the naive allocator holds them no more,
    # the pooled one keeps the block cached until release_unused.
    size = 3 << 20
    b = runtime.ExecBuilder()
    with b.function("main", []):
        b.emit_call("vm.builtin.alloc_storage", [b.vm(), b.imm(size), b.imm(-1), b.void()], dst=0)
        b.emit_ret(0)
    exe = b.get()
    cpu = anvil.cpu(0)
    for kind in ["pooled", "naive"]:
        runtime.release_unused(cpu, kind)
        idle = runtime.allocator_bytes_held(cpu, kind)
        vm = runtime.VirtualMachine(exe, cpu, memory_cfg=kind)
        storage = vm["main"]()
        assert runtime.allocator_bytes_held(cpu, kind) >= idle + size, kind
        del storage, vm
        if kind == "pooled":
            assert runtime.allocator_bytes_held(cpu, kind) >= idle + size  # cached for reuse
        runtime.release_unused(cpu, kind)
        assert runtime.allocator_bytes_held(cpu, kind) == idle, kind
    runtime.release_unused("cpu", "pooled")  # the string form of the device
    assert runtime.allocator_bytes_held("cpu", "pooled") == runtime.allocator_bytes_held(cpu, "pooled")
    with pytest.raises(ValueError, match="unknown allocator"):
        runtime.allocator_bytes_held(anvil.cpu(0), "bogus")


def test_exported_weights_are_bit_exact_and_64_byte_aligned(tmp_path):
    """Random weights of odd sizes (a few MB, seed 11) go through the .incbin blob and come back
    byte for byte; the blob symbol and every loaded weight's data are 64-byte aligned."""
    rng = np.random.default_rng(11)
    print("weights seed: 11")
    weights = {f"w{i}": rng.standard_normal(n).astype(np.float32) for i, n in enumerate([1, 3, 17, 1000, 1 << 19])}
    weights["ids"] = rng.integers(-(1 << 40), 1 << 40, size=(7, 3)).astype(np.int64)
    root = runtime.c_source_module(KERNEL_SOURCE, KERNEL_NAMES)
    root.import_module(runtime.params_module(weights))
    path = tmp_path / "weights.so"
    root.export_library(path)
    loaded = runtime.load_module(path)
    get = loaded.get_function("get_param", query_imports=True)
    for name, value in weights.items():
        got = np.from_dlpack(get(name))
        assert got.tobytes() == value.tobytes(), name
        assert got.ctypes.data % 64 == 0, name
    lib = ctypes.CDLL(str(path))
    blob = ctypes.c_char.in_dll(lib, "__anvil_library_blob")
    size = ctypes.c_uint64.in_dll(lib, "__anvil_library_blob_size").value
    assert ctypes.addressof(blob) % 64 == 0
    assert ctypes.string_at(ctypes.addressof(blob), 8) == b"ANVLBLOB"
    assert size > sum(v.nbytes for v in weights.values())

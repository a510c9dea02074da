# The names a user of Apache TVM 0.27 types, next to Anvil's own: register_global_func,
# runtime.tensor (and empty, from_dlpack, device, cpu, cuda), Device.type / .index /
# .dlpack_device_type(), Module.inspect_source and get_function(name, query_imports=False).
# Where the pip-installed apache-tvm is importable, the values are compared with TVM's own.
import inspect

import numpy as np
import pytest

import anvil
from anvil import te


def _tvm():
    try:
        import tvm
    except Exception:  # noqa: BLE001 - any import failure means "no TVM to compare with"
        return None
    return tvm


def test_register_global_func_is_register_func():
    assert anvil.register_global_func is anvil.register_func

    @anvil.register_global_func("testing.tvm_names.add", override=True)
    def add(a, b):
        return a + b

    try:
        assert anvil.get_global_func("testing.tvm_names.add")(2, 40) == 42
    finally:
        anvil.remove_global_func("testing.tvm_names.add")


def test_runtime_tensor_and_friends_are_the_package_functions(make_random):
    for name in ("tensor", "empty", "from_dlpack", "device", "cpu", "cuda"):
        assert getattr(anvil.runtime, name) is getattr(anvil, name), name
    x = make_random((3, 4), "float32")
    t = anvil.runtime.tensor(x, anvil.runtime.cpu(0))
    np.testing.assert_array_equal(t.numpy(), x)
    assert anvil.runtime.empty((2, 5), "int32").shape == (2, 5)
    assert anvil.runtime.device("cuda", 1) == anvil.cuda(1)


@pytest.mark.parametrize("make, code, name", [
    (anvil.cpu, 1, "cpu"), (anvil.cuda, 2, "cuda"), (anvil.opencl, 4, "opencl"), (anvil.vulkan, 7, "vulkan")])
def test_device_type_index_and_dlpack_device_type(make, code, name):
    dev = make(3)
    assert dev.dlpack_device_type() == code == dev.device_type
    assert dev.type == name
    assert dev.index == 3 == dev.device_id
    tvm = _tvm()
    if tvm is not None:
        theirs = tvm.device(name, 3)
        assert (dev.type, dev.index, dev.dlpack_device_type()) == (theirs.type, theirs.index,
                                                                   theirs.dlpack_device_type())


def _vector_add():
    n = 16
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    return te.create_schedule(C.op), [A, B, C]


def test_inspect_source_is_get_source():
    s, args = _vector_add()
    mod = anvil.build(s, args, target="llvm", name="vadd")
    assert mod.inspect_source() == mod.get_source()
    assert mod.inspect_source("asm") == mod.get_source("asm")
    cmod = anvil.build(s, args, target="c", name="vadd")
    assert "__anvil_fn_vadd" in cmod.inspect_source("c")


def test_get_function_does_not_query_imports_by_default(exported, weights):
    # get_param lives in the params module that the exported library imports.
    assert inspect.signature(anvil.runtime.Module.get_function).parameters["query_imports"].default is False
    with pytest.raises(ValueError, match="get_param"):
        exported.get_function("get_param")
    got = exported.get_function("get_param", query_imports=True)("weight")
    np.testing.assert_array_equal(got.numpy(), weights["weight"])
    exported.get_function("square")  # the library's own kernels need no import lookup
    assert exported["get_param"]("bias").numpy().tolist() == weights["bias"].tolist()  # [] searches imports
    tvm = _tvm()
    if tvm is not None:
        assert inspect.signature(tvm.runtime.Module.get_function).parameters["query_imports"].default is False

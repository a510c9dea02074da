# anvil.runtime.VirtualMachine, Executable and ExecBuilder: programs written with the Python
# builder (a loop around a kernel of the test library), the stateful interface, saved functions
# and time_evaluator, the profiler's report, serialisation and export, and error types.
import csv
import io
import json

import numpy as np
import pytest

import anvil
from anvil.runtime import BenchmarkResult, ExecBuilder, Executable, Report, VirtualMachine
from conftest import KERNEL_NAMES, KERNEL_SOURCE

B = ExecBuilder


def loop_program(kernel_module=None):
    """main(x, out, n): repeat n times out = out + x (vector_add); returns out."""
    b = ExecBuilder()
    with b.function("main", ["x", "out", "n"]):
        b.emit_call("vm.builtin.add", [B.imm(0), B.imm(0)], dst=3)  # i = 0
        head = b.emit_call("vm.builtin.lt", [B.reg(3), B.reg(2)], dst=4)
        branch = b.emit_if(4, 2)  # patched below
        b.emit_call("vector_add", [B.reg(1), B.reg(0), B.reg(1)])
        b.emit_call("vm.builtin.add", [B.reg(3), B.imm(1)], dst=3)
        back = b.emit_goto(-1)
        b.patch_jump(back, head - back)
        b.patch_jump(branch, b.next_instr() - branch)
        b.emit_ret(1)
    exe = b.get()
    if kernel_module is not None:
        exe.import_module(kernel_module)
    return exe


@pytest.fixture
def loop_vm(kernels):
    return VirtualMachine(loop_program(kernels), anvil.cpu(0))


def test_loop_around_a_kernel(loop_vm, make_random):
    x, out = make_random((257,)), make_random((257,))
    expected = out.astype(np.float64) + 3 * x.astype(np.float64)
    result = loop_vm["main"](x, out, 3)  # numpy arrays travel without a copy
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_executable_listing_and_stats(kernels):
    exe = loop_program(kernels)
    text = exe.as_text()
    assert "@main(x, out, n)" in text and "call @vector_add" in text and "ret %1" in text
    assert "1 VM functions" in exe.stats()
    assert exe.list_functions() == ["main"]
    assert isinstance(Executable(exe), Executable)


def test_set_input_invoke_stateful_get_outputs(loop_vm, make_random):
    x, out = anvil.tensor(make_random((16,))), anvil.tensor(np.zeros(16, np.float32))
    loop_vm.set_input("main", x, out=out, n=2)  # keyword arguments by parameter name
    loop_vm.invoke_stateful("main")
    result = loop_vm.get_outputs("main")
    np.testing.assert_allclose(result.numpy(), 2 * x.numpy(), rtol=1e-6)


def test_set_input_keyword_errors(loop_vm):
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match="no parameter named 'y'"):
        loop_vm.set_input("main", x, x, y=1)
    with pytest.raises(TypeError, match="multiple values"):
        loop_vm.set_input("main", x, x, 1, x=x)
    with pytest.raises(TypeError, match="missing arguments: n"):
        loop_vm.set_input("main", x, out=x)
    with pytest.raises(ValueError, match="call set_input first"):
        loop_vm.invoke_stateful("main")


def test_outputs_tuples_and_python_scalars():
    b = ExecBuilder()
    with b.function("pair", ["a", "b"]):
        b.emit_call("vm.builtin.make_tuple", [B.reg(0), B.reg(1)], dst=2)
        b.emit_ret(2)
    vm = VirtualMachine(b.get())
    # Python scalars reach the VM as scalars, not as 0-d tensors (unlike TVM).
    assert vm["pair"](3, 2.5) == [3, 2.5]
    vm.set_input("pair", 7, "seven")
    vm.invoke_stateful("pair")
    assert vm.get_outputs("pair") == [7, "seven"]
    assert vm.get_output("pair", 1) == "seven"
    with pytest.raises(IndexError):
        vm.get_output("pair", 5)


def test_closures_and_recursion():
    b = ExecBuilder()
    b.declare_function("fact", ["n"])
    with b.function("fact", ["n"]):
        b.emit_call("vm.builtin.lt", [B.reg(0), B.imm(2)], dst=1)
        branch = b.emit_if(1, 3)
        b.emit_call("vm.builtin.copy", [B.imm(1)], dst=2)
        b.emit_ret(2)
        assert b.next_instr() - branch == 3
        b.emit_call("vm.builtin.sub", [B.reg(0), B.imm(1)], dst=3)
        b.emit_call("fact", [B.reg(3)], dst=4)
        b.emit_call("vm.builtin.mul", [B.reg(0), B.reg(4)], dst=5)
        b.emit_ret(5)
    with b.function("get_fact"):
        b.emit_call("vm.builtin.copy", [B.func("fact")], dst=0)
        b.emit_ret(0)
    vm = VirtualMachine(b.get(), memory_cfg="naive")
    assert vm["fact"](10) == 3628800
    closure = vm["get_fact"]()
    assert isinstance(closure, anvil.runtime.Object)
    assert vm.invoke_closure(closure, 5) == 120


def test_memory_configs(kernels):
    exe = loop_program(kernels)
    x = np.ones(8, np.float32)
    for cfg in (None, "naive", "pooled", {"cpu": "naive"}, {anvil.cpu(0): "pooled"},
                VirtualMachine.NAIVE_ALLOCATOR, {"cpu": VirtualMachine.POOLED_ALLOCATOR}):
        vm = VirtualMachine(exe, [anvil.cpu(0)], memory_cfg=cfg)
        np.testing.assert_allclose(vm["main"](x, np.zeros(8, np.float32), 2).numpy(), 2 * x)
    with pytest.raises(ValueError, match="unknown allocator"):
        VirtualMachine(exe, memory_cfg="arena")
    with pytest.raises(TypeError, match="memory_cfg"):
        VirtualMachine(exe, memory_cfg=["naive"])
    with pytest.raises(TypeError, match="an Executable, a runtime.Module"):
        VirtualMachine("model.so")


def test_save_function_and_time_evaluator(loop_vm, make_random):
    x, out = make_random((64,)), np.zeros(64, np.float32)
    loop_vm.save_function("main", "main_saved", x, out, 1)
    timer = loop_vm.time_evaluator("main_saved", anvil.cpu(), number=5, repeat=3)
    result = timer()
    assert isinstance(result, BenchmarkResult)
    assert len(result.results) == 3
    assert 0 < result.min <= result.median <= result.max
    assert result.mean > 0 and result.std >= 0
    # 1 warm-up + 3 repeats of 5 calls, each adding x once.
    np.testing.assert_allclose(out, 16 * x.astype(np.float64), rtol=1e-5)
    assert "mean (ms)" in str(result) and "BenchmarkResult(" in repr(result)


def test_time_evaluator_on_invoke_stateful(loop_vm):
    loop_vm.set_input("main", np.ones(8, np.float32), np.zeros(8, np.float32), 1)
    result = loop_vm.time_evaluator("invoke_stateful", anvil.cpu(), number=2, repeat=2, min_repeat_ms=1)("main")
    assert len(result.results) == 2 and result.min > 0


def test_time_evaluator_errors(loop_vm):
    with pytest.raises(ValueError, match="number must be >= 1"):
        loop_vm.time_evaluator("main", anvil.cpu(), number=0)
    with pytest.raises(ValueError, match="no function named 'nope'"):
        loop_vm.time_evaluator("nope", anvil.cpu())
    with pytest.raises(NotImplementedError):
        loop_vm.time_evaluator("main", anvil.cpu(), f_preproc="cache_flush")
    timer = loop_vm.time_evaluator("main", anvil.cpu())
    with pytest.raises(TypeError):
        timer(1, 2, 3)  # the kernel rejects ints: the error surfaces with its type


def test_profile_report(loop_vm, make_random):
    x, out = make_random((4, 16)), np.zeros((4, 16), np.float32)
    report = loop_vm.profile("main", x, out, 3)
    assert isinstance(report, Report)
    table = str(report)
    assert table == report.table()
    for column in ("Name", "Call Site", "Calls", "Total (us)", "Mean (us)", "Percent", "Device",
                   "Argument Shapes", "Total"):
        assert column in table
    rows = {row["name"]: row for row in report.rows}
    assert rows["vector_add"]["calls"] == 3
    assert rows["vector_add"]["call_site"] == "main:3"
    assert rows["vector_add"]["argument_shapes"] == "float32[4, 16], float32[4, 16], float32[4, 16]"
    assert rows["vector_add"]["device"] == "cpu:0"
    total = json.loads(report.json())["total_us"]
    assert total == pytest.approx(sum(r["total_us"] for r in report.rows), rel=0.05)
    lines = list(csv.reader(io.StringIO(report.csv())))
    assert lines[0][:3] == ["Name", "Call Site", "Calls"]
    assert len(lines) == 1 + len(report.rows) and all(len(line) == 8 for line in lines)
    trace = json.loads(report.chrome_trace())
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {"name", "ts", "dur", "pid", "tid"} <= set(events[0])
    assert sum(e["name"] == "vector_add" for e in events) == 3


def test_profile_uses_set_input(loop_vm):
    loop_vm.set_input("main", np.ones(8, np.float32), np.zeros(8, np.float32), 2)
    rows = {row["name"]: row for row in loop_vm.profile("main").rows}
    assert rows["vector_add"]["calls"] == 2


def test_save_and_load_bytes(kernels):
    exe = loop_program()
    data = exe.save_to_bytes()
    assert isinstance(data, bytes)
    again = Executable.load_from_bytes(data)
    assert again.as_text() == exe.as_text()
    again.import_module(kernels)
    vm = VirtualMachine(again)
    np.testing.assert_allclose(vm["main"](np.ones(4, np.float32), np.zeros(4, np.float32), 4).numpy(), 4.0)
    with pytest.raises(ValueError):
        Executable.load_from_bytes(data[: len(data) // 2])


def test_export_library_packs_the_kernels(tmp_path):
    b = ExecBuilder()
    with b.function("main", ["x", "y"]):
        b.emit_call("square", [B.reg(0), B.reg(1)])
        b.emit_ret(1)
    exe = b.get()
    exe.import_module(anvil.runtime.c_source_module(KERNEL_SOURCE, KERNEL_NAMES))
    exe.export_library(tmp_path / "vm.so")
    vm = VirtualMachine(anvil.runtime.load_module(tmp_path / "vm.so"))
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_allclose(vm["main"](x, np.zeros(6, np.float32)).numpy(), x * x)


def test_errors_surface_with_python_types(kernels):
    b = ExecBuilder()
    with b.function("main", ["n"]):
        b.emit_call("fail_always", [], dst=1)
        b.emit_ret(1)
    exe = b.get()
    exe.import_module(kernels)
    vm = VirtualMachine(exe)
    with pytest.raises(ValueError, match="fail_always: deliberate failure"):
        vm["main"](1)
    with pytest.raises(TypeError, match="takes 1 argument"):
        vm["main"]()
    with pytest.raises(ValueError, match="nope"):
        vm["nope"]
    with pytest.raises(ValueError, match="no function named"):
        vm.profile("nope")
    # A program calling a function that exists nowhere fails when the VM is made.
    b = ExecBuilder()
    with b.function("main"):
        b.emit_call("no.such.function", [], dst=0)
        b.emit_ret(0)
    with pytest.raises(ValueError, match="no.such.function"):
        VirtualMachine(b.get())


def test_builder_errors():
    b = ExecBuilder()
    with pytest.raises(ValueError, match="outside a function"):
        b.emit_ret(0)
    b.begin_function("main", ["x"])
    with pytest.raises(TypeError, match="kind, value"):
        b.emit_call("vm.builtin.copy", [0], dst=1)  # a bare int: register or value?
    with pytest.raises(TypeError):
        B.imm(1.5)
    with pytest.raises(ValueError, match="unknown argument kind"):
        b.emit_call("vm.builtin.copy", [("register", 0)], dst=1)
    with pytest.raises(ValueError):
        b.emit_call("vm.builtin.copy", [B.reg(-3)], dst=1)
    b.emit_call("vm.builtin.copy", [B.imm(1 << 60)], dst=1)  # too wide: becomes a constant
    b.emit_ret(1)
    b.end_function()
    vm = VirtualMachine(b.get())
    assert vm["main"](0) == 1 << 60


def test_void_destination_drops_the_result(kernels_path):
    b = ExecBuilder()
    b.begin_function("main", ["x", "y"])
    b.emit_call("vector_add", [b.reg(0), b.reg(1), b.reg(1)], b.void())
    b.emit_ret(1)
    b.end_function()
    exe = b.get()
    exe.import_module(anvil.runtime.load_module(str(kernels_path)))
    vm = VirtualMachine(exe, anvil.cpu(0))
    rng = np.random.default_rng(11)
    x = rng.standard_normal(64).astype("float32")
    y = rng.standard_normal(64).astype("float32")
    ty = anvil.tensor(y)
    vm["main"](anvil.tensor(x), ty)
    np.testing.assert_allclose(ty.numpy(), x + y, rtol=1e-6)

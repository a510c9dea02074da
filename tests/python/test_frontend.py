# The Python end-to-end flow of issue 11 (items 7 and 8): small ONNX graphs built with onnx.helper
# are imported (anvil.frontend.from_onnx), printed, compiled (anvil.compile), run on the VM at two
# batch sizes from one executable and compared with ONNX Runtime; import errors name the node;
# export_library's file runs in a fresh process; the same file runs on `anvil-rpc server` over
# loopback, directly and through a tracker, timed there.
import os
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import anvil
from anvil import rpc
from conftest import random_array, require

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import onnxruntime as ort
except ImportError:  # require() below fails (CI) or skips (elsewhere) with the reason
    onnx = None
require(onnx is not None, "pip packages onnx and onnxruntime (scripts/setup.sh installs them)")

OPSET = 17
F32 = TensorProto.FLOAT


def make_model(nodes, inputs, outputs, initializers=(), name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


def weight(rng, name, shape):
    return numpy_helper.from_array(random_array(rng, shape, np.float32) * 0.5, name)


def ort_run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check_against_ort(exe, model, feeds):
    vm = anvil.runtime.VirtualMachine(exe, anvil.cpu())
    out = vm["main"](*feeds.values())
    outs = out if isinstance(out, list) else [out]
    expected = ort_run(model, feeds)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        got = got.numpy()
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.fixture
def chain(rng):
    """x[N, 4, 6] * scale (initializer) + bias (Constant node) -> Relu -> Transpose -> Reshape to
    [0, -1] (a Constant node) -> Sigmoid, batch N symbolic."""
    bias = helper.make_node("Constant", [], ["bias"], name="bias_const",
                            value=numpy_helper.from_array(random_array(rng, (4, 6), np.float32)))
    shape = helper.make_node("Constant", [], ["shape"], name="target_shape",
                             value=numpy_helper.from_array(np.array([0, -1], np.int64)))
    nodes = [
        bias,
        shape,
        helper.make_node("Mul", ["x", "scale"], ["scaled"], name="scale_mul"),
        helper.make_node("Add", ["scaled", "bias"], ["biased"], name="bias_add"),
        helper.make_node("Relu", ["biased"], ["act"], name="relu"),
        helper.make_node("Transpose", ["act"], ["t"], name="swap", perm=[0, 2, 1]),
        helper.make_node("Reshape", ["t", "shape"], ["flat"], name="flatten"),
        helper.make_node("Sigmoid", ["flat"], ["y"], name="squash"),
    ]
    return make_model(nodes, [helper.make_tensor_value_info("x", F32, ["N", 4, 6])],
                      [helper.make_tensor_value_info("y", F32, ["N", 24])], [weight(rng, "scale", (6,))])


def test_chain_imports_prints_and_matches_ort_at_two_batches(chain, make_random):
    mod = anvil.frontend.from_onnx(chain)
    assert isinstance(mod, anvil.IRModule)
    assert mod.functions == ["main"]
    assert mod.input_names == ["x"] and mod.output_names == ["y"]
    text = str(mod)
    for op in ("multiply", "add", "relu", "transpose", "reshape", "sigmoid"):
        assert op in text, (op, text)
    assert "(N, 4, 6)" in text and "(N, 24)" in text, text  # the symbolic batch, by its dim_param
    assert "const[" in text, text  # the initializer and the Constant nodes
    assert mod.param_types == {"x": "Tensor[(N, 4, 6), float32]"}
    assert "<anvil.IRModule functions=[main]" in repr(mod) and "inputs=[x]" in repr(mod)
    exe = anvil.compile(mod, target="llvm")
    assert isinstance(exe, anvil.runtime.Executable)
    for batch in (1, 5):
        check_against_ort(exe, chain, {"x": make_random((batch, 4, 6))})


def test_reduce_and_broadcast_chain(rng, make_random):
    """ReduceMean over the spatial axes, subtracted back with broadcasting, Exp, ReduceSum."""
    axes = helper.make_node("Constant", [], ["axes"], name="sum_axes",
                            value=numpy_helper.from_array(np.array([1], np.int64)))
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[2, 3], keepdims=1),
        helper.make_node("Sub", ["x", "m"], ["c"], name="center"),
        helper.make_node("Exp", ["c"], ["e"], name="exp"),
        axes,
        helper.make_node("ReduceSum", ["e", "axes"], ["y"], name="sum", keepdims=0),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", F32, ["batch", 3, 5, 7])],
                       [helper.make_tensor_value_info("y", F32, ["batch", 5, 7])])
    mod = anvil.frontend.from_onnx(model)
    assert "batch" in mod.astext()
    exe = anvil.compile(mod)
    for batch in (1, 3):
        check_against_ort(exe, model, {"x": make_random((batch, 3, 5, 7))})


def test_matmul_add_relu_mlp(rng, make_random):
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
        helper.make_node("Relu", ["hb"], ["r"], name="act1"),
        helper.make_node("MatMul", ["r", "w2"], ["y"], name="fc2"),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", F32, ["N", 8])],
                       [helper.make_tensor_value_info("y", F32, ["N", 4])],
                       [weight(rng, "w1", (8, 16)), weight(rng, "b1", (16,)), weight(rng, "w2", (16, 4))])
    mod = anvil.frontend.from_onnx(model)
    assert "(N, 8)" in str(mod)
    exe = anvil.compile(mod)
    for batch in (1, 5):
        check_against_ort(exe, model, {"x": make_random((batch, 8))})


def test_conv_relu_reshape(rng, make_random):
    shape = helper.make_node("Constant", [], ["shape"], name="target_shape",
                             value=numpy_helper.from_array(np.array([0, -1], np.int64)))
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        shape,
        helper.make_node("Reshape", ["r", "shape"], ["y"], name="flatten"),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", F32, ["batch", 3, 6, 6])],
                       [helper.make_tensor_value_info("y", F32, ["batch", 144])],
                       [weight(rng, "w", (4, 3, 3, 3)), weight(rng, "b", (4,))])
    mod = anvil.frontend.from_onnx(model)
    assert "conv2d" in mod.astext()
    exe = anvil.compile(mod)
    for batch in (1, 3):
        check_against_ort(exe, model, {"x": make_random((batch, 3, 6, 6))})


def test_path_bytes_and_pinned_shape(chain, tmp_path, make_random):
    path = tmp_path / "chain.onnx"
    onnx.save(chain, str(path))
    from_path = anvil.frontend.from_onnx(path, shape={"x": (2, 4, 6)})
    assert "(2, 4, 6)" in str(from_path) and "(N, 4, 6)" not in str(from_path)
    from_bytes = anvil.frontend.from_onnx(path.read_bytes(), shape_dict={"x": (None, 4, 6)})
    assert "(N, 4, 6)" in str(from_bytes)
    exe = anvil.compile(from_path, opt_level=0)
    check_against_ort(exe, chain, {"x": make_random((2, 4, 6))})
    vm = anvil.runtime.VirtualMachine(exe, anvil.cpu())
    with pytest.raises(ValueError, match="x"):
        vm["main"](make_random((3, 4, 6)))  # pinned to 2
    with pytest.raises(ValueError, match="x"):
        anvil.frontend.from_onnx(chain, shape={"x": (2, 4)})  # wrong rank
    with pytest.raises(ValueError, match="nope"):
        anvil.frontend.from_onnx(chain, shape={"nope": (2, 4, 6)})


def test_inputs_as_anvil_tensors_and_outputs_through_dlpack(chain, make_random):
    exe = anvil.compile(anvil.frontend.from_onnx(chain))
    vm = anvil.runtime.VirtualMachine(exe, anvil.cpu())
    x = make_random((3, 4, 6))
    tx = anvil.from_dlpack(x)  # shares x's memory
    x[0, 0] = 1.5  # seen through tx: no copy was made
    out = vm["main"](tx)
    assert isinstance(out, anvil.Tensor)
    np.testing.assert_allclose(np.from_dlpack(out), ort_run(chain, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_inputs_by_onnx_name_with_set_input(chain, make_random):
    vm = anvil.runtime.VirtualMachine(anvil.compile(anvil.frontend.from_onnx(chain)), anvil.cpu())
    x = make_random((2, 4, 6))
    vm.set_input("main", x=x)  # main's parameters are named as the model's inputs
    vm.invoke_stateful("main")
    np.testing.assert_allclose(vm.get_outputs("main").numpy(), ort_run(chain, {"x": x})[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="input 'x'"):
        vm["main"](make_random((2, 4, 6)).astype(np.float64))  # wrong dtype names the input


def test_two_outputs_come_back_as_a_list(rng, make_random):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "x"], ["s"], name="sum")]
    model = make_model(nodes, [helper.make_tensor_value_info("x", F32, ["n", 7])],
                       [helper.make_tensor_value_info("r", F32, ["n", 7]),
                        helper.make_tensor_value_info("s", F32, ["n", 7])])
    mod = anvil.frontend.from_onnx(model)
    assert mod.output_names == ["r", "s"]
    exe = anvil.compile(mod)
    out = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](make_random((4, 7)))
    assert isinstance(out, list) and len(out) == 2
    check_against_ort(exe, model, {"x": make_random((2, 7))})


def test_unsupported_operator_names_the_node():
    nodes = [helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], name="roi_pool_7", pooled_shape=[2, 2])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", F32, [1, 3, 8, 8]),
                               helper.make_tensor_value_info("rois", F32, [2, 5])],
                       [helper.make_tensor_value_info("y", F32, [2, 3, 2, 2])])
    with pytest.raises(NotImplementedError, match="roi_pool_7") as info:
        anvil.frontend.from_onnx(model)
    assert "MaxRoiPool" in str(info.value)


def test_malformed_models_are_value_errors(chain, tmp_path):
    with pytest.raises(ValueError, match="onnx"):
        anvil.frontend.from_onnx(b"this is not an ONNX model")
    data = chain.SerializeToString()
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated.onnx"):
        anvil.frontend.from_onnx(truncated)
    with pytest.raises(OSError):
        anvil.frontend.from_onnx(tmp_path / "missing.onnx")
    with pytest.raises(TypeError, match="ModelProto"):
        anvil.frontend.from_onnx(42)
    with pytest.raises(TypeError):
        anvil.compile("not a module")
    with pytest.raises(ValueError, match="opt_level"):
        anvil.compile(anvil.frontend.from_onnx(chain), opt_level=7)


def test_dump_ir_and_progress(chain, tmp_path, capfd):
    out = tmp_path / "ir"
    anvil.compile(anvil.frontend.from_onnx(chain), dump_ir=out, progress=True)
    assert out.is_dir() and any(out.iterdir())
    assert re.search(r"anvil\.compile: kernels \d+/\d+ \(\d+\.\d+ s\)", capfd.readouterr().err)


def test_external_data_resolves_against_the_model_or_base_dir(chain, tmp_path, make_random):
    path = tmp_path / "ext.onnx"
    copy = onnx.ModelProto()
    copy.CopyFrom(chain)  # save_model moves the weights of the model it saves out into the file
    onnx.save_model(copy, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="ext.weights", size_threshold=0)
    assert (tmp_path / "ext.weights").exists()
    x = make_random((2, 4, 6))
    check_against_ort(anvil.compile(anvil.frontend.from_onnx(path)), chain, {"x": x})
    unresolved = onnx.load(str(path), load_external_data=False)  # still refers to ext.weights
    with pytest.raises(ValueError, match="external"):
        anvil.frontend.from_onnx(unresolved)
    check_against_ort(anvil.compile(anvil.frontend.from_onnx(unresolved, base_dir=tmp_path)), chain, {"x": x})


RUN_EXPORTED = textwrap.dedent("""
    import sys
    import numpy as np
    import anvil
    lib = anvil.runtime.load_module(sys.argv[1])
    vm = anvil.runtime.VirtualMachine(lib, anvil.cpu())
    x = np.load(sys.argv[2])
    np.save(sys.argv[3], vm["main"](x).numpy())
""")


def test_export_library_runs_in_a_fresh_process(chain, tmp_path, make_random):
    exe = anvil.compile(anvil.frontend.from_onnx(chain))
    path = tmp_path / "model.so"
    exe.export_library(path)
    x = make_random((6, 4, 6))
    np.save(tmp_path / "x.npy", x)
    subprocess.run([sys.executable, "-c", RUN_EXPORTED, str(path), str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                   check=True, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), ort_run(chain, {"x": x})[0], rtol=1e-5, atol=1e-6)


# -- remote: the standalone anvil-rpc server (runtime only) over loopback --------------------------

class Process:
    """An anvil-rpc command in the background, its log in a file."""

    def __init__(self, tmp_path, *args):
        binary = rpc._find_anvil_rpc()
        require(binary is not None, "anvil-rpc not built (target anvil-rpc, or set ANVIL_RPC_BIN)")
        self.log_path = tmp_path / f"{args[0]}-{time.monotonic_ns()}.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([binary, *args], stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_for(self, pattern, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.log_path.read_text())
            if match:
                return match
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in the log of anvil-rpc (status {self.proc.poll()}):\n"
                             f"{self.log_path.read_text()}")

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


@pytest.fixture
def exported_chain(chain, tmp_path):
    path = tmp_path / "model.so"
    anvil.compile(anvil.frontend.from_onnx(chain)).export_library(path)
    return path


def run_remote(session, path, model, x):
    session.upload(path)
    rexec = session.load_module(path.name)
    dev = session.cpu()
    vm = anvil.runtime.VirtualMachine(rexec, dev)
    rx = anvil.tensor(x, dev)
    out = vm["main"](rx)
    assert isinstance(out, rpc.RemoteTensor)
    np.testing.assert_allclose(out.numpy(), ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-6)
    timing = vm.time_evaluator("main", dev, number=3, repeat=2)(rx)
    assert len(timing.results) == 2 and all(t > 0 for t in timing.results), timing
    print(f"remote main: {timing!r}")


def test_remote_run_on_anvil_rpc_server(exported_chain, chain, tmp_path, make_random):
    # The server is the runtime alone: no compiler in the process that runs the model.
    needed = subprocess.run(["ldd", rpc._find_anvil_rpc()], capture_output=True, text=True, check=True).stdout
    assert "libanvil_runtime" in needed and "libanvil_compiler" not in needed, needed
    server = Process(tmp_path, "server", "--host", "127.0.0.1", "--port", "0", "--port-end", "0")
    try:
        port = int(server.wait_for(r"bind to 127\.0\.0\.1:(\d+)").group(1))
        with rpc.connect("127.0.0.1", port) as session:
            run_remote(session, exported_chain, chain, make_random((3, 4, 6)))
            with pytest.raises(TypeError, match="session"):
                anvil.runtime.VirtualMachine(session.load_module(exported_chain.name), anvil.cpu())
    finally:
        server.close()


def test_remote_run_through_a_tracker(exported_chain, chain, tmp_path, make_random):
    tracker = Process(tmp_path, "tracker", "--host", "127.0.0.1", "--port", "0", "--port-end", "0")
    server = None
    try:
        port = int(tracker.wait_for(r"bind to 127\.0\.0\.1:(\d+)").group(1))
        server = Process(tmp_path, "server", "--host", "127.0.0.1", "--port", "0", "--port-end", "0",
                         "--tracker", f"127.0.0.1:{port}", "--key", "e2e")
        server.wait_for(r"registered with tracker")
        session = rpc.connect_tracker("127.0.0.1", port).request("e2e")
        with session:
            run_remote(session, exported_chain, chain, make_random((2, 4, 6)))
    finally:
        if server:
            server.close()
        tracker.close()


if __name__ == "__main__":
    sys.exit(pytest.main([os.path.abspath(__file__), "-v"]))

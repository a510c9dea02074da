# A loaded library's weights are used where they lie in its .rodata (docs/vm-format.md): loading
# copies none of them, so a model's weights are in memory once; a weight that a function returns
# is handed out as a writable copy; results match numpy.
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import anvil
from anvil import frontend, runtime

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _export(tmp_path, w, b):
    # y = x @ w + b; the Constant b is also returned as it is.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, w.shape[0]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, w.shape[1]])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, list(b.shape))
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["z"], value=numpy_helper.from_array(b)),
         helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "z"], ["y"])],
        "g", [x], [y, z], initializer=[numpy_helper.from_array(w, "w")])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    lib = str(tmp_path / "m.so")
    anvil.compile(frontend.from_onnx(str(path), shape={"x": (2, w.shape[0])}), target="llvm").export_library(lib)
    return lib


def test_results_and_returned_weight_is_writable(tmp_path):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32,)).astype(np.float32)
    lib = _export(tmp_path, w, b)
    vm = runtime.VirtualMachine(runtime.load_module(lib), anvil.cpu())
    x = rng.standard_normal((2, 64)).astype(np.float32)
    y, z = vm["main"](x)
    np.testing.assert_allclose(y.numpy(), x.astype(np.float64) @ w + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(z.numpy(), b)
    # The returned weight is the caller's: writing it (zero-copy through DLPack) is allowed and
    # changes neither the library's copy nor the next result.
    view = np.from_dlpack(z)
    view[:] = 0
    y2, z2 = vm["main"](x)
    np.testing.assert_array_equal(z2.numpy(), b)
    np.testing.assert_allclose(y2.numpy(), y.numpy())


# In a fresh process: the peak RSS that loading adds stays close to the weights' size (it was
# about four times that when the blob's payload was copied twice and the weights once more).
_PROBE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import anvil
    from anvil import runtime
    def hwm():
        return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) * 1024
    before = hwm()
    vm = runtime.VirtualMachine(runtime.load_module(sys.argv[1]), anvil.cpu())
    loaded = hwm()
    y, z = vm["main"](np.ones((2, int(sys.argv[2])), np.float32))
    print(json.dumps({"load": loaded - before}))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_loading_does_not_copy_the_weights(tmp_path):
    w = np.random.default_rng(1).standard_normal((2048, 4096)).astype(np.float32)  # 32 MiB
    lib = _export(tmp_path, w, np.zeros((4096,), np.float32))
    out = subprocess.run([sys.executable, "-c", _PROBE, lib, "2048"], capture_output=True, text=True, check=True)
    added = json.loads(out.stdout.strip().splitlines()[-1])["load"]
    assert added < 1.4 * w.nbytes, f"loading added {added / 2**20:.1f} MiB for {w.nbytes / 2**20:.0f} MiB of weights"

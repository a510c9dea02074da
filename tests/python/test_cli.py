# The `anvil` command as a user meets it (issue #11 items 6 and 8): compile an ONNX model into
# one library, run it with inputs from .npz (numpy's own files, stored and compressed) or
# generated ones, write outputs numpy reads back, match ONNX Runtime, time it, profile it,
# describe models and libraries, and run the same library on an `anvil-rpc server` directly and
# through a tracker. Bad input fails with exit status 1 and a message naming what is wrong;
# usage errors exit 2.
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import SEED, require

ROOT = Path(__file__).resolve().parents[2]


def _find(name):
    build_bin = Path(os.environ.get("ANVIL_BUILD_DIR", ROOT / "build")) / "bin" / name
    return str(build_bin) if build_bin.is_file() else shutil.which(name)


ANVIL = _find("anvil")
ANVIL_RPC = _find("anvil-rpc")
require(ANVIL is not None and ANVIL_RPC is not None, "the anvil and anvil-rpc commands (build targets anvil, anvil-rpc)")


def anvil(*args, timeout=120):
    return subprocess.run([ANVIL, *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """An MLP with a symbolic batch: MatMul (transposed weight) + Add + Relu, then Softmax-free
    scaling by a Mul, two outputs."""
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(SEED)
    w = numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal((8,)).astype(np.float32), "B")
    s = numpy_helper.from_array(np.float32(0.5 + rng.random()), "S")
    nodes = [
        helper.make_node("Transpose", ["W"], ["Wt"], perm=[1, 0]),
        helper.make_node("MatMul", ["x", "Wt"], ["m"]),
        helper.make_node("Add", ["m", "B"], ["a"]),
        helper.make_node("Relu", ["a"], ["hidden"]),
        helper.make_node("Mul", ["hidden", "S"], ["scaled"]),
    ]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", 8]),
                               helper.make_tensor_value_info("scaled", TensorProto.FLOAT, ["batch", 8])], [w, b, s])
    path = d / "mlp.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    lib = d / "mlp.so"
    out = anvil("compile", path, "-o", lib)
    assert out.returncode == 0, out.stderr
    return d, path, lib


def reference(path, x):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})


@pytest.mark.parametrize("saver", [np.savez, np.savez_compressed])
def test_run_reads_numpys_npz_and_writes_outputs_numpy_reads(model, tmp_path, saver):
    _, path, lib = model
    x = np.random.default_rng(SEED + 1).standard_normal((3, 4)).astype(np.float32)
    saver(tmp_path / "in.npz", x=x)
    out = anvil("run", lib, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz", "--repeat", 3)
    assert out.returncode == 0, out.stderr
    got = np.load(tmp_path / "out.npz")
    assert got.files == ["hidden", "scaled"]  # keyed by the model's output names
    for name, ref in zip(got.files, reference(path, x)):
        np.testing.assert_allclose(got[name], ref, rtol=1e-5, atol=1e-6)
    assert re.search(r"latency over 3 runs \(ms\): mean [\d.]+ +median [\d.]+ +std [\d.]+", out.stdout), out.stdout
    assert "hidden  float32[3, 8]" in out.stdout


def test_compile_shows_progress_and_times(model, tmp_path):
    _, path, _ = model
    out = anvil("compile", path, "-o", tmp_path / "m.so", "--input-shapes", "x:2x4", "--dump-ir", tmp_path / "ir")
    assert out.returncode == 0, out.stderr
    for stage in ("import mlp.onnx", "kernels", "link", "total"):
        assert re.search(rf"anvil compile: {stage}.*\d+\.\d\d s", out.stderr), out.stderr
    assert any((tmp_path / "ir").iterdir())
    # The pinned library takes exactly that shape.
    bad = anvil("run", tmp_path / "m.so", "--input-shapes", "x:3x4")
    assert bad.returncode == 1 and "x" in bad.stderr, bad.stderr


def test_generated_inputs_json_and_profile(model):
    _, _, lib = model
    out = anvil("run", lib, "--fill", "random", "--input-shapes", "x:5x4", "--json", "--profile", "--repeat", 4)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["inputs"][0]["shape"] == [5, 4] and report["inputs"][0]["min"] < report["inputs"][0]["max"]
    assert [o["name"] for o in report["outputs"]] == ["hidden", "scaled"]
    assert report["latency_ms"]["repeat"] == 4 and report["latency_ms"]["median"] > 0
    kernels = [r["name"] for r in report["profile"]["rows"] if not r["name"].startswith("vm.builtin.")]
    assert kernels and all(k.startswith("fused_") for k in kernels), report["profile"]  # kernels by name
    text = anvil("run", lib, "--profile", "--repeat", 1)  # symbolic batch defaults to 1, with a note
    assert text.returncode == 0 and "symbolic dim 'batch' set to 1" in text.stderr and "Total" in text.stdout


def test_inspect_model_and_library(model):
    _, path, lib = model
    onnx_text = anvil("inspect", path)
    assert onnx_text.returncode == 0, onnx_text.stderr
    assert "[batch, 4]" in onnx_text.stdout and "MatMul" in onnx_text.stdout
    assert "Tensor[(batch, 8), float32]" in onnx_text.stdout  # inferred, not the declared type
    lib_text = anvil("inspect", lib)
    assert lib_text.returncode == 0, lib_text.stderr
    assert re.search(r"x\s+float32\s+\[batch, 4\]", lib_text.stdout), lib_text.stdout
    assert "memory plan" in lib_text.stdout and "kernels (" in lib_text.stdout


def test_errors_name_what_is_wrong(model, tmp_path):
    d, path, lib = model
    np.savez(tmp_path / "wrong.npz", y=np.ones((1, 4), np.float32))
    out = anvil("run", lib, "--inputs", tmp_path / "wrong.npz")
    assert out.returncode == 1 and "no array 'x'" in out.stderr, out.stderr
    np.savez(tmp_path / "dtype.npz", x=np.ones((1, 4), np.int64))
    out = anvil("run", lib, "--inputs", tmp_path / "dtype.npz")
    assert out.returncode == 1 and "int64" in out.stderr and "float32" in out.stderr, out.stderr
    (tmp_path / "junk.npz").write_bytes(b"PK not really")
    out = anvil("run", lib, "--inputs", tmp_path / "junk.npz")
    assert out.returncode == 1 and "junk.npz" in out.stderr, out.stderr
    (tmp_path / "junk.onnx").write_bytes(b"\x08\x07garbage")
    out = anvil("compile", tmp_path / "junk.onnx", "-o", tmp_path / "j.so")
    assert out.returncode == 1 and "junk.onnx" in out.stderr, out.stderr
    out = anvil("run", tmp_path / "missing.so")
    assert out.returncode == 1 and "missing.so" in out.stderr, out.stderr


def test_usage_errors_exit_2_and_help_everywhere():
    assert anvil().returncode == 2
    assert anvil("frobnicate").returncode == 2
    for command in ("compile", "run", "inspect"):
        out = anvil(command, "--help")
        assert out.returncode == 0 and "--help" in out.stdout, out.stdout
    assert anvil("compile", "m.onnx").returncode == 2  # -o is required
    assert anvil("run", "m.so", "--inputs", "a.npz", "--fill", "zeros").returncode == 2
    assert anvil("run", "m.so", "--rpc", "nohostport").returncode == 2
    out = anvil("run", "m.so", "--rpc-tracker", "127.0.0.1:9190")
    assert out.returncode == 2 and "--rpc-tracker needs --rpc-key" in out.stderr, out.stderr
    version = anvil("--version")
    assert version.returncode == 0 and version.stdout.startswith("anvil ")


class Process:
    def __init__(self, tmp_path, *args):
        self.log_path = tmp_path / f"log-{time.monotonic_ns()}.txt"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([ANVIL_RPC, *map(str, args)], stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_for(self, pattern, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(pattern, self.log_path.read_text())
            if m:
                return m
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in {self.log_path.read_text()}")

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
        self.proc.wait(10)
        self.log.close()


def test_remote_run_on_a_runtime_only_server_directly_and_through_a_tracker(model, tmp_path):
    _, path, lib = model
    x = np.random.default_rng(SEED + 2).standard_normal((2, 4)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    ref = reference(path, x)
    direct = Process(tmp_path, "server", "--host", "127.0.0.1", "--port", "0")
    tracker = Process(tmp_path, "tracker", "--host", "127.0.0.1", "--port", "0")
    pooled = None
    try:
        dport = int(direct.wait_for(r"bind to 127\.0\.0\.1:(\d+)").group(1))
        tport = int(tracker.wait_for(r"bind to 127\.0\.0\.1:(\d+)").group(1))
        pooled = Process(tmp_path, "server", "--host", "127.0.0.1", "--port", "0", "--tracker", f"127.0.0.1:{tport}",
                         "--key", "cli-test")
        pooled.wait_for(r"registered with tracker")
        for where in (["--rpc", f"127.0.0.1:{dport}"], ["--rpc-tracker", f"127.0.0.1:{tport}", "--rpc-key", "cli-test"]):
            out = anvil("run", lib, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz",
                        "--repeat", 3, *where)
            assert out.returncode == 0, out.stderr
            got = np.load(tmp_path / "out.npz")
            for name, r in zip(["hidden", "scaled"], ref):
                np.testing.assert_allclose(got[name], r, rtol=1e-5, atol=1e-6)
            assert "latency over 3 runs" in out.stdout
    finally:
        for p in (pooled, tracker, direct):
            if p is not None:
                p.close()

# anvil.rpc.LocalSession (served by a thread of this process) and anvil.rpc.PopenSession (a child
# `anvil-rpc server --pipe-fds R,W`): every RPCSession method on random data through both, the
# work directory removed on close, a dead child reported at once (not a hang), the child reaped on
# close, TVM's descriptor convention and binaries given as bytes.
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import anvil
from anvil import rpc
from conftest import require

BUILD = Path(anvil.__file__).resolve().parents[2]
ROOT = Path(__file__).resolve().parents[2]
TEST_KERNELS = BUILD / "lib" / "libanvil_test_kernels.so"
HAVE_RPC_BIN = rpc._find_anvil_rpc() is not None


def make_session(kind):
    if kind == "local":
        return rpc.LocalSession()
    require(HAVE_RPC_BIN, "no anvil-rpc binary (target anvil-rpc, or set ANVIL_RPC_BIN)")
    return rpc.PopenSession()


@pytest.fixture(params=["local", "popen"])
def sess(request):
    s = make_session(request.param)
    yield s
    s.close()


def work_dir(s):
    return Path(s.get_function("tvm.rpc.server.workpath")("."))


def test_functions_and_errors(sess, rng):
    addone = sess.get_function("rpc.test.addone")
    for x in rng.integers(-(2**40), 2**40, size=20):
        assert addone(int(x)) == int(x) + 1
    f = float(rng.uniform(-10, 10))
    assert addone(f) == f + 1
    word = "".join(rng.choice(list("abcdefgh"), size=9))
    assert sess.get_function("rpc.test.strcat")(word, 3) == f"{word}:3"
    with pytest.raises(AttributeError):
        sess.get_function("no.such.function")
    with pytest.raises(rpc.RPCError, match="a remote complaint"):
        sess.get_function("rpc.test.except")("a remote complaint")
    assert addone(1) == 2  # the session survives a remote error
    plus = sess.get_function("rpc.test.add_to_lhs")(int(rng.integers(1, 100)))
    assert isinstance(plus, rpc.RemoteFunction)


def test_devices_and_remote_tensors(sess, make_random):
    assert sess.cpu(0).device_type == 1 and sess.device("cpu:0").device_type == 1
    assert sess.cuda(1).device_type == 2 and sess.cuda(1).device_id == 1
    assert sess.cl().device_type == 4 and sess.vulkan().device_type == 7
    dev = sess.cpu(0)
    for shape, dtype in [((7,), "float32"), ((33, 65), "float64"), ((4, 1, 3), "int32"), ((0,), "float32"),
                         ((300, 257), "int8")]:
        x = make_random(shape, dtype)
        a = anvil.tensor(x, dev)
        assert isinstance(a, rpc.RemoteTensor) and a.shape == shape and a.dtype == dtype
        np.testing.assert_array_equal(a.numpy(), x)
        y = make_random(shape, dtype)
        a.copyfrom(y)
        np.testing.assert_array_equal(a.numpy(), y)
        b = sess.tensor(y, dev)
        np.testing.assert_array_equal(np.asarray(b), y)
    e = anvil.empty((5, 6), "float32", dev)
    z = make_random((5, 6), "float32")
    e.copyfrom(z)
    np.testing.assert_array_equal(e.numpy(), z)
    # Remote tensors as arguments and results.
    ones = anvil.tensor(np.ones((3, 4)), dev)  # float64, as TVM's test expects
    sess.get_function("rpc.test.remote_tensor_func")(ones)
    arr = sess.get_function("rpc.test.remote_return_nd")("get_arr")()
    assert isinstance(arr, rpc.RemoteTensor) and arr.shape == (10,)


def test_files(sess, rng, tmp_path):
    blob = rng.integers(0, 256, size=int(rng.integers(1000, 300_000)), dtype=np.uint8).tobytes()
    sess.upload(blob, "blob.bin")
    assert sess.download("blob.bin") == blob
    local = tmp_path / "local.txt"
    text = rng.integers(0, 256, size=999, dtype=np.uint8).tobytes()
    local.write_bytes(text)
    sess.upload(local)
    sess.upload(str(local), target="sub/copy.txt")
    assert sess.download("local.txt") == text and sess.download("sub/copy.txt") == text
    assert sorted(sess.listdir(".")) == ["./blob.bin", "./local.txt", "./sub"]
    assert sess.listdir("sub") == ["sub/copy.txt"]
    for name in ["blob.bin", "local.txt", "sub/copy.txt", "sub"]:
        sess.remove(name)
    assert sess.listdir(".") == []
    with pytest.raises((rpc.RPCError, OSError)):
        sess.download("blob.bin")
    with pytest.raises(ValueError):
        sess.download("../outside")  # confined to the work directory


def test_modules(sess, rng, tmp_path):
    require(TEST_KERNELS.exists(), f"{TEST_KERNELS} not built (target anvil_test_kernels)")
    sess.upload(str(TEST_KERNELS), "kernels.so")
    mod = sess.load_module("kernels.so")
    assert isinstance(mod, rpc.RemoteModule)
    dev = sess.cpu(0)
    x = rng.standard_normal(100).astype("float32")
    y = rng.standard_normal(100).astype("float32")
    c = anvil.empty((100,), "float32", dev)
    mod["vector_add"](anvil.tensor(x, dev), anvil.tensor(y, dev), c)
    np.testing.assert_allclose(c.numpy(), x + y, rtol=1e-6)
    with pytest.raises(AttributeError):
        mod["no_such_kernel"]
    assert sess.download_linked_module("kernels.so") == TEST_KERNELS.read_bytes()
    # An object file is linked on the server.
    obj = tmp_path / "kernels.o"
    cc = subprocess.run(["cc", "-c", "-fPIC", "-I", str(ROOT / "src"), str(ROOT / "tests" / "data" / "test_kernels.c"),
                         "-o", str(obj)], capture_output=True, text=True)
    assert cc.returncode == 0, f"cc failed on the test kernels (the server links with it too): {cc.stderr}"
    sess.upload(obj)
    linked = sess.download_linked_module("kernels.o")
    assert linked[:4] == b"\x7fELF"
    c2 = anvil.empty((100,), "float32", dev)
    sess.load_module("kernels.o")["vector_add"](anvil.tensor(x, dev), anvil.tensor(y, dev), c2)
    np.testing.assert_allclose(c2.numpy(), x + y, rtol=1e-6)
    syslib = sess.system_lib()
    assert isinstance(syslib, rpc.RemoteModule)
    with pytest.raises(AttributeError):
        syslib["nothing_here"]


@pytest.mark.parametrize("kind", ["local", "popen"])
def test_close_removes_the_work_directory(kind):
    s = make_session(kind)
    with s:
        d = work_dir(s)
        assert d.is_dir()
        s.upload(b"x" * 100, "f.bin")
    assert not d.exists()
    assert not s.is_open
    with pytest.raises((rpc.RPCError, OSError, RuntimeError)):
        s.get_function("rpc.test.addone")


def test_local_sessions_are_separate():
    with rpc.LocalSession() as a, rpc.LocalSession() as b:
        assert work_dir(a) != work_dir(b)
        a.upload(b"a", "only_in_a.txt")
        assert a.listdir(".") == ["./only_in_a.txt"]
        assert b.listdir(".") == []
    # The session functions were never registered process-wide.
    assert anvil.get_global_func("tvm.rpc.server.upload", allow_missing=True) is None


def test_local_session_is_quiet_unless_asked(capfd):
    # Issue #14.5: every upload and load printed a server INFO line into the user's program.
    require(TEST_KERNELS.exists(), f"{TEST_KERNELS} not built (target anvil_test_kernels)")
    capfd.readouterr()
    with rpc.LocalSession() as sess:
        sess.upload(b"quiet", "q.txt")
        sess.upload(str(TEST_KERNELS), "kernels.so")
        sess.load_module("kernels.so")
    out, err = capfd.readouterr()
    assert "INFO" not in err and "upload" not in err and "load_module" not in err, err
    with rpc.LocalSession(verbose=True) as sess:
        sess.upload(b"loud", "l.txt")
        sess.upload(str(TEST_KERNELS), "kernels.so")
        sess.load_module("kernels.so")
    out, err = capfd.readouterr()
    assert re.search(r"INFO anvil\.rpc\[\d+\] upload l\.txt \(4 bytes\)", err), err
    assert "load_module kernels.so" in err, err


def test_local_session_calls_python_functions():
    anvil.register_func("test_rpc_sessions.twice", lambda x: 2 * x, override=True)
    try:
        with rpc.LocalSession() as s:
            assert s.get_function("test_rpc_sessions.twice")(21) == 42
    finally:
        anvil.remove_global_func("test_rpc_sessions.twice")


def test_local_session_work_root(tmp_path):
    with rpc.LocalSession(work_root=tmp_path) as s:
        assert work_dir(s).parent == tmp_path.resolve()


def reaped(pid):
    """True when pid is no child of ours, running or zombie (waitpid would reap a zombie: that is
    a failure too)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.skipif(not HAVE_RPC_BIN, reason="no anvil-rpc binary")
def test_popen_close_reaps_the_child():
    s = rpc.PopenSession()
    pid = s.pid
    assert s.get_function("rpc.test.addone")(1) == 2
    assert Path(f"/proc/{pid}").exists()
    s.close()
    assert reaped(pid)  # not our child any more: no zombie
    assert not Path(f"/proc/{pid}").exists()


@pytest.mark.skipif(not HAVE_RPC_BIN, reason="no anvil-rpc binary")
def test_popen_child_death_is_a_clear_error():
    s = rpc.PopenSession()
    addone = s.get_function("rpc.test.addone")
    assert addone(1) == 2
    os.killpg(s.pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises((rpc.RPCError, OSError)) as info:
        addone(2)
    assert time.monotonic() - start < 5
    assert f"server process {s.pid} was killed by signal 9" in str(info.value)
    assert not s.is_open
    assert reaped(s.pid)
    s.close()  # closing again is harmless


@pytest.mark.skipif(not HAVE_RPC_BIN, reason="no anvil-rpc binary")
def test_popen_tvm_convention_and_binary_bytes(tmp_path):
    # TVM passes the two descriptors as the last two arguments; this wrapper, handed over as
    # bytes as TVM allows, turns them into anvil-rpc's flag.
    script = f"#!/bin/sh\nexec '{rpc._find_anvil_rpc()}' server --pipe-fds \"$1,$2\"\n".encode()
    with rpc.PopenSession(script, pipe_args="tvm") as s:
        assert s.get_function("rpc.test.addone")(41) == 42
    path = tmp_path / "server.sh"
    path.write_bytes(script)
    path.chmod(0o700)
    with rpc.PopenSession(str(path), pipe_args="tvm") as s:
        assert s.get_function("rpc.test.strcat")("a", 1) == "a:1"


def test_popen_errors(tmp_path):
    with pytest.raises(RuntimeError, match="does not exist"):
        rpc.PopenSession(tmp_path / "missing")
    plain = tmp_path / "plain.txt"
    plain.write_text("not a program")
    with pytest.raises(RuntimeError, match="not executable"):
        rpc.PopenSession(plain)
    with pytest.raises(ValueError):
        rpc.PopenSession(pipe_args="other")
    # A child that exits at once: its status, not a hang.
    quitter = tmp_path / "quit.sh"
    quitter.write_text("#!/bin/sh\nexit 7\n")
    quitter.chmod(0o700)
    with pytest.raises((rpc.RPCError, OSError), match="exited with status 7"):
        rpc.PopenSession(quitter)


@pytest.mark.skipif(not HAVE_RPC_BIN, reason="no anvil-rpc binary")
def test_popen_server_args(tmp_path):
    with rpc.PopenSession(server_args=["--work-root", str(tmp_path)]) as s:
        assert work_dir(s).parent == tmp_path.resolve()

# Interoperability with Apache TVM: our RPC server (a real process on a free loopback port) driven
# by TVM's own Python client, tvm.rpc.connect. Mirrors TVM's tests/python/runtime/test_runtime_rpc.py
# (function calls with every argument kind, tensors both ways, files, returned functions, tensors
# and objects, session timeout) and adds the isolation and hostile-input cases of the Anvil server.
#
# Skipped, with the reason printed, when `import tvm` fails or the server binary is not built
# (under CI=true those fail instead: conftest.require).
# The server comes from $ANVIL_RPC_SERVER, else <build>/bin/anvil-rpc server, else the test binary.
import gc
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import anvil
from conftest import require

try:
    import tvm
    import tvm.error
    from tvm import rpc
except Exception as exc:  # pragma: no cover - depends on the machine
    require(False, f"test_rpc_interop: apache-tvm is not importable: {exc!r}")

BUILD = Path(anvil.__file__).resolve().parents[2]
# The shipped command (`anvil-rpc server`) when built, else the test binary, else $ANVIL_RPC_SERVER.
if "ANVIL_RPC_SERVER" in os.environ:
    SERVER_BIN = Path(os.environ["ANVIL_RPC_SERVER"])
    SERVER_CMD = [str(SERVER_BIN)]
elif (BUILD / "bin" / "anvil-rpc").exists():
    SERVER_BIN = BUILD / "bin" / "anvil-rpc"
    SERVER_CMD = [str(SERVER_BIN), "server"]
else:
    SERVER_BIN = BUILD / "bin" / "anvil_rpc_server_test_bin"
    SERVER_CMD = [str(SERVER_BIN)]
TEST_KERNELS = BUILD / "lib" / "libanvil_test_kernels.so"
CRASH_KERNELS = BUILD / "lib" / "libanvil_rpc_crash_kernels.so"
RPC_MAGIC = 0xFF271

require(SERVER_BIN.exists(), f"test_rpc_interop: server binary {SERVER_BIN} not built (target anvil_rpc_server_test_bin)")


class ServerProcess:
    """Our server on an ephemeral 127.0.0.1 port; always terminated by the fixture."""

    def __init__(self, *extra):
        self.log = tempfile.NamedTemporaryFile(prefix="anvil-rpc-interop-", suffix=".log", delete=False)
        args = [*SERVER_CMD, "--host", "127.0.0.1", "--port", "0", "--port-end", "0", *extra]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            match = re.search(r"bind to 127\.0\.0\.1:(\d+)", self.text())
            if match:
                self.port = int(match.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"the RPC server did not start:\n{self.text()}")

    def text(self):
        return Path(self.log.name).read_text(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=5)
        self.log.close()
        os.unlink(self.log.name)

    def connect(self, key="", **kwargs):
        return rpc.connect("127.0.0.1", self.port, key=key, **kwargs)


@pytest.fixture
def server():
    s = ServerProcess("--key", "x1", "--handshake-timeout", "1")
    yield s
    print("---- server log ----\n" + s.text())  # shown by pytest only when the test failed
    s.stop()


def test_rpc_simple(server):
    remote = server.connect("x1")
    assert remote.get_function("rpc.test.addone")(10) == 11
    with pytest.raises(RuntimeError, match="abc"):
        remote.get_function("rpc.test.except")("abc")
    assert remote.get_function("rpc.test.strcat")("abc", 11) == "abc:11"
    assert remote.get_function("rpc.test.runtime_str_concat")("abc", "def") == "abcdef"
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_every_argument_kind_round_trips(server):
    remote = server.connect("x1")
    echo = remote.get_function("testing.echo")
    assert echo(1, 2, 3) == 1
    assert echo(100) == 100
    assert echo(-(2**62)) == -(2**62)
    assert echo(2.5) == 2.5
    assert echo(True) is True
    assert echo(None) is None
    assert echo("xyz") == "xyz"
    assert echo("a string longer than seven bytes") == "a string longer than seven bytes"
    assert bytes(echo(bytearray(b"123"))) == b"123"
    assert bytes(echo(b"\x00\x01" * 100)) == b"\x00\x01" * 100
    assert str(echo(tvm.DataType("float32"))) == "float32"
    dev = echo(remote.cpu(0))
    assert dev.dlpack_device_type() == 1 and dev.index == 0
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_errors_keep_the_session(server):
    remote = server.connect("x1")
    with pytest.raises(RuntimeError, match="msg"):
        remote.get_function("testing.test_raise_error")("RuntimeError", "msg")
    with pytest.raises(AttributeError):
        remote.get_function("no.such.function")
    with pytest.raises(AttributeError):
        remote.system_lib()["notexist"]
    remote.cpu().sync()
    assert remote.get_function("rpc.test.addone")(1) == 2
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_rpc_array(server):
    remote = server.connect("x1")
    x = np.ones((3, 4))
    a = tvm.runtime.tensor(x, remote.cpu(0))
    assert str(a.device).startswith("remote")
    np.testing.assert_equal(a.numpy(), x)
    remote.get_function("rpc.test.remote_tensor_func")(a)
    del remote  # ends the session: the server serves one at a time
    gc.collect()


@pytest.mark.parametrize("shape", [(5041, 720), (720, 192), (0,), (7,)])
def test_rpc_large_array_both_ways(server, rng, shape):
    remote = server.connect("x1")
    x = rng.random(shape).astype("float32")
    a = tvm.runtime.tensor(x, remote.cpu(0))
    np.testing.assert_equal(a.numpy(), x)
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_rpc_file_exchange(server, rng):
    remote = server.connect("x1")
    blob = bytearray(rng.integers(0, 256, size=10, dtype=np.uint8).tobytes())
    remote.upload(blob, "dat.bin")
    assert bytes(remote.download("dat.bin")) == bytes(blob)
    assert remote.listdir(".") == "./dat.bin,"
    remote.remove("dat.bin")
    assert remote.listdir(".") == ""
    for bad in ["../escape.bin", "/tmp/anvil-rpc-escape.bin", "a/../../x"]:
        with pytest.raises(RuntimeError, match="session directory|not allowed"):
            remote.upload(bytearray(b"x"), bad)
    assert not Path("/tmp/anvil-rpc-escape.bin").exists()
    with pytest.raises(RuntimeError):
        remote.download("/etc/passwd")
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_outside_files_cannot_be_linked_loaded_or_named_with_control_characters(server, tmp_path):
    # An ".o" that is really a GNU ld script would link this file's bytes into the library that
    # download_linked_module hands back.
    secret = tmp_path / "secret.txt"
    secret.write_text("anvil-outside-bytes")
    script = f"TARGET(binary)\nINPUT({secret})\nTARGET(elf64-x86-64)\n".encode()
    remote = server.connect("x1")
    remote.upload(bytearray(script), "evil.o")
    with pytest.raises(RuntimeError, match="'evil.o' is not accepted as linker input: it is text"):
        remote.download_linked_module("evil.o")
    # runtime.load_module by path stays in the session directory; the same answer whether or not
    # the outside file exists.
    load = remote.get_function("runtime.load_module")
    for outside in [str(TEST_KERNELS), str(tmp_path / "missing.so")]:
        with pytest.raises(RuntimeError, match=f"path '{re.escape(outside)}' leads outside the session directory"):
            load(outside)
    # TVM's client itself cuts a name at a NUL before sending it (Anvil's C++ client sends it
    # whole: server_test.cc); the other control characters reach the server and are refused.
    for name in ["new\nline.txt", "tab\t.txt", "esc\x1b.txt"]:
        with pytest.raises(RuntimeError, match="may not contain NUL or other control characters"):
            remote.upload(bytearray(b"x"), name)
    assert remote.listdir(".") == "./evil.o,"
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_rpc_return_func(server):
    remote = server.connect("x1")
    f = remote.get_function("rpc.test.add_to_lhs")(10)
    assert f(12) == 22
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_rpc_return_tensor(server):
    remote = server.connect("x1")
    m = remote.get_function("rpc.test.remote_return_nd")
    get_arr, get_elem, get_arr_elem = m("get_arr"), m("get_elem"), m("get_arr_elem")
    arr = get_arr()
    assert get_elem(0) == 0.0
    assert get_arr_elem(arr, 0) == 0.0
    np.testing.assert_equal(arr.numpy(), np.zeros(10, "float32"))
    del arr
    gc.collect()
    # The server's tensor outlives the client's handle on it.
    assert get_elem(1) == 0.0
    arr = get_arr()
    assert get_arr_elem(arr, 9) == 0.0
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_rpc_return_remote_object(server):
    remote = server.connect("x1")
    make_shape = remote.get_function("ffi.Shape")
    elem = remote.get_function("rpc.testing.GetShapeElem")
    size = remote.get_function("rpc.testing.GetShapeSize")
    shape = make_shape(2, 3)
    assert elem(shape, 0) == 2 and elem(shape, 1) == 3 and size(shape) == 2
    shape = make_shape(4)  # rebinding frees the first one on the server
    assert size(shape) == 1
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_loaded_module_kernels_and_time_evaluator(server):
    remote = server.connect("x1")
    remote.upload(str(TEST_KERNELS), "kernels.so")
    mod = remote.load_module("kernels.so")
    dev = remote.cpu()
    a = tvm.runtime.tensor(np.arange(16, dtype="float32"), dev)
    b = tvm.runtime.tensor(np.zeros(16, dtype="float32"), dev)
    mod["add_one"](a, b)
    np.testing.assert_equal(b.numpy(), np.arange(16, dtype="float32") + 1)
    timer = mod.time_evaluator("add_one", dev, number=10, repeat=2)
    result = timer(a, b)
    assert len(result.results) == 2 and all(t > 0 for t in result.results)  # seconds per call
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_compiled_function_with_zero_arguments(server):
    remote = server.connect("x1")
    remote.upload(str(CRASH_KERNELS), "crash.so")
    assert remote.load_module("crash.so")["answer"]() == 42
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_segfault_in_a_loaded_library_ends_only_that_session(server):
    remote = server.connect("x1")
    remote.upload(str(CRASH_KERNELS), "crash.so")
    mod = remote.load_module("crash.so")
    with pytest.raises(RuntimeError, match="signal 11|exited with status"):
        mod["segfault"]()
    del remote  # ends the session: the server serves one at a time
    gc.collect()
    del mod  # ends the session: the server serves one at a time
    gc.collect()
    again = server.connect("x1")
    assert again.get_function("rpc.test.addone")(1) == 2
    del again  # ends the session: the server serves one at a time
    gc.collect()
    assert "died of signal 11" in server.text() or "exited with status" in server.text()


def test_rpc_session_timeout_error(server):
    remote = server.connect("x1", session_timeout=1)
    addone = remote.get_function("rpc.test.addone")
    time.sleep(2)
    with pytest.raises(tvm.error.RPCSessionTimeoutError):
        addone(1)
    del remote  # ends the session: the server serves one at a time
    gc.collect()
    again = server.connect("x1")
    assert again.get_function("rpc.test.addone")(1) == 2
    del again  # ends the session: the server serves one at a time
    gc.collect()


def test_unknown_session_constructor_is_refused(server):
    with pytest.raises(tvm.error.RPCError):
        server.connect("x1", session_constructor_args=["rpc.NonExistingConstructor"])
    remote = server.connect("x1", session_constructor_args=["rpc.LocalSession"])
    assert remote.get_function("rpc.test.addone")(1) == 2
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_mismatched_key_is_refused(server):
    with pytest.raises(RuntimeError, match="matches key"):
        server.connect("wrong")


def raw_connection(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def recv_exact(s, n):
    # MSG_WAITALL is not enough: on a socket with a timeout Python may return a partial read
    # (the server writes its reply in two parts).
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        assert chunk, f"the server closed the connection after {len(data)} of {n} bytes (see the server log)"
        data += chunk
    return data


def handshake(port, key=b"client:x1"):
    s = raw_connection(port)
    s.sendall(struct.pack("<ii", RPC_MAGIC, len(key)) + key)
    code, keylen = struct.unpack("<ii", recv_exact(s, 8))
    assert code == RPC_MAGIC
    recv_exact(s, keylen)
    return s


def closed_by_peer(s):
    try:
        s.settimeout(5)
        while True:
            data = s.recv(4096)
            if not data:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
    finally:
        s.close()


def test_hostile_inputs_close_only_that_connection(server):
    # Bad magic; an absurd key length; a silent peer (handshake timeout 1 s).
    s = raw_connection(server.port)
    s.sendall(struct.pack("<i", 0x12345678))
    assert closed_by_peer(s)
    s = raw_connection(server.port)
    s.sendall(struct.pack("<ii", RPC_MAGIC, 0x7FFFFFFF))
    assert closed_by_peer(s)
    assert closed_by_peer(raw_connection(server.port))
    # After the handshake: an oversized length, a truncated packet, an unknown type index.
    s = handshake(server.port)
    s.sendall(struct.pack("<Q", 1 << 40))
    assert closed_by_peer(s)
    s = handshake(server.port)
    s.sendall(struct.pack("<Qi", 100, 2))
    s.shutdown(socket.SHUT_WR)
    assert closed_by_peer(s)
    s = handshake(server.port)
    body = struct.pack("<iQ", 2, 5) + b"0.8.0" + struct.pack("<ii", 1, 42)
    s.sendall(struct.pack("<Q", len(body)) + body)
    assert closed_by_peer(s)
    # The server still serves TVM's client.
    remote = server.connect("x1")
    assert remote.get_function("rpc.test.addone")(41) == 42
    del remote  # ends the session: the server serves one at a time
    gc.collect()
    log = server.text()
    for reason in ["bad magic", "key length", "timed out", "exceeds the limit", "peer closed",
                   "unknown type index 42"]:
        assert reason in log, reason


TRACKER_BIN = BUILD / "bin" / "anvil_rpc_tracker_test_bin"


@pytest.mark.skipif(not TRACKER_BIN.exists(), reason=f"tracker binary {TRACKER_BIN} not built")
def test_tracker_request_reaches_our_server():
    """TVM's client asks a tracker for key "dev" and gets our server, which re-registers after the session."""
    log = tempfile.NamedTemporaryFile(prefix="anvil-rpc-tracker-", suffix=".log", delete=False)
    tracker = subprocess.Popen([str(TRACKER_BIN), "tracker", "--host", "127.0.0.1", "--port", "0", "--port-end", "0"],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = None
    try:
        deadline = time.monotonic() + 20
        port = None
        while port is None and time.monotonic() < deadline:
            match = re.search(r"bind to 127\.0\.0\.1:(\d+)", Path(log.name).read_text(errors="replace"))
            port = int(match.group(1)) if match else None
            time.sleep(0.02)
        assert port, Path(log.name).read_text()
        server = ServerProcess("--key", "dev", "--tracker", f"127.0.0.1:{port}")
        tracker_session = rpc.connect_tracker("127.0.0.1", port)
        deadline = time.monotonic() + 20
        while tracker_session.summary()["queue_info"].get("dev", {}).get("free") != 1:
            assert time.monotonic() < deadline, server.text()
            time.sleep(0.05)
        remote = tracker_session.request("dev", session_timeout=10)
        assert remote.get_function("rpc.test.addone")(41) == 42
        assert tracker_session.summary()["queue_info"]["dev"]["free"] == 0
        del remote  # ends the session: the server serves one at a time
        gc.collect()
        deadline = time.monotonic() + 20
        while tracker_session.summary()["queue_info"]["dev"]["free"] != 1:
            assert time.monotonic() < deadline, server.text()
            time.sleep(0.05)
        remote = tracker_session.request("dev")
        assert remote.get_function("rpc.test.addone")(1) == 2
        del remote  # ends the session: the server serves one at a time
        gc.collect()
    finally:
        if server:
            server.stop()
        tracker.terminate()
        tracker.wait(timeout=10)
        log.close()
        os.unlink(log.name)


# -- behaviours of TVM's own RPC tests that an Anvil server once lacked -----------------------------

def test_strcat_prints_floats_as_python_does(server):
    # TVM's rpc.test.strcat is Python's "%s:%s": the shortest text that reads back the same float.
    remote = server.connect("x1")
    strcat = remote.get_function("rpc.test.strcat")
    assert strcat("a", 0.1) == "a:0.1"
    for value in [1.0, 0.30000000000000004, 1e16, 1e15, 1.5e-05, 0.0001, 123.456, -2.5, float("inf")]:
        assert strcat("a", value) == f"a:{value}", value
    del remote  # ends the session: the server serves one at a time
    gc.collect()


def test_list_global_func_names(server):
    # tvm_ffi.registry.list_global_func_names, run remotely: the functor's (-1) is the count.
    remote = server.connect("x1")
    functor = remote.get_function("ffi.FunctionListGlobalNamesFunctor")()
    count = functor(-1)
    names = [functor(i) for i in range(count)]
    assert count > 10 and names == sorted(set(names))
    for name in ["rpc.test.addone", "testing.echo", "tvm.rpc.server.upload", "tvm.rpc.server.load_module",
                 "runtime.RPCTimeEvaluator", "ffi.FunctionListGlobalNamesFunctor"]:
        assert name in names, name
    with pytest.raises(Exception, match="out of range"):
        functor(count)
    assert remote.get_function("rpc.test.addone")(1) == 2
    del remote, functor  # ends the session: the server serves one at a time
    gc.collect()


@pytest.fixture
def inner():
    s = ServerProcess("--key", "inner", "--handshake-timeout", "1")
    yield s
    print("---- inner server log ----\n" + s.text())
    s.stop()


def connect_through(gateway, inner_port, key="inner", gateway_key="x1"):
    return rpc.connect("127.0.0.1", gateway.port, key=gateway_key,
                       session_constructor_args=["rpc.Connect", "127.0.0.1", inner_port, key, False])


def test_rpc_session_constructor_args_multi_hop(server, inner):
    # TVM's test_rpc_session_constructor_args (check_multi_hop), plus tensors, files and kernels
    # through both hops; the gateway is our server, so is the inner one.
    rng = np.random.default_rng(20261201)
    print("numpy seed 20261201")
    client = connect_through(server, inner.port)
    fecho = client.get_function("testing.echo")
    assert fecho(1, 2, 3) == 1
    assert fecho(100, 2, 3) == 100
    assert fecho("xyz") == "xyz"
    assert bytes(fecho(bytearray(b"123"))) == b"123"
    nd = tvm.runtime.tensor([1, 2, 3], device=client.cpu(0))
    assert nd.numpy()[1] == 2
    x = rng.standard_normal((256, 300)).astype("float32")
    a = tvm.runtime.tensor(x, client.cpu(0))
    np.testing.assert_array_equal(a.numpy(), x)
    blob = bytearray(rng.integers(0, 256, 150_000, dtype=np.uint8).tobytes())
    client.upload(blob, "dat.bin")
    assert client.download("dat.bin") == blob
    with pytest.raises(RuntimeError, match="from the inner server"):
        client.get_function("rpc.test.except")("from the inner server")
    client.upload(str(TEST_KERNELS), "kernels.so")
    mod = client.load_module("kernels.so")
    b = tvm.runtime.tensor(np.zeros((256, 300), "float32"), client.cpu(0))
    mod["add_one"](a, b)
    np.testing.assert_allclose(b.numpy(), x + 1, rtol=1e-6)
    assert len(mod.time_evaluator("add_one", client.cpu(0), number=2, repeat=2)(a, b).results) == 2
    del client, fecho, nd, a, b, mod  # ends both sessions
    gc.collect()
    # The gateway let go of the inner server, which serves one session at a time.
    direct = inner.connect("inner")
    assert direct.get_function("rpc.test.addone")(1) == 2
    del direct
    gc.collect()
    assert "relaying to the RPC server at 127.0.0.1:" in server.text()


def test_rpc_session_constructor_args_errors(server, inner):
    with pytest.raises(tvm.error.RPCError, match="rpc.Connect"):
        connect_through(server, inner.port, key="wrong")
    with pytest.raises(tvm.error.RPCError):
        server.connect("x1", session_constructor_args=["rpc.NonExistingConstructor"])
    with pytest.raises(tvm.error.RPCError, match="port"):
        server.connect("x1", session_constructor_args=["rpc.Connect", "127.0.0.1"])
    # A hop that dies mid-session: the client is told which one, the gateway serves on.
    client = connect_through(server, inner.port)
    addone = client.get_function("rpc.test.addone")
    assert addone(1) == 2
    inner.proc.terminate()  # the inner server goes away (it ends its session with it)
    inner.proc.wait(timeout=10)
    with pytest.raises(tvm.error.RPCError, match="lost the connection to the RPC server at 127.0.0.1"):
        addone(1)
    del client, addone
    gc.collect()
    again = server.connect("x1")
    assert again.get_function("rpc.test.addone")(1) == 2
    del again
    gc.collect()


class TvmServerProcess:
    """TVM's own server (python -m tvm.exec.rpc_server) on a free loopback port."""

    def __init__(self, key):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = tempfile.NamedTemporaryFile(prefix="tvm-rpc-interop-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1", "--port", str(self.port),
             "--port-end", str(self.port + 1), "--key", key],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                # A probe without a handshake: TVM's server logs it and accepts the next one.
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError("TVM's RPC server did not start:\n" + Path(self.log.name).read_text())
                time.sleep(0.2)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=10)
        self.log.close()
        os.unlink(self.log.name)


def test_multi_hop_mixes_with_tvm_servers(server, inner):
    tvm_server = TvmServerProcess("tvm")
    try:
        # Our gateway, TVM's inner server.
        client = connect_through(server, tvm_server.port, key="tvm")
        assert client.get_function("testing.echo")(7) == 7
        x = np.arange(1000, dtype="float32")
        np.testing.assert_array_equal(tvm.runtime.tensor(x, client.cpu(0)).numpy(), x)
        del client
        gc.collect()
        # TVM's gateway (its own rpc.Connect), our inner server.
        client = rpc.connect("127.0.0.1", tvm_server.port, key="tvm",
                             session_constructor_args=["rpc.Connect", "127.0.0.1", inner.port, "inner", False])
        assert client.get_function("rpc.test.strcat")("a", 0.1) == "a:0.1"
        np.testing.assert_array_equal(tvm.runtime.tensor(x, client.cpu(0)).numpy(), x)
        del client
        gc.collect()
    finally:
        tvm_server.stop()

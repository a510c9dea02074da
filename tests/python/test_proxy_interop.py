# Interoperability of Anvil's RPC proxy and --auth-token with stock Apache TVM, over loopback with
# real processes: TVM's client through our proxy to our server and to TVM's server
# (`rpc_server --through-proxy`), our server through TVM's proxy (`tvm.exec.rpc_proxy`, needs
# tornado), tracker mode (our tracker + our proxy, TVM's client asking by key; and TVM's proxy in
# tracker mode with our tracker and two of our servers), a session timeout
# through the proxy, and the auth token: Anvil's Python client with the right, a wrong and no token,
# and TVM's client against a token-protected server (refused at once with a clear message).
#
# Skipped, with the reason printed, when `import tvm` fails or `anvil-rpc` is not built (under
# CI=true those fail instead: conftest.require).
import gc
import os
import re
import signal
import socket
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
    require(False, f"test_proxy_interop: apache-tvm is not importable: {exc!r}")

BUILD = Path(anvil.__file__).resolve().parents[2]
ANVIL_RPC = Path(os.environ.get("ANVIL_RPC_BIN", BUILD / "bin" / "anvil-rpc"))
require(ANVIL_RPC.exists(), f"test_proxy_interop: anvil-rpc not built at {ANVIL_RPC} (set ANVIL_RPC_BIN)")

DEADLINE_S = 30


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    """A child in its own session (so its whole group can be stopped) with its log in a file."""

    def __init__(self, args, env=None):
        self.log = tempfile.NamedTemporaryFile(prefix="anvil-proxy-interop-", suffix=".log", delete=False)
        self.args = [str(a) for a in args]
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
                                     env=env)

    def text(self):
        return Path(self.log.name).read_text(errors="replace")

    def wait_for(self, pattern, timeout=DEADLINE_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.text())
            if match:
                return match
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"{self.args[:3]}: no /{pattern}/ in the log:\n{self.text()}")

    def stop(self):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        try:  # stragglers of the group (TVM's popen workers)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.log.close()
        print(f"---- {' '.join(self.args[:2])} log ----\n{self.text()}")  # shown when a test fails
        os.unlink(self.log.name)


def wait_listening(port, proc):
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        assert proc.proc.poll() is None, proc.text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}:\n{proc.text()}")


@pytest.fixture
def children():
    started = []
    yield started
    for p in reversed(started):
        p.stop()


def our_proxy(children, *extra):
    p = Process([ANVIL_RPC, "proxy", "--host", "127.0.0.1", "--port", "0", "--port-end", "0", *extra])
    children.append(p)
    p.port = int(p.wait_for(r"bind to 127\.0\.0\.1:(\d+)").group(1))
    return p


def our_server(children, *extra, env=None):
    p = Process([ANVIL_RPC, "server", *extra], env=env)
    children.append(p)
    return p


def tvm_connect(port, key, **kwargs):
    """TVM's client to a proxy. No retry needed: a client that arrives before its server waits at
    the proxy until the server dials in."""
    return rpc.connect("127.0.0.1", port, key=key, **kwargs)


def check_session(remote):
    assert remote.get_function("rpc.test.addone")(10) == 11
    dev = remote.cpu(0)
    x = np.random.default_rng(0).random((64, 33)).astype("float32")
    a = tvm.runtime.tensor(x, dev)
    np.testing.assert_array_equal(a.numpy(), x)


def test_tvm_client_through_our_proxy_to_our_server(children):
    proxy = our_proxy(children)
    our_server(children, "--through-proxy", "--host", "127.0.0.1", "--port", proxy.port, "--key", "dev")
    for _ in range(2):  # the server dials again after each session
        remote = tvm_connect(proxy.port, "dev", session_timeout=30)
        check_session(remote)
        del remote
        gc.collect()
    proxy.wait_for(r"paired .*server 'dev'")


def test_tvm_client_through_our_proxy_to_tvm_server(children):
    proxy = our_proxy(children)
    server = Process([sys.executable, "-m", "tvm.exec.rpc_server", "--through-proxy", "--host", "127.0.0.1",
                      "--port", str(proxy.port), "--key", "tvmdev"])
    children.append(server)
    remote = tvm_connect(proxy.port, "tvmdev")
    check_session(remote)
    assert remote.get_function("rpc.test.strcat")("abc", 11) == "abc:11"
    del remote
    gc.collect()


def test_our_server_through_tvm_proxy(children):
    try:
        import tornado  # noqa: F401 - TVM's proxy needs it
    except ImportError as err:
        require(False, f"TVM's rpc_proxy needs tornado: {err!r}")
    port = free_port()
    proxy = Process([sys.executable, "-m", "tvm.exec.rpc_proxy", "--host", "127.0.0.1", "--port", str(port),
                     "--port-end", str(port + 1), "--web-port", "0"])
    children.append(proxy)
    wait_listening(port, proxy)
    our_server(children, "--through-proxy", "--host", "127.0.0.1", "--port", port, "--key", "viatvm")
    remote = tvm_connect(port, "viatvm")
    check_session(remote)
    del remote
    gc.collect()
    # Anvil's own client through TVM's proxy, to a token-protected server of ours.
    our_server(children, "--through-proxy", "--host", "127.0.0.1", "--port", port, "--key", "locked",
               "--auth-token", "tvm-proxy-secret")
    sess = anvil.rpc.connect("127.0.0.1", port, key="locked", auth_token="tvm-proxy-secret")
    assert sess.get_function("rpc.test.addone")(1) == 2
    sess.close()


def test_tracker_mode_tvm_client_requests_a_proxied_server(children):
    tracker = Process([ANVIL_RPC, "tracker", "--host", "127.0.0.1", "--port", "0", "--port-end", "0"])
    children.append(tracker)
    tport = int(tracker.wait_for(r"bind to 127\.0\.0\.1:(\d+)").group(1))
    proxy = our_proxy(children, "--tracker", f"127.0.0.1:{tport}")
    our_server(children, "--through-proxy", "--host", "127.0.0.1", "--port", proxy.port, "--key", "farm")
    session = rpc.connect_tracker("127.0.0.1", tport)
    deadline = time.monotonic() + DEADLINE_S
    while session.summary()["queue_info"].get("farm", {}).get("free") != 1:
        assert time.monotonic() < deadline, proxy.text()
        time.sleep(0.05)
    assert "server:proxy[farm]" in session.text_summary()
    remote = session.request("farm", session_timeout=30)
    check_session(remote)
    del remote
    gc.collect()
    # The server dialled again; the proxy registered it under a new key.
    remote = session.request("farm")
    assert remote.get_function("rpc.test.addone")(1) == 2


def test_session_timeout_through_our_proxy(children):
    proxy = our_proxy(children)
    our_server(children, "--through-proxy", "--host", "127.0.0.1", "--port", proxy.port, "--key", "t")
    remote = tvm_connect(proxy.port, "t", session_timeout=1)
    assert remote.get_function("rpc.test.addone")(1) == 2
    time.sleep(2)
    with pytest.raises(tvm.error.RPCSessionTimeoutError):
        remote.get_function("rpc.test.addone")(1)


def test_auth_token_with_anvil_client(children):
    proxy = our_proxy(children)
    server = our_server(children, "--through-proxy", "--host", "127.0.0.1", "--port", proxy.port, "--key", "sec",
                        env={**os.environ, "ANVIL_RPC_AUTH_TOKEN": "py-secret"})
    with pytest.raises(RuntimeError, match="wrong auth token"):
        anvil.rpc.connect("127.0.0.1", proxy.port, key="sec", auth_token="nope")
    with pytest.raises(RuntimeError, match="requires an auth token"):
        anvil.rpc.connect("127.0.0.1", proxy.port, key="sec", auth_token="")
    sess = anvil.rpc.connect("127.0.0.1", proxy.port, key="sec", auth_token="py-secret")
    assert sess.get_function("rpc.test.addone")(41) == 42
    sess.close()
    server.wait_for("wrong auth token")


def test_tvm_client_against_token_server_fails_cleanly(children):
    port = free_port()
    server = our_server(children, "--host", "127.0.0.1", "--port", port, "--port-end", port + 1, "--key", "x",
                        "--auth-token", "s3cr3t-zz")
    server.wait_for(r"bind to 127\.0\.0\.1:")
    # The server hid the token from `ps`.
    assert b"s3cr3t-zz" not in Path(f"/proc/{server.proc.pid}/cmdline").read_bytes()
    start = time.monotonic()
    with pytest.raises(tvm.error.RPCError, match="requires an auth token"):
        rpc.connect("127.0.0.1", port, key="x")
    assert time.monotonic() - start < 5, "the TVM client should fail at once, not wait for a timeout"
    server.wait_for("without answering the auth challenge")
    # The server keeps serving, and Anvil's client with the token gets in.
    sess = anvil.rpc.connect("127.0.0.1", port, key="x", auth_token="s3cr3t-zz")
    assert sess.get_function("rpc.test.addone")(1) == 2
    sess.close()


def test_listening_warning_only_beyond_loopback(children):
    exposed = our_server(children, "--host", "0.0.0.0", "--port", "0", "--port-end", "0")
    exposed.wait_for(r"bind to 0\.0\.0\.0:\d+")
    exposed.wait_for("without --auth-token")
    local = our_server(children, "--host", "127.0.0.1", "--port", "0", "--port-end", "0")
    local.wait_for(r"bind to 127\.0\.0\.1:\d+")
    time.sleep(0.2)
    assert "without --auth-token" not in local.text()


def test_tvm_proxy_in_tracker_mode_with_our_tracker_and_server(children):
    """TVM's own test_rpc_tracker_via_proxy, with our tracker and our server under TVM's proxy."""
    try:
        import tornado  # noqa: F401 - TVM's proxy needs it
    except ImportError as err:
        require(False, f"TVM's rpc_proxy needs tornado: {err!r}")
    tracker = Process([ANVIL_RPC, "tracker", "--host", "127.0.0.1", "--port", "0", "--port-end", "0"])
    children.append(tracker)
    tport = int(tracker.wait_for(r"bind to 127\.0\.0\.1:(\d+)").group(1))
    port = free_port()
    proxy = Process([sys.executable, "-m", "tvm.exec.rpc_proxy", "--host", "127.0.0.1", "--port", str(port),
                     "--port-end", str(port + 1), "--web-port", "0", "--tracker", f"127.0.0.1:{tport}"])
    children.append(proxy)
    wait_listening(port, proxy)
    for _ in range(2):
        our_server(children, "--through-proxy", "--host", "127.0.0.1", "--port", port, "--key", "xyz")
    session = rpc.connect_tracker("127.0.0.1", tport)
    deadline = time.monotonic() + DEADLINE_S
    while session.summary()["queue_info"].get("xyz", {}).get("free") != 2:
        assert time.monotonic() < deadline, f"{session.summary()}\n{proxy.text()}"
        time.sleep(0.1)
    first = session.request("xyz", session_timeout=30)
    second = session.request("xyz", session_timeout=30)
    assert first.get_function("rpc.test.addone")(1) == 2
    assert second.get_function("rpc.test.addone")(2) == 3

# anvil.rpc.Server (TVM's tvm.rpc.Server): starts `anvil-rpc server` as a child, reports the port
# it bound, serves Anvil's and TVM's clients, registers with a tracker by key, refuses clients
# without the token when given one, and terminate() stops it and its sessions.
import os
import re
import subprocess
import time

import numpy as np
import pytest

import anvil
from anvil import rpc
from conftest import require

require(rpc._find_anvil_rpc() is not None, "no anvil-rpc binary (target anvil-rpc, or set ANVIL_RPC_BIN)")


def test_server_serves_anvil_and_tvm_clients_then_terminates(rng):
    server = rpc.Server(host="127.0.0.1", port=0, port_end=0, silent=True)
    assert server.port and server.port > 0
    sess = rpc.connect("127.0.0.1", server.port)
    a = rng.standard_normal(1000).astype("float32")
    remote = anvil.tensor(a, sess.cpu())
    np.testing.assert_array_equal(remote.numpy(), a)
    assert sess.get_function("rpc.test.addone")(41) == 42
    sess.close()
    try:
        from tvm import rpc as tvm_rpc
    except Exception as exc:  # noqa: BLE001 - any import failure means: no TVM peer here
        require(False, f"the TVM client case needs apache-tvm: {exc!r}")
    remote = tvm_rpc.connect("127.0.0.1", server.port)
    assert remote.get_function("rpc.test.strcat")("x", 3) == "x:3"
    del remote
    pid = server.proc.pid
    server.terminate()
    assert server.proc.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    server.terminate()  # twice is fine


@pytest.fixture
def tracker_port():
    """An `anvil-rpc tracker` on a free loopback port."""
    binary = rpc._find_anvil_rpc()
    proc = subprocess.Popen([binary, "tracker", "--host", "127.0.0.1", "--port", "0", "--port-end", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        port = None
        for line in proc.stdout:
            match = re.search(r"bind to 127\.0\.0\.1:(\d+)", line)
            if match:
                port = int(match.group(1))
                break
        assert port
        yield port
    finally:
        proc.kill()
        proc.wait()


def wait_until_free(session, key, server):
    deadline = time.monotonic() + 30
    while session.summary()["queue_info"].get(key, {}).get("free") != 1:
        assert time.monotonic() < deadline, server.output
        time.sleep(0.05)


def test_server_registers_with_a_tracker_by_key(tracker_port):
    with rpc.Server(host="127.0.0.1", port=0, port_end=0, key="pyserver", tracker_addr=("127.0.0.1", tracker_port),
                    silent=True) as server:
        session = rpc.connect_tracker("127.0.0.1", tracker_port)
        wait_until_free(session, "pyserver", server)
        remote = session.request("pyserver")
        assert remote.get_function("rpc.test.addone")(1) == 2
        remote.close()
        session.close()


def test_tracker_request_passes_the_auth_token(tracker_port, monkeypatch):
    monkeypatch.delenv("ANVIL_RPC_AUTH_TOKEN", raising=False)
    with rpc.Server(host="127.0.0.1", port=0, port_end=0, key="locked", tracker_addr=("127.0.0.1", tracker_port),
                    auth_token="farm-secret", silent=True) as server:
        session = rpc.connect_tracker("127.0.0.1", tracker_port)
        wait_until_free(session, "locked", server)
        with pytest.raises(RuntimeError, match="(?i)auth|token"):
            session.request("locked", max_retry=1)
        wait_until_free(session, "locked", server)  # the refused session gave the server back
        remote = session.request("locked", auth_token="farm-secret")
        assert remote.get_function("rpc.test.addone")(41) == 42
        remote.close()
        assert session.request_and_run("locked", lambda s: s.get_function("rpc.test.addone")(1),
                                       auth_token="farm-secret") == 2
        session.close()


def test_server_with_a_token_refuses_clients_without_it():
    with rpc.Server(host="127.0.0.1", port=0, port_end=0, auth_token="py-secret", silent=True) as server:
        assert "py-secret" not in " ".join(server.proc.args)
        sess = rpc.connect("127.0.0.1", server.port, auth_token="py-secret")
        assert sess.get_function("rpc.test.addone")(2) == 3
        sess.close()
        with pytest.raises(Exception, match="(?i)auth|token"):
            rpc.connect("127.0.0.1", server.port, auth_token="")


def test_server_that_cannot_start_says_why():
    with pytest.raises(RuntimeError, match="anvil-rpc server"):
        rpc.Server(host="not-an-address", port=0, port_end=0, silent=True, start_timeout=10)
    with pytest.raises(ValueError, match="needs a key"):
        rpc.Server(host="127.0.0.1", tracker_addr=("127.0.0.1", 1))

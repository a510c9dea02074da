# The `anvil-rpc` command line as a user meets it (issue #14.5): usage errors exit with status 2
# and say what is wrong before anything binds; every port is range-checked; --version prints the
# version of CMakeLists.txt's project(); --host takes IPv6 literals and host names; a bind error
# keeps its reason and names the tool once; tracker and server log in one format.
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

import anvil
from anvil import rpc

ROOT = Path(__file__).resolve().parents[2]
BIN = rpc._find_anvil_rpc()
if BIN is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("anvil-rpc not found (build target anvil-rpc, or set ANVIL_RPC_BIN)")
    pytest.skip("anvil-rpc not built (target anvil-rpc, or set ANVIL_RPC_BIN)", allow_module_level=True)

# One format for every process anvil-rpc runs: "2024-06-11 12:00:00.123 INFO anvil.rpc[42] ...".
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (INFO|WARNING|ERROR) anvil\.rpc\[\d+\] \S")


def run(*args, timeout=20):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(anvil VERSION ([0-9.]+)", text).group(1)


def test_version_from_the_one_source():
    expected = f"anvil-rpc {project_version()}"
    for args in (["--version"], ["server", "--version"], ["tracker", "--version"], ["proxy", "--version"],
                 ["query", "--version"]):
        out = run(*args)
        assert out.returncode == 0, (args, out.stderr)
        assert out.stdout.strip() == expected, (args, out.stdout)


BAD_PORTS = [("70000", "out of range"), ("-5", "out of range"), ("65536", "out of range"),
             ("abc", "is not a port number"), ("9090x", "is not a port number")]
PORT_FLAGS = [(command, flag) for command in ("server", "tracker", "proxy", "query") for flag in ("--port", "--port-end")
              if not (command == "query" and flag == "--port-end")]  # query has no --port-end


@pytest.mark.parametrize("command,flag", PORT_FLAGS)
@pytest.mark.parametrize("value,why", BAD_PORTS)
def test_bad_ports_are_usage_errors(command, flag, value, why):
    if flag == "--port-end" and value == "65536":
        value = "65537"  # 65536 is a valid exclusive end
    out = run(command, "--host", "127.0.0.1", flag, value, timeout=10)
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert f"{flag}: " in out.stderr and why in out.stderr and value in out.stderr, out.stderr
    assert "bind to" not in out.stderr + out.stdout
    assert f"anvil-rpc {command}: error:" in out.stderr, out.stderr


def test_tracker_http_port_is_range_checked():
    out = run("tracker", "--host", "127.0.0.1", "--http-port", "70000", timeout=10)
    assert out.returncode == 2 and "--http-port: 70000 is out of range" in out.stderr, out.stderr


@pytest.mark.parametrize("command", ["server", "tracker", "proxy", "query"])
def test_unknown_flag_exits_2(command):
    out = run(command, "--no-such-flag", timeout=10)
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "--no-such-flag" in out.stderr and "--help" in out.stderr, out.stderr


def test_unknown_command_exits_2():
    out = run("serve")
    assert out.returncode == 2 and "unknown command 'serve'" in out.stderr, out.stderr


@pytest.mark.parametrize("command", ["server", "proxy"])
@pytest.mark.parametrize("tracker,why", [("localhost", "has no port"), ("localhost:", "bad port"),
                                         ("localhost:99999", "out of range"), (":9190", "has no host"),
                                         ("[::1", "no closing"), ("host:abc", "not a port number")])
def test_tracker_address_checked_before_binding(command, tracker, why):
    key = ["--key", "k"] if command == "server" else []
    out = run(command, "--host", "127.0.0.1", "--port", "0", "--port-end", "0", *key, "--tracker", tracker,
              timeout=10)
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "--tracker" in out.stderr and why in out.stderr and "host:port" in out.stderr, out.stderr
    assert "bind to" not in out.stderr + out.stdout, out.stderr


def test_server_needs_key_with_tracker_is_a_usage_error():
    out = run("server", "--host", "127.0.0.1", "--tracker", "127.0.0.1:9190", timeout=10)
    assert out.returncode == 2 and "--tracker needs --key" in out.stderr, out.stderr


class Running:
    """An anvil-rpc process whose log (stdout + stderr) goes to a file, read while it runs."""

    def __init__(self, tmp_path, *args):
        self.log_path = tmp_path / f"log-{time.monotonic_ns()}.txt"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([BIN, *args], stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def text(self):
        return self.log_path.read_text()

    def wait_for(self, pattern, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.text())
            if match:
                return match
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in the log (status {self.proc.poll()}):\n{self.text()}")

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
        self.proc.wait(10)
        self.log.close()


def test_server_binds_ipv6_loopback_and_host_names(tmp_path):
    v6 = Running(tmp_path, "server", "--host", "::1", "--port", "0", "--port-end", "0")
    named = Running(tmp_path, "server", "--host", "localhost", "--port", "0", "--port-end", "0")
    try:
        port6 = int(v6.wait_for(r"bind to \[::1\]:(\d+)").group(1))
        port4 = int(named.wait_for(r"bind to localhost:(\d+)").group(1))
        with rpc.connect("::1", port6) as sess:
            assert sess.get_function("rpc.test.addone")(41) == 42
        with rpc.connect("localhost", port4) as sess:
            assert sess.get_function("rpc.test.addone")(1) == 2
        with rpc.connect("127.0.0.1", port4) as sess:  # localhost is 127.0.0.1, as clients expect
            assert sess.get_function("rpc.test.addone")(2) == 3
        # Bound to IPv6 loopback only: not reachable over IPv4.
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port6), timeout=2).close()
    finally:
        v6.close()
        named.close()


def test_tracker_and_query_over_ipv6(tmp_path):
    tracker = Running(tmp_path, "tracker", "--host", "::1", "--port", "0", "--port-end", "0")
    try:
        port = int(tracker.wait_for(r"bind to \[::1\]:(\d+)").group(1))
        out = run("query", "--host", "::1", "--port", str(port))
        assert out.returncode == 0, out.stderr
        assert "Queue Status" in out.stdout, out.stdout
    finally:
        tracker.close()


@pytest.mark.parametrize("command,tool", [("server", None), ("tracker", "tracker"), ("proxy", "proxy")])
def test_bind_error_keeps_its_reason_and_names_the_tool_once(command, tool):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        out = run(command, "--host", "127.0.0.1", "--port", str(port), "--port-end", str(port + 1), timeout=20)
    finally:
        taken.close()
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert "Address already in use" in out.stderr, out.stderr
    assert f"127.0.0.1:{port}" in out.stderr or f"[{port}, {port + 1})" in out.stderr, out.stderr
    if tool:
        assert out.stderr.count(f"{tool}:") == 1, out.stderr
    assert f"anvil-rpc {command}:" not in out.stderr, out.stderr
    errors = [line for line in out.stderr.splitlines() if " ERROR " in line]
    assert errors and all(LOG_LINE.match(line) for line in errors), out.stderr


def test_tracker_and_server_log_in_one_format(tmp_path):
    tracker = Running(tmp_path, "tracker", "--host", "127.0.0.1", "--port", "0", "--port-end", "0")
    server = None
    try:
        port = int(tracker.wait_for(r"bind to 127\.0\.0\.1:(\d+)").group(1))
        server = Running(tmp_path, "server", "--host", "127.0.0.1", "--port", "0", "--port-end", "0",
                         "--tracker", f"127.0.0.1:{port}", "--key", "fmt")
        server.wait_for(r"registered with tracker")
        for proc in (tracker, server):
            lines = [line for line in proc.text().splitlines() if line.strip()]
            assert lines
            assert all(LOG_LINE.match(line) for line in lines), proc.text()
    finally:
        if server:
            server.close()
        tracker.close()


def test_python_server_class_on_ipv6():
    with rpc.Server(host="::1", port=0, port_end=1, silent=True) as server:
        assert server.port > 0
        with rpc.connect("::1", server.port) as sess:
            assert sess.get_function("rpc.test.addone")(5) == 6

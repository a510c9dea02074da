# anvil.rpc.Server: start an `anvil-rpc server` from Python, with the arguments of TVM's
# tvm.rpc.Server. The server runs as a child process (as TVM's does by default); this object owns
# it: `port` is where it listens, `terminate()` stops it and reaps it.
"""An RPC server started from Python (TVM's ``tvm.rpc.Server``)."""
import os
import re
import subprocess
import sys
import threading
import time
from collections import deque

_BIND_LINE = re.compile(r"bind to (\[[^\]\s]+\]|[^\s:]+):(\d+)")  # "127.0.0.1:9091", "[::1]:9091"


class Server:
    """Start Anvil's RPC server (``anvil-rpc server``) in a child process.

    Parameters follow ``tvm.rpc.Server``:

    host, port, port_end : where to listen; the first free port in ``[port, port_end)`` is used
        (``port`` tells which). With ``is_proxy=True``, the proxy's address to dial instead.
    is_proxy : serve through an RPC proxy (``--through-proxy``).
    key : the device key clients and the tracker match.
    tracker_addr : ``(host, port)`` of a tracker to register with (needs ``key``).
    load_library : shared libraries every session loads (list or colon-separated string).
    custom_addr : the address reported to the tracker.
    silent : do not echo the server's log to this process's stderr.
    no_fork : accepted for compatibility (sessions always run in a forked child).
    auth_token : require this secret from clients (Anvil clients only; passed to the child
        through its environment, never on its command line).
    binary : the ``anvil-rpc`` command (default: as ``PopenSession`` finds it).
    start_timeout : seconds to wait for the server to report its port.

    Raises RuntimeError naming the reason (and the server's last output) when it does not start.
    """

    def __init__(self, host="0.0.0.0", port=9091, port_end=9199, is_proxy=False, key="", tracker_addr=None,
                 load_library=None, custom_addr=None, silent=False, no_fork=False, auth_token=None, binary=None,
                 start_timeout=30.0):
        from . import _find_anvil_rpc

        path = binary or _find_anvil_rpc()
        if path is None:
            raise RuntimeError("Server: no anvil-rpc command found (build it, put it on PATH, set ANVIL_RPC_BIN, "
                               "or pass binary=)")
        if tracker_addr is not None and not key:
            raise ValueError("Server: tracker_addr needs a key")
        command = [os.fspath(path), "server", "--host", str(host), "--port", str(int(port)),
                   "--port-end", str(int(port_end))]
        if is_proxy:
            command.append("--through-proxy")
        if key:
            command += ["--key", str(key)]
        if tracker_addr is not None:
            command += ["--tracker", f"{tracker_addr[0]}:{int(tracker_addr[1])}"]
        if load_library:
            libs = load_library if isinstance(load_library, str) else ":".join(map(os.fspath, load_library))
            command += ["--load-library", libs]
        if custom_addr:
            command += ["--custom-addr", str(custom_addr)]
        if no_fork:
            command.append("--no-fork")
        env = dict(os.environ)
        if auth_token:
            env["ANVIL_RPC_AUTH_TOKEN"] = str(auth_token)

        self.host, self.port, self.key = str(host), None, key
        self._silent = silent
        self._tail = deque(maxlen=50)  # the server's last lines, for error messages
        self._bound = threading.Event()
        # Own process group, so terminate() also ends the forked session children.
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True, text=True, errors="replace")
        self._reader = threading.Thread(target=self._drain, name="anvil-rpc-server-log", daemon=True)
        self._reader.start()
        if is_proxy:
            self.port = int(port)  # dials out: nothing to wait for
            return
        deadline = time.monotonic() + start_timeout
        while not self._bound.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                reason = (f"exited with status {self.proc.returncode}" if self.proc.poll() is not None
                          else f"did not report its port within {start_timeout} s")
                self.terminate()
                raise RuntimeError(f"Server: anvil-rpc server {reason}; its output:\n" + "\n".join(self._tail))

    def _drain(self):
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self._tail.append(line)
            if not self._bound.is_set():
                match = _BIND_LINE.search(line)
                if match:
                    self.port = int(match.group(2))
                    self._bound.set()
            if not self._silent:
                print(line, file=sys.stderr, flush=True)

    @property
    def output(self):
        """The server's most recent log lines (up to 50)."""
        return "\n".join(self._tail)

    def terminate(self):
        """Stop the server and its session processes; wait for them. Safe to call twice."""
        proc = getattr(self, "proc", None)
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=5)
        except (ProcessLookupError, PermissionError):
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.terminate()

    def __del__(self):
        self.terminate()

    def __repr__(self):
        return f"<anvil.rpc.Server {self.host}:{self.port} key={self.key!r}>"

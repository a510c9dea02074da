# The tracker client (TVM's tvm.rpc.client.TrackerSession) in Python: a TCP connection, the 4-byte
# magic exchange, then one length-prefixed JSON request and its reply at a time (spec
# tvm-rpc-protocol.md §4.1-4.7). Unlike TVM, every wait can be bounded: `timeout` (seconds, None for
# none) applies to connecting and to each reply, REQUEST included. The codes come from the C++
# table (src/anvil/rpc/tracker_codes.def) through the bindings.
"""Tracker sessions: ask an RPC tracker for a server by device key."""
import json
import socket
import struct
import time

from .. import _ffi

RPC_TRACKER_MAGIC = _ffi.rpc.TRACKER_MAGIC  # src/anvil/rpc/tracker_codes.h
_MAX_REPLY = 64 << 20


class TrackerCode:
    """The tracker protocol's codes (TVM's ``TrackerCode``): ``TrackerCode.PUT``, ... ."""


# One list for C++ and Python: src/anvil/rpc/tracker_codes.def, read through the bindings.
for _name, _value in _ffi.rpc.tracker_codes().items():
    setattr(TrackerCode, _name, _value)
del _name, _value


def _recv_exact(sock, n):
    chunks = []
    while n > 0:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("the tracker closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class TrackerSession:
    """A connection to an RPC tracker (TVM's ``tvm.rpc.TrackerSession``).

    Parameters
    ----------
    addr : (str, int)
        The tracker's host and port.
    timeout : float or None
        Seconds to wait for a connection and for each reply (None: forever, as TVM does).
    """

    def __init__(self, addr, timeout=None):
        self._addr = (str(addr[0]), int(addr[1]))
        self._timeout = timeout
        self._sock = None
        self._connect()

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def _connect(self):
        sock = socket.create_connection(self._addr, timeout=self._timeout if self._timeout is not None else 60)
        try:
            sock.settimeout(self._timeout)
            sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
            magic = struct.unpack("<i", _recv_exact(sock, 4))[0]
            if magic != RPC_TRACKER_MAGIC:
                raise RuntimeError(f"{self._addr[0]}:{self._addr[1]} is not an RPC tracker")
        except BaseException:
            sock.close()
            raise
        self._sock = sock

    def close(self):
        """Close the connection to the tracker."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _call(self, request):
        if self._sock is None:
            self._connect()
        data = json.dumps(request).encode("ascii")
        self._sock.sendall(struct.pack("<i", len(data)) + data)
        size = struct.unpack("<i", _recv_exact(self._sock, 4))[0]
        if size <= 0 or size > _MAX_REPLY:
            raise RuntimeError(f"the tracker sent a reply of invalid size {size}")
        return json.loads(_recv_exact(self._sock, size).decode("utf-8"))

    def summary(self):
        """The tracker's SUMMARY: {"queue_info": {...}, "server_info": [...]}."""
        value = self._call([TrackerCode.SUMMARY])
        if not isinstance(value, list) or len(value) != 2 or value[0] != TrackerCode.SUCCESS:
            raise RuntimeError(f"Invalid return value {value!r}")
        return value[1]

    def text_summary(self):
        """The summary as text, laid out as ``python -m tvm.exec.query_rpc_tracker`` prints it."""
        data = self.summary()
        total_ct = {}
        res = "Server List\n"
        res += "------------------------------\n"
        res += "server-address           key\n"
        res += "------------------------------\n"
        for item in sorted(data["server_info"], key=lambda x: x["key"]):
            addr = item["addr"]
            res += "%-21s    " % ":".join(map(str, addr))
            res += item["key"] + "\n"
            parts = item["key"].split(":")
            key = parts[1] if len(parts) > 1 else ""
            total_ct[key] = total_ct.get(key, 0) + 1
        res += "------------------------------\n"
        res += "\n"
        queue_info = data["queue_info"]
        keys = sorted(queue_info.keys())
        max_key_len = max(len(k) for k in keys) if keys else 0
        res += "Queue Status\n"
        title = ("%%-%ds" % max_key_len + "   total  free  pending\n") % "key"
        separate_line = "-" * len(title) + "\n"
        res += separate_line + title + separate_line
        for k in keys:
            total = total_ct.get(k, 0)
            free, pending = queue_info[k]["free"], queue_info[k]["pending"]
            if total or pending:
                res += ("%%-%ds" % max_key_len + "   %-5d  %-4d  %-7d\n") % (k, total, free, pending)
        res += separate_line
        return res

    def request(self, key, priority=1, session_timeout=0, max_retry=5, session_constructor_args=None,
                auth_token=None):
        """Ask for a server with device key `key` and connect to it (an RPCSession).

        Waits until the tracker hands out a free server (bounded by the session's `timeout`).
        `auth_token` is passed to :func:`anvil.rpc.connect` (None: $ANVIL_RPC_AUTH_TOKEN when
        set). Raises RuntimeError("Cannot request <key> after <n> retry, last_error:...") when
        every try failed.
        """
        from . import connect

        last_err = None
        for _ in range(max_retry):
            try:
                if self._sock is None:
                    self._connect()
                value = self._call([TrackerCode.REQUEST, key, "", priority])
                if not isinstance(value, list) or len(value) != 2 or value[0] != TrackerCode.SUCCESS:
                    raise RuntimeError(f"Invalid return value {value!r}")
                url, port, matchkey = value[1]
                return connect(url, port, matchkey, session_timeout, session_constructor_args,
                               auth_token=auth_token)
            except (OSError, ValueError) as err:  # socket errors, timeouts, a malformed reply
                self.close()
                last_err = err
            except RuntimeError as err:  # e.g. the server already rotated its match key
                last_err = err
        raise RuntimeError(f"Cannot request {key} after {max_retry} retry, last_error:{last_err}")

    def request_and_run(self, key, func, priority=1, session_timeout=0, max_retry=2, auth_token=None):
        """Request a server for `key` and return ``func(session)``; when the run fails (the device
        dropped, an RPC error), request again, up to `max_retry` times."""
        last_err = None
        for _ in range(max_retry):
            tstart = time.time()
            try:
                sess = self.request(key, priority=priority, session_timeout=session_timeout,
                                    auth_token=auth_token)
                tstart = time.time()
                return func(sess)
            except (RuntimeError, OSError) as err:
                duration = time.time() - tstart
                if session_timeout and duration >= session_timeout * 0.95:
                    raise RuntimeError(
                        f"Session timeout when running {getattr(func, '__name__', func)}") from err
                last_err = err
        raise RuntimeError(f"Failed to run on {key} after {max_retry} retry, last_error:{last_err}")


def connect_tracker(url, port, timeout=None):
    """Connect to an RPC tracker (TVM's ``tvm.rpc.connect_tracker``); see TrackerSession."""
    return TrackerSession((url, port), timeout=timeout)

#!/usr/bin/env python3
"""How long a real client waits while slow-drip peers hold connections to an `anvil-rpc server`.

For each N in --peers (default 0 1 10 100): a fresh server on 127.0.0.1 with
`--handshake-timeout D` (default 2 s); N raw TCP peers connect and send a valid magic and a
4000-byte key length at once, then the key one byte every --gap seconds (default 0.5: each byte
well inside any per-read timeout, the whole never). While they are connected, a real client does
--tries handshakes in a row (magic, "client:" key, the server's SUCCESS reply: TVM's wire
format, raw sockets, no bindings needed) and, when the Python package is importable, one whole
session (`anvil.rpc.connect` + `rpc.test.addone`). Then the peers are watched until the
server closes them.

Rows: the client's handshake time (median, max, ms; a try that exceeds --client-timeout counts
as that long), its worst wait beyond a typical handshake (max minus the N = 0 median; the
target is < 1000 ms), a session's time, and how long the slow peers stayed connected (median, max, s)
against the deadline. Loopback only; every wait is bounded (a run takes about
len(peers) * (D + 2) seconds). Prints an aligned table and ends with one JSON line.

Usage: source scripts/env.sh && python3 bench/rpc_slow_handshake.py [--peers 0 1 10 100]
       [--deadline 2] [--gap 0.5] [--tries 5] [--binary path/to/anvil-rpc]
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAGIC = 0xFF271
SUCCESS = MAGIC


def find_anvil_rpc(explicit):
    for candidate in (explicit, os.environ.get("ANVIL_RPC_BIN"), shutil.which("anvil-rpc"),
                      str(ROOT / "build" / "bin" / "anvil-rpc")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


class ServerProcess:
    def __init__(self, binary, deadline_s):
        self.log = tempfile.NamedTemporaryFile(prefix="rpc-slow-hs-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            # `anvil-rpc server`, or a binary that is the server alone (the tests' server binary)
            [binary] + (["server"] if Path(binary).name == "anvil-rpc" else []) +
            ["--host", "127.0.0.1", "--port", "0", "--port-end", "0",
             "--handshake-timeout", str(deadline_s)],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        until = time.monotonic() + 20
        while time.monotonic() < until:
            m = re.search(r"bind to 127\.0\.0\.1:(\d+)", self.text())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("the server did not start:\n" + self.text())

    def text(self):
        return Path(self.log.name).read_text(errors="replace")

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=5)
        self.log.close()
        os.unlink(self.log.name)


class SlowPeer:
    """Sends a valid handshake header at once, then its 4000-byte key one byte per tick (the worst
    case for a per-read timeout: every byte comes well inside it)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setblocking(False)
        self.start = time.monotonic()
        self.closed_at = None
        self.sock.sendall(struct.pack("<ii", MAGIC, 4000))
        self.pending = b"client:" + b"k" * 3993
        self.sent = 0

    def check(self):
        if self.closed_at is not None:
            return True
        try:
            data = self.sock.recv(256)
            if data == b"":
                self.closed_at = time.monotonic()
        except BlockingIOError:
            pass
        except OSError:
            self.closed_at = time.monotonic()
        return self.closed_at is not None

    def tick(self):
        if self.check() or self.sent >= len(self.pending):
            return
        try:
            self.sent += self.sock.send(self.pending[self.sent:self.sent + 1])
        except BlockingIOError:
            pass
        except OSError:
            self.closed_at = time.monotonic()


class Dripper(threading.Thread):
    """Sends each peer's next byte every `gap` seconds, in the background, until stop()."""

    def __init__(self, peers, gap):
        super().__init__(daemon=True)
        self.peers, self.gap = peers, gap
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            for p in self.peers:
                p.tick()
            self.done.wait(self.gap)

    def stop(self):
        self.done.set()
        self.join()


def client_handshake_ms(port, timeout_s):
    """One real client's handshake: connect, magic + key, the server's reply. Milliseconds, or
    None when it took longer than timeout_s."""
    try:
        return _client_handshake_ms(port, timeout_s)
    except (socket.timeout, TimeoutError):
        return None


def _client_handshake_ms(port, timeout_s):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        key = b"client:"
        s.sendall(struct.pack("<ii", MAGIC, len(key)) + key)
        reply = b""
        while len(reply) < 8:
            chunk = s.recv(8 - len(reply))
            if not chunk:
                raise RuntimeError("the server closed the client's connection")
            reply += chunk
        code, length = struct.unpack("<ii", reply)
        if code != SUCCESS:
            raise RuntimeError(f"handshake answered {code:#x}")
        got = 0
        while got < length:
            got += len(s.recv(length - got))
    return (time.monotonic() - start) * 1000


def session_ms(port):
    try:
        from anvil import rpc
    except Exception:  # noqa: BLE001 - the bindings are optional for this benchmark
        return None
    start = time.monotonic()
    remote = rpc.connect("127.0.0.1", port)
    assert remote.get_function("rpc.test.addone")(41) == 42
    del remote
    return (time.monotonic() - start) * 1000


def measure(binary, n, deadline_s, gap, tries, client_timeout_s):
    server = ServerProcess(binary, deadline_s)
    peers = []
    dripper = None
    try:
        refused = 0
        for _ in range(n):
            try:
                peers.append(SlowPeer(server.port))
            except OSError:  # a server that does not accept (a full backlog): counted, not fatal
                refused += 1
        dripper = Dripper(peers, gap)
        dripper.start()
        time.sleep(0.2)
        times = [client_handshake_ms(server.port, client_timeout_s) for _ in range(tries)]
        timeouts = sum(1 for t in times if t is None)
        times = [client_timeout_s * 1000 if t is None else t for t in times]
        sess = session_ms(server.port) if timeouts == 0 else None
        connected_during = sum(1 for p in peers if not p.check())
        until = time.monotonic() + deadline_s + 5
        while time.monotonic() < until and not all(p.check() for p in peers):
            time.sleep(0.01)
        dripper.stop()
        open_s = [p.closed_at - p.start for p in peers if p.closed_at is not None]
        never = sum(1 for p in peers if p.closed_at is None)
        return {
            "peers": n,
            "peers_not_connected": refused,
            "client_ms_median": statistics.median(times),
            "client_ms_max": max(times),
            "client_timeouts": timeouts,
            "session_ms": sess,
            "peers_connected_during": connected_during,
            "peer_open_s_median": statistics.median(open_s) if open_s else None,
            "peer_open_s_max": max(open_s) if open_s else None,
            "peers_never_closed": never,
        }
    finally:
        if dripper is not None and dripper.is_alive():
            dripper.stop()
        for p in peers:
            p.sock.close()
        server.stop()


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", type=int, nargs="+", default=[0, 1, 10, 100])
    ap.add_argument("--deadline", type=float, default=2.0, help="--handshake-timeout of the server (s)")
    ap.add_argument("--gap", type=float, default=0.5, help="seconds between a slow peer's bytes")
    ap.add_argument("--tries", type=int, default=5)
    ap.add_argument("--client-timeout", type=float, default=10.0, help="s a client handshake may take")
    ap.add_argument("--binary")
    args = ap.parse_args()
    binary = find_anvil_rpc(args.binary)
    if binary is None:
        print("rpc_slow_handshake: no anvil-rpc binary (build first, or pass --binary)")
        sys.exit(1)
    if 0 not in args.peers:
        args.peers = [0] + args.peers
    rows = [measure(binary, n, args.deadline, args.gap, args.tries, args.client_timeout)
            for n in sorted(set(args.peers))]
    base = rows[0]["client_ms_median"]
    print(f"anvil-rpc server --handshake-timeout {args.deadline:g}; slow peers send 1 byte / {args.gap:g} s; "
          f"{args.tries} client handshakes per row; loopback")
    header = (f"{'slow peers':>10} {'still open':>10} {'client ms (med)':>15} {'client ms (max)':>15} "
              f"{'extra ms':>9} {'session ms':>10} {'peer open s (med)':>17} {'peer open s (max)':>17} "
              f"{'never closed':>12} {'not connected':>13} {'client timeouts':>15}")
    print(header)
    print("-" * len(header))
    for r in rows:
        r["extra_ms"] = r["client_ms_max"] - base  # the worst wait, over a typical handshake
        print(f"{r['peers']:>10} {r['peers_connected_during']:>10} {r['client_ms_median']:>15.2f} "
              f"{r['client_ms_max']:>15.2f} {r['extra_ms']:>9.2f} {fmt(r['session_ms'], '10.1f'):>10} "
              f"{fmt(r['peer_open_s_median'], '17.2f'):>17} {fmt(r['peer_open_s_max'], '17.2f'):>17} "
              f"{r['peers_never_closed']:>12} {r['peers_not_connected']:>13} {r['client_timeouts']:>15}")
    worst_extra = max(r["extra_ms"] for r in rows)
    worst_open = max((r["peer_open_s_max"] or 0.0) for r in rows)
    never = sum(r["peers_never_closed"] for r in rows)
    refused = sum(r["peers_not_connected"] for r in rows)
    timeouts = sum(r["client_timeouts"] for r in rows)
    ok = (worst_extra < 1000 and never == 0 and refused == 0 and timeouts == 0
          and worst_open < args.deadline + 1.0)
    print(f"target: extra wait < 1000 ms (worst {worst_extra:.1f} ms); slow peers closed by the deadline "
          f"{args.deadline:g} s (+1 s slack; worst {worst_open:.2f} s, never closed: {never}): "
          f"{'met' if ok else 'NOT met'}")
    summary = {"bench": "rpc_slow_handshake", "deadline_s": args.deadline, "gap_s": args.gap,
               "worst_extra_ms": round(worst_extra, 2), "worst_peer_open_s": round(worst_open, 3),
               "peers_never_closed": never, "peers_not_connected": refused, "client_timeouts": timeouts,
               "target_met": ok}
    for r in rows:
        summary[f"extra_ms_{r['peers']}"] = round(r["extra_ms"], 2)
        summary[f"peer_open_s_max_{r['peers']}"] = None if r["peer_open_s_max"] is None else round(r["peer_open_s_max"], 3)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

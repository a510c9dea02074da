#!/usr/bin/env python3
"""Anvil's RPC server and tracker against Apache TVM's, side by side in one run.

The same client drives both: TVM's Python client (tvm.rpc.connect, and TVM's tracker framing
helpers for the tracker), so only the server side differs. Rows:

  1. null-call round trip: `rpc.test.addone` called N times in a loop (us per call, median),
     and the CPU time the server's processes spent per call (from /proc/<pid>/task/*/schedstat,
     in ns, summed over the server and its session processes). Both servers are up at once and
     the timed blocks alternate (Anvil, TVM, TVM, Anvil, ...), so that a load change on a shared
     machine hits both sides alike;
  2. 64 MiB `upload` and `download` of a blob (MB/s, 1 MB = 10^6 bytes);
  3. a 64 MiB float32 tensor copied to the remote CPU (`tvm.runtime.tensor(a, remote.cpu())`)
     and back (`.numpy()`) (MB/s);
  4. tracker throughput: 100 fake servers registered (UPDATE_INFO + PUT, as a TVM server does),
     client threads each doing REQUEST, then the granted server "releases" itself with a fresh
     PUT, as a TVM server does after a session (request+release cycles per second). The
     client sockets set TCP_NODELAY (TVM's TrackerSession does not; see --client-nagle).

Servers and trackers listen on 127.0.0.1 only and are stopped (their whole process group) in
finally blocks. TVM's tracker needs `tornado` (`pip install tornado`); without it that row is
skipped with the reason printed. Prints an aligned table (ratio Anvil/TVM oriented so that > 1
means Anvil is better) and ends with one JSON line.

Usage: source scripts/env.sh && python3 bench/rpc_bench.py
"""
import argparse
import gc
import json
import os
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

import numpy as np

try:
    import tvm
    from tvm import rpc
    from tvm.rpc import base as tvm_base
    from tvm.rpc.base import TrackerCode
except Exception as err:  # noqa: BLE001 - no peer, nothing to compare against
    print(f"rpc_bench: cannot run, `import tvm` failed: {err!r}")
    sys.exit(0)

ROOT = Path(__file__).resolve().parents[1]
TRACKER_MAGIC = 0x2F271
KEY = "bench"
MB = 1e6
DEADLINE_S = 30  # no wait for a process to come up lasts longer than this


def find_anvil_rpc():
    env = os.environ.get("ANVIL_RPC_BIN")
    if env:
        return Path(env)
    found = shutil.which("anvil-rpc")
    if found:
        return Path(found)
    path = ROOT / "build" / "bin" / "anvil-rpc"
    return path if path.exists() else None


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """A server or tracker process in its own session (TVM's start a PopenWorker child that
    outlives the parent), output to a file (a full pipe would block it); stop() kills the group."""

    def __init__(self, name, cmd):
        self.name = name
        self.log = tempfile.NamedTemporaryFile(prefix=f"rpc-bench-{name}-", suffix=".log", delete=False)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)

    def text(self):
        return Path(self.log.name).read_text(errors="replace")

    def check_alive(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.text()}")

    def stop(self):
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        time.sleep(0.1)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # stragglers of the group
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.wait(timeout=5)
        self.log.close()
        os.unlink(self.log.name)


def wait_until(predicate, what, child):
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        child.check_alive()
        if predicate():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}:\n{child.text()}")


def can_connect(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def start_server(kind, anvil_bin):
    port = free_port()
    if kind == "anvil":
        cmd = [str(anvil_bin), "server", "--host", "127.0.0.1", "--port", str(port), "--port-end",
               str(port + 1), "--key", KEY]
    else:
        cmd = [sys.executable, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1", "--port", str(port),
               "--port-end", str(port + 1), "--key", KEY]
    child = Child(f"{kind}-server", cmd)
    try:
        # A bare connect is harmless to both: each drops a connection that sends no handshake.
        wait_until(lambda: can_connect(port), f"the {kind} server to listen", child)
    except BaseException:
        child.stop()
        raise
    return child, port


def start_tracker(kind, anvil_bin):
    port = free_port()
    if kind == "anvil":
        cmd = [str(anvil_bin), "tracker", "--host", "127.0.0.1", "--port", str(port), "--port-end",
               str(port + 1), "--silent"]
    else:
        cmd = [sys.executable, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(port),
               "--port-end", str(port + 1), "--silent"]
    child = Child(f"{kind}-tracker", cmd)

    def pings():
        try:
            conn = TrackerConn(port, timeout=2)
        except OSError:
            return False
        try:
            return conn.call([TrackerCode.PING]) == 0
        except (OSError, RuntimeError):
            return False
        finally:
            conn.close()

    try:
        wait_until(pings, f"the {kind} tracker to answer PING", child)
    except BaseException:
        child.stop()
        raise
    return child, port


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def tree_cpu_ns(root_pid):
    """CPU time (ns) of root_pid and all its descendants, every thread: /proc schedstat."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rpartition(")")[2].split()[1]), []).append(int(entry.name))
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total


def bench_null_calls(anvil_bin, args):
    """Both servers up at once, timed blocks alternating between them (see the module doc)."""
    kinds = ("anvil", "tvm")
    children, remotes, funcs = {}, {}, {}
    try:
        for kind in kinds:
            children[kind] = start_server(kind, anvil_bin)
            remotes[kind] = rpc.connect("127.0.0.1", children[kind][1], key=KEY)
            funcs[kind] = remotes[kind].get_function("rpc.test.addone")
            assert funcs[kind](41) == 42
        calls = args.calls
        wall = {k: [] for k in kinds}
        cpu = {k: [] for k in kinds}

        def block(kind):
            addone, pid = funcs[kind], children[kind][0].proc.pid
            cpu0 = tree_cpu_ns(pid)
            start = time.perf_counter()
            for i in range(calls):
                addone(i)
            elapsed = time.perf_counter() - start
            cpu1 = tree_cpu_ns(pid)
            return elapsed / calls * 1e6, (cpu1 - cpu0) / calls / 1e3

        for kind in kinds:
            block(kind)  # warm-up
        for r in range(args.repeats):
            for kind in (kinds if r % 2 == 0 else kinds[::-1]):
                w, c = block(kind)
                wall[kind].append(w)
                cpu[kind].append(c)
        for kind in kinds:
            print(f"null calls, {kind}: us/call per repeat {[round(x, 1) for x in wall[kind]]}, "
                  f"server CPU us/call {[round(x, 2) for x in cpu[kind]]}")
        return {kind: {"null_call_us": statistics.median(wall[kind]),
                       "null_call_server_cpu_us": statistics.median(cpu[kind])} for kind in kinds}
    finally:
        remotes.clear()
        funcs.clear()
        gc.collect()
        for child, _port in children.values():
            child.stop()


def bench_server(kind, anvil_bin, args):
    child, port = start_server(kind, anvil_bin)
    remote = None
    try:
        remote = rpc.connect("127.0.0.1", port, key=KEY)
        out = {}
        nbytes = args.mib << 20
        blob = np.random.default_rng(1).bytes(nbytes)
        remote.upload(bytearray(blob), target="blob.bin")  # warm-up + check
        assert bytes(remote.download("blob.bin")) == blob
        out["upload_MBps"] = nbytes / MB / timed(lambda: remote.upload(bytearray(blob), target="blob.bin"),
                                                 args.transfer_repeats)
        out["download_MBps"] = nbytes / MB / timed(lambda: remote.download("blob.bin"), args.transfer_repeats)
        del blob
        remote.remove("blob.bin")

        dev = remote.cpu(0)
        host = np.random.default_rng(2).random(nbytes // 4, dtype=np.float32)
        holder = [tvm.runtime.tensor(host, dev)]
        np.testing.assert_array_equal(holder[0].numpy(), host)

        def to_remote():
            holder[0] = None  # free the previous remote tensor first (bounded memory)
            holder[0] = tvm.runtime.tensor(host, dev)

        out["tensor_to_remote_MBps"] = nbytes / MB / timed(to_remote, args.transfer_repeats)
        out["tensor_from_remote_MBps"] = nbytes / MB / timed(lambda: holder[0].numpy(), args.transfer_repeats)
        holder.clear()
        del dev, host
        return out
    finally:
        remote = None
        gc.collect()
        child.stop()


class TrackerConn:
    """A tracker connection through TVM's own framing helpers (tvm.rpc.base)."""

    # TVM's TrackerSession leaves Nagle on; with it, the client's two writes per message (length,
    # then JSON) wait for the peer's delayed ACK (~40 ms) and every tracker measures ~90 cycles/s.
    # The bench turns Nagle off on its client sockets so that the tracker is what is measured;
    # --client-nagle restores TVM's client behaviour.
    nodelay = True

    def __init__(self, port, timeout=DEADLINE_S):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        if self.nodelay:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(struct.pack("<i", TRACKER_MAGIC))
        if struct.unpack("<i", tvm_base.recvall(self.sock, 4))[0] != TRACKER_MAGIC:
            raise RuntimeError("not a tracker")

    def call(self, msg):
        tvm_base.sendjson(self.sock, msg)
        return tvm_base.recvjson(self.sock)

    def close(self):
        self.sock.close()


class FakeServer:
    """Speaks the server side of the tracker protocol only: registers, offers itself, and
    'releases' itself (a fresh PUT with a new match key, as a TVM server after a session)."""

    def __init__(self, tracker_port, index):
        self.index = index
        self.port = 20000 + index  # reported only; nothing connects to it
        self.generation = 0
        self.lock = threading.Lock()
        self.conn = TrackerConn(tracker_port)
        assert self.conn.call([TrackerCode.UPDATE_INFO, {"key": f"server:{KEY}", "addr": [None, self.port]}]) == 0
        self.put()

    def put(self):
        with self.lock:
            self.generation += 1
            matchkey = f"{KEY}:s{self.index}g{self.generation}"
            reply = self.conn.call([TrackerCode.PUT, KEY, [self.port, matchkey], None])
            if reply != 0:
                raise RuntimeError(f"PUT answered {reply!r}")


def bench_tracker(kind, anvil_bin, args):
    child, port = start_tracker(kind, anvil_bin)
    servers, clients = [], []
    try:
        servers = [FakeServer(port, i) for i in range(args.servers)]
        probe = TrackerConn(port)
        clients.append(probe)

        def all_free():
            reply = probe.call([TrackerCode.SUMMARY])
            return reply[1]["queue_info"].get(KEY, {}).get("free") == args.servers

        wait_until(all_free, f"{args.servers} free servers", child)
        clients.extend(TrackerConn(port) for _ in range(args.threads))
        per_thread = args.cycles // args.threads
        total = per_thread * args.threads

        def one_round():
            errors = []
            start = threading.Barrier(args.threads + 1, timeout=DEADLINE_S)

            def worker(conn):
                try:
                    start.wait()
                    for _ in range(per_thread):
                        reply = conn.call([TrackerCode.REQUEST, KEY, "", 1])
                        if reply[0] != 0:
                            raise RuntimeError(f"REQUEST answered {reply!r}")
                        _, server_port, _matchkey = reply[1]
                        servers[server_port - 20000].put()  # the server's release
                except Exception as err:  # noqa: BLE001 - reported below
                    errors.append(repr(err))

            threads = [threading.Thread(target=worker, args=(c,), daemon=True) for c in clients[1:]]
            for t in threads:
                t.start()
            start.wait()
            began = time.perf_counter()
            for t in threads:
                t.join(timeout=120)
            elapsed = time.perf_counter() - began
            if errors or any(t.is_alive() for t in threads):
                raise RuntimeError(f"{kind} tracker round failed: {errors[:3]}")
            return elapsed

        one_round()  # warm-up
        times = [one_round() for _ in range(args.repeats)]
        wait_until(all_free, "all servers free again", child)
        return {"tracker_cycles_per_s": total / statistics.median(times)}
    finally:
        for conn in clients:
            conn.close()
        for server in servers:
            server.conn.close()
        child.stop()


ROWS = [  # key, label, unit, higher is better
    ("null_call_us", "null call round trip (rpc.test.addone)", "us/call", False),
    ("null_call_server_cpu_us", "server CPU per null call", "us/call", False),
    ("upload_MBps", "upload {mib} MiB blob", "MB/s", True),
    ("download_MBps", "download {mib} MiB blob", "MB/s", True),
    ("tensor_to_remote_MBps", "tensor {mib} MiB f32 -> remote", "MB/s", True),
    ("tensor_from_remote_MBps", "tensor {mib} MiB f32 <- remote", "MB/s", True),
    ("tracker_cycles_per_s", "tracker req+release, {servers} servers", "cycles/s", True),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per row (median)")
    parser.add_argument("--transfer-repeats", type=int, default=3,
                        help="timed repeats of each 64 MiB transfer row (median)")
    parser.add_argument("--calls", type=int, default=2000, help="null calls per repeat")
    parser.add_argument("--mib", type=int, default=64, help="blob / tensor size in MiB")
    parser.add_argument("--servers", type=int, default=100, help="fake servers on each tracker")
    parser.add_argument("--cycles", type=int, default=1000, help="request+release cycles per repeat")
    parser.add_argument("--threads", type=int, default=8, help="tracker client threads")
    parser.add_argument("--client-nagle", action="store_true",
                        help="leave Nagle on in the tracker client sockets, as TVM's TrackerSession does "
                             "(then ~40 ms delayed-ACK stalls bound both trackers)")
    parser.add_argument("--only", choices=["all", "null", "server", "tracker"], default="all",
                        help="rows to run (null: the null-call rows alone)")
    args = parser.parse_args()
    TrackerConn.nodelay = not args.client_nagle
    if args.mib > 256 or args.calls > 100000 or args.cycles > 100000 or args.repeats > 50 \
            or not 1 <= args.transfer_repeats <= 50 or args.repeats < 1 \
            or not 1 <= args.threads <= 64 or not 1 <= args.servers <= 1000:
        parser.error("keep the bench bounded: mib <= 256, calls/cycles <= 100000, repeats <= 50, "
                     "threads in [1, 64], servers in [1, 1000]")

    anvil_bin = find_anvil_rpc()
    if anvil_bin is None:
        print("rpc_bench: cannot run, no anvil-rpc binary (build it, source scripts/env.sh, or set ANVIL_RPC_BIN)")
        sys.exit(0)

    machine = f"{cpu_model()}, {os.cpu_count()} CPUs"
    print(f"machine: {machine}")
    print(f"anvil-rpc: {anvil_bin}; TVM {tvm.__version__}; client: tvm.rpc (Python {sys.version.split()[0]})")
    print(f"median of {args.repeats} repeats ({args.transfer_repeats} for transfers), after one warm-up; "
          f"{args.calls} null calls; {args.mib} MiB "
          f"payloads; tracker: {args.servers} servers, {args.cycles} cycles from {args.threads} threads, "
          f"client TCP_NODELAY {'off' if args.client_nagle else 'on'}")

    began = time.monotonic()
    results = {"anvil": {}, "tvm": {}}
    skipped = {}  # row key -> reason
    if args.only in ("all", "null", "server"):
        for kind, rows in bench_null_calls(anvil_bin, args).items():
            results[kind].update(rows)
    else:
        skipped.update({key: f"--only {args.only}" for key, *_ in ROWS[:2]})
    if args.only in ("all", "server"):
        results["anvil"].update(bench_server("anvil", anvil_bin, args))
        results["tvm"].update(bench_server("tvm", anvil_bin, args))
    else:
        skipped.update({key: f"--only {args.only}" for key, *_ in ROWS[2:-1]})
    if args.only in ("all", "tracker"):
        results["anvil"].update(bench_tracker("anvil", anvil_bin, args))
        try:
            import tornado  # noqa: F401 - TVM's tracker needs it
        except ImportError as err:
            reason = f"TVM's tracker needs tornado (pip install tornado): {err}"
            print(f"skipping TVM's tracker: {reason}")
            skipped["tracker_cycles_per_s"] = reason
        else:
            results["tvm"].update(bench_tracker("tvm", anvil_bin, args))
    else:
        skipped["tracker_cycles_per_s"] = f"--only {args.only}"

    print()
    header = f"{'row':<40} {'unit':>8} {'Anvil':>10} {'TVM':>10} {'Anvil/TVM':>10}"
    print(header)
    print("-" * len(header))
    summary = {"bench": "rpc", "machine": machine, "tvm": tvm.__version__, "repeats": args.repeats,
               "transfer_repeats": args.transfer_repeats}
    for key, label, unit, higher in ROWS:
        label = label.format(mib=args.mib, servers=args.servers)
        a, t = results["anvil"].get(key), results["tvm"].get(key)
        a_text = f"{a:>10.2f}" if a is not None else f"{'skipped':>10}"
        t_text = f"{t:>10.2f}" if t is not None else f"{'skipped':>10}"
        if a is not None:
            summary[f"anvil_{key}"] = round(a, 2)
        if t is not None:
            summary[f"tvm_{key}"] = round(t, 2)
        if a is None or t is None:
            print(f"{label:<40} {unit:>8} {a_text} {t_text} {'-':>10}")
            summary[f"skipped_{key}"] = skipped.get(key, "not measured")
            continue
        ratio = a / t if higher else t / a
        print(f"{label:<40} {unit:>8} {a_text} {t_text} {ratio:>9.2f}x")
        summary[f"ratio_{key}"] = round(ratio, 3)
    print("(Anvil/TVM > 1 means Anvil is better; for latency it is TVM's time over Anvil's)")
    summary["wall_s"] = round(time.monotonic() - began, 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

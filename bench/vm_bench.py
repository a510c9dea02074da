#!/usr/bin/env python3
# VM interpreter overhead seen from Python: the same 1,000-call chain of a C++ no-op as
# bench/vm_bench.cc, invoked through anvil.runtime.VirtualMachine, plus the fixed cost of one
# call from Python. Runs build/bin/bench_vm for the C++ figures, prints both tables and, as the
# very last line, one JSON line combining them.
#
#   PYTHONPATH=build/python python3 bench/vm_bench.py [--repeats N] [--invocations N]
"""Measure the VM's per-call overhead from Python and from C++ (via bench_vm)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import anvil
from anvil.runtime import ExecBuilder, VirtualMachine

NOP = "testing.nop"  # a C++ no-op registered by the runtime: [](Args) { return Value(); }


def build_program(chain):
    """main(x): `chain` calls of the no-op on x; empty(x): returns x."""
    b = ExecBuilder()
    with b.function("main", ["x"]):
        for _ in range(chain):
            b.emit_call(NOP, [b.reg(0)], dst=1)
        b.emit_ret(1)
    with b.function("empty", ["x"]):
        b.emit_ret(0)
    return b.get()


def measure(repeats, units, body):
    """Nanoseconds per unit: one warm-up, then `repeats` timed runs of body(); (median, min, max)."""
    body()
    per_unit = []
    for _ in range(repeats):
        begin = time.perf_counter_ns()
        body()
        per_unit.append((time.perf_counter_ns() - begin) / units)
    return statistics.median(per_unit), min(per_unit), max(per_unit)


def default_bench_vm():
    # <build>/python/anvil/__init__.py -> <build>/bin/bench_vm
    return Path(anvil.__file__).resolve().parents[2] / "bin" / "bench_vm"


def run_cpp(path, repeats, chain):
    """The JSON line of bench_vm, after echoing its table; None when it cannot run."""
    if not path.exists():
        print(f"(C++ figures skipped: {path} not found; build target bench_vm or pass --bench-vm)\n")
        return None
    out = subprocess.run([str(path), "--repeats", str(repeats), "--chain", str(chain)], check=True,
                         capture_output=True, text=True).stdout
    lines = out.rstrip("\n").splitlines()
    print("\n".join(lines[:-1]))
    return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=11, help="timed repeats per case (median reported)")
    parser.add_argument("--invocations", type=int, default=100, help="chain invocations per repeat")
    parser.add_argument("--chain", type=int, default=1000, help="no-op calls in the chain")
    parser.add_argument("--bench-vm", type=Path, default=None, help="path of the C++ bench_vm binary")
    parser.add_argument("--no-cpp", action="store_true", help="do not run the C++ benchmark")
    args = parser.parse_args()
    if min(args.repeats, args.invocations, args.chain) <= 0:
        parser.error("--repeats, --invocations and --chain must be positive")

    cpp = None if args.no_cpp else run_cpp(args.bench_vm or default_bench_vm(), args.repeats, args.chain)

    vm = VirtualMachine(build_program(args.chain))
    x = anvil.tensor(np.zeros(1, np.float32))
    main_fn, empty_fn, nop = vm["main"], vm["empty"], anvil.get_global_func(NOP)
    calls = args.chain * args.invocations
    n_invocations = args.invocations * 10

    def chain():
        for _ in range(args.invocations):
            main_fn(x)

    def empty():
        for _ in range(n_invocations):
            empty_fn(x)

    def direct():
        for _ in range(n_invocations):
            nop(x)

    rows = [
        ("VM chain of no-op calls, called from Python", "ns/call", measure(args.repeats, calls, chain)),
        ("VM invoke of an empty function from Python", "ns/invoke", measure(args.repeats, n_invocations, empty)),
        ("no-op Function called from Python", "ns/call", measure(args.repeats, n_invocations, direct)),
    ]
    print("VM interpreter overhead from Python")
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}; {args.repeats} repeats x {args.invocations} "
          f"invocations of a {args.chain}-call chain")
    print()
    print(f"{'case':<46} {'unit':<10} {'median':>10} {'min':>10} {'max':>10}")
    for name, unit, (med, lo, hi) in rows:
        print(f"{name:<46} {unit:<10} {med:>10.1f} {lo:>10.1f} {hi:>10.1f}")
    print()

    result = {"bench": "vm", "chain_length": args.chain, "repeats": args.repeats,
              "ns_per_call_cpp": None, "ns_per_call_python": round(rows[0][2][0], 1),
              "ns_per_invoke_python": round(rows[1][2][0], 1), "ns_per_ffi_call_python": round(rows[2][2][0], 1)}
    if cpp is not None:
        for key in ("ns_per_call_cpp", "ns_per_call_baseline", "vm_overhead_ns_per_call", "ns_per_builtin_copy",
                    "ns_per_instruction_loop", "ns_per_invoke_empty", "machine"):
            result[key] = cpp.get(key)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
